package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"persistlab/calibrate"
	"persistlab/internal/cgroup"
	"persistlab/lab/instance"
	"persistlab/profile"
)

// probeArgs is a short probe: the fewest batches and rounds the probe takes.
var probeArgs = []string{"--repeats", strconv.Itoa(calibrate.MinProbeRepeats), "--fs-ops", strconv.Itoa(calibrate.MinFSOps)}

var (
	probeOnce sync.Once
	probeFile string
	probeErr  string
)

// aProbeFile is a probe of this machine, run once for the tests that only read one; it lies
// beside the test's binary, which TestMain removes.
func aProbeFile(t *testing.T) string {
	t.Helper()
	probeOnce.Do(func() {
		probeFile = filepath.Join(filepath.Dir(binary), "here-probe.json")
		if _, stderr, err := persistlab(t, append([]string{"probe", "--out", probeFile}, probeArgs...)...); err != nil {
			probeErr = err.Error() + ": " + stderr
		}
	})
	if probeErr != "" {
		t.Fatalf("probe: %s", probeErr)
	}
	return probeFile
}

// The probe writes in a directory of its own in --dir and nothing else there; at the end that
// directory is gone and what was in --dir is there, untouched. Its file is a probe
// calibrate instance reads, and it says what it does before it does it.
func TestProbeWritesOnlyInItsOwnDirectory(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(keep, []byte("the user's own file"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(keep, past, past); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "p.json")
	cmd := exec.Command(binary, append([]string{"probe", "--dir", dir, "--out", out}, probeArgs...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	seen := map[string]bool{}
	var err error
	for running := true; running; {
		select {
		case err = <-done:
			running = false
		case <-time.After(2 * time.Millisecond):
		}
		for _, name := range names(t, dir) {
			seen[name] = true
		}
	}
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for name := range seen {
		if name != "keep.txt" && !strings.HasPrefix(name, "persistlab-probe-") {
			t.Errorf("the probe wrote %s in --dir, beside its own directory", name)
		}
	}
	if got := names(t, dir); !slices.Equal(got, []string{"keep.txt"}) {
		t.Errorf("--dir holds %v after the probe", got)
	}
	st, err := os.Stat(keep)
	data, _ := os.ReadFile(keep)
	if err != nil || !st.ModTime().Equal(past) || string(data) != "the user's own file" {
		t.Errorf("keep.txt changed: %v %v %q", err, st.ModTime(), data)
	}
	p, err := calibrate.ReadProbe(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.FS.Ops != calibrate.MinFSOps || !strings.Contains(stdout.String(), dir) || strings.Index(stdout.String(), "file system:") > strings.Index(stdout.String(), "ANSWER") {
		t.Errorf("ops %d; stdout:\n%s", p.FS.Ops, stdout.String())
	}
}

// calibrate instance refuses a probe file that is not one (too large, another schema, a NaN
// figure), naming the field, and an --out that exists unless --force; a target as fast as this
// machine (its own probe) gives cpu_factor 1, and a run would change nothing.
func TestCalibrateInstanceRefusesBadInput(t *testing.T) {
	here := aProbeFile(t)
	data, err := os.ReadFile(here)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(work, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	nan := bytes.Replace(data, []byte(`"effective_cpus": `), []byte(`"effective_cpus": NaN, "x": `), 1)
	for _, c := range []struct {
		name, file string
		want       []string
	}{
		{"too large", write("big.json", append(slices.Clone(data), bytes.Repeat([]byte(" "), calibrate.MaxProbeFileBytes)...)), []string{"--target", "larger than 256 KiB"}},
		{"another schema", write("results.json", []byte(`{"schema": "persistlab.results/2", "cells": []}`)), []string{"--target", "schema", "persistlab.results/2", "want persistlab.probe/1"}},
		{"NaN", write("nan.json", nan), []string{"--target", `field "effective_cpus"`, "NaN"}},
	} {
		_, stderr, err := persistlab(t, "calibrate", "instance", "--target", c.file, "--here", here, "--out", filepath.Join(work, c.name+".yaml"))
		for _, w := range c.want {
			if err == nil || !strings.Contains(stderr, w) {
				t.Errorf("%s: %v, stderr %q lacks %q", c.name, err, stderr, w)
			}
		}
	}
	existing := write("existing.yaml", []byte("the user's"))
	if _, stderr, err := persistlab(t, "calibrate", "instance", "--target", here, "--here", here, "--out", existing); err == nil || !strings.Contains(stderr, "--out") || !strings.Contains(stderr, "--force") {
		t.Errorf("an existing --out: %v %s", err, stderr)
	}
	if got, _ := os.ReadFile(existing); string(got) != "the user's" {
		t.Errorf("the existing --out changed: %q", got)
	}
	stdout, stderr, err := persistlab(t, "calibrate", "instance", "--target", here, "--here", here, "--out", existing, "--force")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	p, err := profile.Load(existing)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != "instance" || p.Options()[instance.CPUFactorOption] != "1.00" || p.Reference == nil || !strings.Contains(stdout, "changes nothing: the target is as fast as this machine") {
		t.Errorf("its own probe as the target: %+v\n%s", p, stdout)
	}
	if strings.Contains(stdout, "quota gives") || strings.Contains(stdout, "lone request") {
		t.Errorf("caveats of a quota where a run applies none:\n%s", stdout)
	}
}

// The probe run under a CPU limit of half a CPU (the period a run uses for that quota) is about
// twice as slow as the same probe without: calibrate instance recovers a factor of at least 1.6,
// and a quota a run would apply no more than quotaSlack (15%) over the limit the probe ran under. The machine is
// shared: each try probes here, under the limit, and here again, and counts only when the two
// probes here agree within 10% at every unit size and the probe under the limit had at least 90%
// of its limit's CPU time (the machine held still, and gave it the known limit); without such a
// try in 4 the test is skipped, saying why.
func TestCalibrateInstanceRecoversAKnownSlowdown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a cpu cgroup is made by root only")
	}
	if err := cgroup.CheckCPU(); err != nil {
		t.Skip(err)
	}
	const cpus, steady, fullQuota, tries, quotaSlack = 0.5, 0.10, 0.9, 4, 0.15
	work := t.TempDir()
	limit, err := cgroup.NewCPU("persistlab-test-slow-"+strconv.Itoa(os.Getpid()), cpus, instance.Period(cpus), work)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := limit.Remove(); err != nil {
			t.Error(err)
		}
	}()
	args := []string{"--repeats", "7", "--fs-ops", strconv.Itoa(calibrate.MinFSOps), "--force"}
	// probe runs the probe and returns it with the CPUs' worth of time it had: its CPU time over
	// its wall time.
	probe := func(out string, wrap []string) (*calibrate.Probe, float64) {
		t.Helper()
		argv := append(append(wrap, binary, "probe", "--out", out), args...)
		cmd := exec.Command(argv[0], argv[1:]...)
		start := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("probe %s: %v\n%s", strings.Join(argv, " "), err, b)
		}
		had := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds() / time.Since(start).Seconds()
		p, err := calibrate.ReadProbe(out)
		if err != nil {
			t.Fatal(err)
		}
		return p, had
	}
	var seen []string
	for try := 1; try <= tries; try++ {
		fast, slow, again, out := filepath.Join(work, "fast.json"), filepath.Join(work, "slow.json"), filepath.Join(work, "again.json"), filepath.Join(work, "slow.yaml")
		before, _ := probe(fast, nil)
		sp, had := probe(slow, limit.Wrap())
		after, _ := probe(again, nil)
		if sp.Machine.CgroupCPULimit != cpus {
			t.Errorf("the probe under the limit read its limit as %g CPUs (%s), want %g", sp.Machine.CgroupCPULimit, sp.Machine.CgroupCPUMax, cpus)
		}
		// Less CPU time than its limit: other work kept it from its quota, and it ran slower
		// than the known limit would make it.
		full := had / cpus
		drift := worstDrift(before, after)
		if drift > steady || full < fullQuota {
			seen = append(seen, fmt.Sprintf("try %d: the probes here differ by %.0f%%, the one under the limit had %.0f%% of its limit's CPU time", try, 100*drift, 100*full))
			t.Logf("%s (want at most %.0f%% and at least %.0f%%): the machine moved, not counted", seen[len(seen)-1], 100*steady, 100*fullQuota)
			continue
		}
		stdout, stderr, err := persistlab(t, "calibrate", "instance", "--target", slow, "--here", fast, "--out", out, "--force")
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		t.Logf("try %d: the probes here agree within %.0f%%, the one under the limit had %.0f%% of its limit's CPU time\n%s", try, 100*drift, 100*full, stdout)
		if !strings.Contains(stdout, "held out: the 8-row unit of CPU work took") || !strings.Contains(stdout, "error ") {
			t.Errorf("no held-out point printed:\n%s", stdout)
		}
		p, err := profile.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := strconv.ParseFloat(p.Options()[instance.CPUFactorOption], 64)
		emu, err := instance.EmulationOf(p.Options())
		if err != nil {
			t.Fatal(err)
		}
		// A limit can only slow the work: the factor is at least about 1/cpus, and the quota a run
		// applies no more than the limit. How much more it slows is this machine's: quiet, the quota
		// came within 15% (0.472, 0.448, 0.505 CPUs); beside a busy core in CI the probe's runtime
		// threads took more of its quota (0.417, a factor of 2.40); on an AMD EPYC VM the probe had
		// all of its quota and still took 2.96 times as long (0.338 CPUs): CFS throttling slowed
		// the work itself. Without the limit it would give 1 CPU or more.
		if f < 1.6 || emu.Quota > cpus*(1+quotaSlack) {
			t.Errorf("under %g CPU: cpu_factor %g (want at least 1.6), a run's quota %g CPUs (want at most %g, %.0f%% over the limit)", cpus, f, emu.Quota, cpus*(1+quotaSlack), 100*quotaSlack)
		}
		return
	}
	t.Skipf("no try of %d with the probes here steady within %.0f%% and the one under the limit given its CPU time (%s): the machine was too busy to tell a known slowdown from its own noise", tries, 100*steady, strings.Join(seen, "; "))
}

// worstDrift is the largest relative difference between two probes' one-thread times, over the
// unit sizes.
func worstDrift(a, b *calibrate.Probe) float64 {
	worst := 0.0
	for i := range a.CPU.Sizes {
		worst = max(worst, math.Abs(b.CPU.Sizes[i].MsPerUnit/a.CPU.Sizes[i].MsPerUnit-1))
	}
	return worst
}

// The Cloud Run job runs the probe as written: its arguments are flags persistlab probe takes
// (run here, its --out moved from the job's volume to a directory of the test's), its probe file
// lands on a mounted volume, and the probe image's entrypoint is persistlab.
func TestDeployProbeJobRunsTheProbe(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "probe-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Template struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Args         []string `yaml:"args"`
								VolumeMounts []struct {
									Name      string `yaml:"name"`
									MountPath string `yaml:"mountPath"`
								} `yaml:"volumeMounts"`
							} `yaml:"containers"`
							Volumes []struct {
								Name string `yaml:"name"`
							} `yaml:"volumes"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	task := j.Spec.Template.Spec.Template.Spec
	if j.Kind != "Job" || len(task.Containers) != 1 || len(task.Containers[0].VolumeMounts) != 1 || len(task.Volumes) != 1 {
		t.Fatalf("probe-job.yaml: %+v", j)
	}
	c := task.Containers[0]
	mount := c.VolumeMounts[0]
	if mount.Name != task.Volumes[0].Name {
		t.Errorf("the container mounts volume %s; the job has %s", mount.Name, task.Volumes[0].Name)
	}
	i := slices.Index(c.Args, "--out")
	if len(c.Args) == 0 || c.Args[0] != "probe" || i < 0 || i+1 >= len(c.Args) || !strings.HasPrefix(c.Args[i+1], mount.MountPath+"/") {
		t.Fatalf("args %q: want probe --out FILE under %s", c.Args, mount.MountPath)
	}
	args := slices.Clone(c.Args)
	local := t.TempDir()
	args[i+1] = local + strings.TrimPrefix(args[i+1], mount.MountPath)
	if _, stderr, err := persistlab(t, args...); err != nil {
		t.Fatalf("persistlab %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if _, err := calibrate.ReadProbe(args[i+1]); err != nil {
		t.Error(err)
	}
	docker, err := os.ReadFile(filepath.Join("..", "..", "deploy", "probe.Dockerfile"))
	if err != nil || !strings.Contains(string(docker), `ENTRYPOINT ["persistlab"]`) || !strings.Contains(string(docker), "./cmd/persistlab") {
		t.Errorf("probe.Dockerfile: %v", err)
	}
}

// --out - prints the probe alone on standard output, as one line (one entry of a job's log), and
// its plan and answer on standard error.
func TestProbeToStandardOutputIsOneLine(t *testing.T) {
	stdout, stderr, err := persistlab(t, append([]string{"probe", "--out", "-"}, probeArgs...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "\n") {
		t.Errorf("stdout is not one line:\n%s", stdout)
	}
	if _, err := calibrate.ParseProbe([]byte(stdout), "stdout"); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stderr, "persistlab probe:") || !strings.Contains(stderr, "ANSWER") {
		t.Errorf("stderr lacks the plan or the answer:\n%s", stderr)
	}
}
