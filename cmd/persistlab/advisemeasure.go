package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"persistlab/advise"
	"persistlab/internal/proc"
	"persistlab/lib/readfile"
	"persistlab/profile"
	"persistlab/report"
	"persistlab/results"
	"persistlab/runner"
	"persistlab/scenario"
)

// measure runs one of a candidate's scenarios (steady or crash) into the advise directory, or
// reuses what an earlier advise run measured there with the same scenario.
func (f *adviseFlags) measure(ctx context.Context, p *advise.Plan, c advise.Candidate, kind string) (*results.Results, string, error) {
	data, err := p.YAML(c, kind)
	if err != nil {
		return nil, "", err
	}
	base := filepath.Join(f.dir, c.Name+"."+kind)
	yamlPath, outPath := base+".yaml", base+".json"
	if res := reusable(yamlPath, outPath, data, f.profile); res != nil {
		fmt.Fprintf(os.Stderr, "%s %s: measured before with the same scenario (%s): not run again\n", c.Name, kind, outPath)
		return res, outPath, nil
	}
	if f.noRun {
		fmt.Fprintf(os.Stderr, "%s %s: not measured in %s (--no-run)\n", c.Name, kind, f.dir)
		return nil, "", nil
	}
	if err := os.WriteFile(yamlPath, data, 0o644); err != nil {
		return nil, "", err
	}
	fmt.Fprintf(os.Stderr, "%s %s: persistlab run %s\n", c.Name, kind, yamlPath)
	res, err := runScenarioFile(ctx, yamlPath, outPath, f.profile, p.App.Workload.Dir)
	return res, outPath, err
}

// reusable is an earlier advise run's results for the same scenario under the same profile
// (profilePath's figures, or none), complete and without a failed cell; nil otherwise.
func reusable(yamlPath, outPath string, want []byte, profilePath string) *results.Results {
	had, err := readfile.Regular(yamlPath, scenario.MaxScenarioBytes)
	if err != nil || !bytes.Equal(had, want) {
		return nil
	}
	res, err := results.Load(outPath)
	if err != nil || res.Error != "" {
		return nil
	}
	if failed, _ := report.Verdict(res); failed > 0 {
		return nil
	}
	if res.Scenario == nil || (res.Scenario.Crash == nil && len(res.Aggregates) == 0) || (res.Scenario.Crash != nil && len(res.CrashSummaries) == 0) {
		return nil
	}
	if !sameProfile(res.Scenario.ProfileUsed, profilePath) {
		return nil
	}
	return res
}

// sameProfile says whether a run that took used (nil: no profile) ran with the figures of the
// profile at path ("": none): the same figures, wherever the file now lies.
func sameProfile(used *profile.Use, path string) bool {
	if path == "" || used == nil {
		return path == "" && used == nil
	}
	now, err := profile.Load(path)
	if err != nil {
		return false
	}
	a, errA := json.Marshal(now)
	b, errB := json.Marshal(used.Profile)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// runScenarioFile runs a scenario file as persistlab run does (its own work directory, the
// processes it starts recorded and stopped), into out, and shows only the progress line.
func runScenarioFile(ctx context.Context, path, out, profilePath, workloadDir string) (*results.Results, error) {
	_, f := newRunFlags()
	f.scenario, f.out, f.force, f.profile, f.workloadDir = path, out, true, profilePath, workloadDir
	f.exports.format = "json" // what run would say on standard output goes to standard error: advise's output is its own
	c := &runCmd{f: f}
	if err := c.makePlans(); err != nil {
		return nil, err
	}
	release, err := c.claimOutputs()
	if err != nil {
		return nil, err
	}
	defer release()
	lock, err := c.lockWorkDir()
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	proc.NotifyStarts(lock.Record)
	defer proc.NotifyStarts(nil)
	c.progress, c.progressWidth = progressTo(os.Stderr)
	res, runErr := runner.RunPlan(ctx, c.plan, c.options(c.outPath, c.dir, ""))
	failed := 0
	if res != nil {
		failed, _ = report.Verdict(res)
	}
	c.leaveWorkDir(lock, failed > 0)
	if runErr == nil && failed > 0 {
		runErr = fmt.Errorf("%d cell(s) failed: persistlab report %s", failed, report.ShellWord(c.outPath))
	}
	if runErr != nil && errors.Is(runErr, fs.ErrNotExist) {
		return res, fmt.Errorf("%w (persistlab run %s shows it whole)", runErr, path)
	}
	return res, runErr
}
