package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"persistlab/calibrate"
	"persistlab/internal/leftover"
	"persistlab/lib/readfile"
	"persistlab/report"
	"persistlab/results"
)

func cmdClean(args []string) error {
	fs := newFlags("clean")
	dryRun := fs.Bool("dry-run", false, "list what would be removed, remove nothing")
	dirs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	dead := leftover.Find([]string{os.TempDir()}, dirs)
	probes, untrusted := calibrate.FindDeadProbes(os.TempDir())
	if len(dead) == 0 && len(probes) == 0 && len(untrusted) == 0 {
		fmt.Printf("no leftovers of killed runs or bucket probes in %s (a run's --workdir elsewhere: persistlab clean DIR)\n", os.TempDir())
		return nil
	}
	out := terminalSafe(os.Stdout)
	var failed []string
	for _, why := range untrusted {
		fmt.Fprintf(out, "%s\n", why)
	}
	for _, d := range probes {
		if err := cleanProbe(out, d, *dryRun); err != nil {
			failed = append(failed, err.Error())
		}
		d.Close()
	}
	for _, d := range dead {
		describe(out, d)
		if !*dryRun && d.Made { // what persistlab did not make is only described
			if err := clean(d); err != nil {
				failed = append(failed, err.Error())
			}
		}
		d.Close()
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d left: %s", len(failed), strings.Join(failed, "; "))
	}
	return nil
}

// describe prints what a dead run left.
func describe(w io.Writer, d leftover.Dead) {
	fmt.Fprintf(w, "%s: killed run (pid %d, started %s)", d.Dir, d.Run.PID, d.Run.Started.Format("2006-01-02 15:04:05"))
	if !d.Made {
		fmt.Fprintln(w, ", in a directory its lock does not say persistlab made: left alone")
		return
	}
	if len(d.Mounts) > 0 {
		fmt.Fprintf(w, ", %d mount(s)", len(d.Mounts))
	}
	if len(d.Loops) > 0 {
		fmt.Fprintf(w, ", loop device(s) %v", d.Loops)
	}
	if len(d.Processes) > 0 {
		fmt.Fprintf(w, ", %d process(es) %v", len(d.Processes), d.Processes)
	}
	if len(d.Cgroups) > 0 {
		fmt.Fprintf(w, ", cgroup(s) %v (what runs in them is stopped)", d.Cgroups)
	}
	if len(d.PageOut) > 0 {
		fmt.Fprintf(w, ", page-out policies it paused and did not turn on again: %s", strings.Join(d.PageOut, "; "))
	}
	if len(d.Strays) > 0 {
		fmt.Fprintf(w, ", %d process(es) %v left running: in the process group of a recorded process that has ended, whose id may be another's by now", len(d.Strays), d.Strays)
	}
	fmt.Fprintln(w)
}

// clean removes a dead run's leftovers and marks its results file, if it still says running.
func clean(d leftover.Dead) error {
	if err := d.Clean(); err != nil {
		return err
	}
	if d.Run.Out == "" {
		return nil
	}
	if _, err := os.Stat(d.Run.Out); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// The killed run's lock is free (its process is gone); a live run that took the file since
	// holds it, and then the file is not ours to mark. Taking it also removes the stale lock file.
	unlock, err := results.Lock(d.Run.Out)
	if err != nil {
		fmt.Printf("%s: not marked: %v\n", d.Run.Out, err)
		return nil
	}
	defer unlock()
	r, err := report.Load(d.Run.Out)
	if err != nil {
		fmt.Printf("%s: not marked: %v\n", d.Run.Out, err)
		return nil
	}
	if r.Status != results.StatusRunning {
		return nil
	}
	r.Status = results.StatusInterrupted
	r.Error = "the run was killed; persistlab clean removed what it left"
	if err := r.Save(d.Run.Out, report.Summarize); err != nil {
		return err
	}
	fmt.Printf("%s: marked %s\n", d.Run.Out, r.Status)
	return nil
}

// cleanProbe deletes the objects a killed bucket probe's record names, with the credentials the
// probe used (its key file, read again, or Application Default Credentials), and removes the
// record once nothing it names is left. What it cannot delete it names.
func cleanProbe(w io.Writer, d calibrate.DeadProbe, dryRun bool) error {
	rec := d.Record
	fmt.Fprintf(w, "%s: killed bucket probe (pid %d, started %s): up to %d objects under gs://%s/%s at %s\n",
		d.Path, rec.PID, rec.Started.Format("2006-01-02 15:04:05"), len(rec.Objects), rec.Bucket, rec.Prefix, rec.Endpoint)
	if dryRun {
		return nil
	}
	byHand := fmt.Sprintf("delete them yourself (gcloud storage rm 'gs://%s/%s**'), then the record", rec.Bucket, rec.Prefix)
	client, err := calibrate.NewClient(nil, rec.Endpoint, rec.Bucket)
	if err != nil {
		return fmt.Errorf("%s: %w; %s", d.Path, err, byHand)
	}
	var keyData []byte
	if rec.KeyFile != "" {
		if keyData, err = readfile.Regular(rec.KeyFile, maxKeyFileBytes); err != nil {
			return fmt.Errorf("%s: the probe's key file: %w; %s", d.Path, err, byHand)
		}
	}
	secrets := &redactor{}
	secrets.addKeyFile(keyData)
	w = secrets.writer(w)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	transport, _, err := credentials(ctx, client.Host(), rec.KeyFile, keyData, secrets)
	if err != nil {
		return secrets.err(fmt.Errorf("%s: %w; %s", d.Path, err, byHand))
	}
	client.HTTP = &http.Client{Transport: transport, Timeout: time.Minute}
	deleted, left := calibrate.CleanupDead(ctx, client, rec)
	if len(left) > 0 {
		writeLeftovers(w, client, deleted, left)
		return fmt.Errorf("%s: %d object(s) left (named above); the record stays", d.Path, len(left))
	}
	if err := d.Remove(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: the %d objects it recorded are deleted or were never written; nothing left under gs://%s/%s; record removed\n", d.Path, deleted, rec.Bucket, rec.Prefix)
	return nil
}

// warnOfLeftovers tells, at a run's start, of killed runs' leftovers, and cleans those in the
// work directory the user chose again (only what persistlab made there).
func warnOfLeftovers(workDir string) error {
	var dirs []string
	if workDir != "" {
		dirs = append(dirs, workDir)
	}
	var others int
	for _, d := range leftover.Find([]string{os.TempDir()}, dirs) {
		if workDir != "" && d.Made && (sameDir(d.Dir, workDir) || sameDir(filepath.Dir(d.Dir), workDir)) {
			fmt.Fprintf(terminalSafe(os.Stderr), "persistlab: %s holds a killed run's leftovers; cleaning what that run made first\n", d.Dir)
			err := clean(d)
			d.Close()
			if err != nil {
				return fmt.Errorf("--workdir %s: %w", workDir, err)
			}
			continue
		}
		if d.Made {
			others++
		}
		if d.Made && len(d.PageOut) > 0 { // this run would measure a machine its owner did not leave so
			fmt.Fprintf(terminalSafe(os.Stderr), "persistlab: warning: a killed run (%s) paused this machine's page-out policies and did not turn them on again: %s; persistlab clean restores them\n",
				d.Dir, strings.Join(d.PageOut, "; "))
		}
		d.Close()
	}
	if others > 0 {
		fmt.Fprintf(os.Stderr, "persistlab: warning: %d work directories of killed runs are left (see persistlab clean --dry-run; persistlab clean removes them)\n", others)
	}
	return nil
}

func sameDir(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}
