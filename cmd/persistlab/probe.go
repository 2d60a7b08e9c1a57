package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/calibrate"
	"persistlab/report"
	"persistlab/results"
)

// cmdProbe runs the instance probe on this machine (a user's target: a VM, a Cloud Run job) and
// writes what it measured, for persistlab calibrate instance.
func cmdProbe(ctx context.Context, args []string) error {
	fs := newFlags("probe")
	out := fs.String("out", "", "the probe file to write (default: a new persistlab-probe-HOST-TIME.json here; - for standard output, everything else then on standard error)")
	force := fs.Bool("force", false, "replace an existing --out file")
	plan := calibrate.DefaultProbePlan()
	fs.StringVar(&plan.Dir, "dir", "", "time the file system calls in a directory the probe makes in this one (default: the system's temporary directory); it writes only there, and removes it")
	fs.StringVar(&plan.FUSEDir, "fuse-dir", "", "time the same calls on a FUSE mount too (a Cloud Storage volume: each call is then a bucket request, see --fuse-ops)")
	fs.IntVar(&plan.Repeats, "repeats", plan.Repeats, "timed batches of each unit of CPU work (their median is the figure)")
	fs.IntVar(&plan.FSOps, "fs-ops", plan.FSOps, "rounds of create, fsync, rename, stat and unlink in --dir")
	fs.IntVar(&plan.FUSEOps, "fuse-ops", plan.FUSEOps, "rounds of the same calls in --fuse-dir")
	fs.DurationVar(&plan.MaxTime, "max-time", plan.MaxTime, "stop with an error past this (a machine too slow for the fixed work)")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return fmt.Errorf("want flags only, not %q", positional[0])
	}
	if err := plan.Check(); err != nil {
		return err
	}
	for _, d := range []struct{ flag, dir string }{{"--dir", plan.Dir}, {"--fuse-dir", plan.FUSEDir}} {
		if d.dir == "" {
			continue
		}
		if err := writableDir(d.flag, d.dir); err != nil {
			return err
		}
	}
	stdout, stderr := terminalSafe(os.Stdout), terminalSafe(os.Stderr)
	outPath := ""
	if *out == "-" {
		stdout = stderr // the probe's JSON alone on standard output
	} else {
		if *out == "" {
			host, _ := os.Hostname()
			*out = fmt.Sprintf("persistlab-probe-%s-%s.json", safeName(host), time.Now().UTC().Format("20060102-150405"))
		}
		if outPath, err = results.OutputPath("--out", *out, *force); err != nil {
			return err
		}
	}
	plan.Progress = stderr
	writeProbePlan(stdout, plan)
	p, err := calibrate.RunProbe(ctx, plan)
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: 130, err: fmt.Errorf("interrupted: no probe file written (the probe's own directory was removed)")}
		}
		return fmt.Errorf("the probe failed, no probe file written: %w", err)
	}
	if err := p.Check("this probe"); err != nil {
		return fmt.Errorf("the probe measured something it cannot record: %w", err)
	}
	writeProbeAnswer(stdout, p)
	if outPath == "" { // one line: one entry of a job's log
		data, err := json.Marshal(p)
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(append(data, '\n'))
		return err
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if err := writeFileAtomically(outPath, data); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "probe: %s (persistlab calibrate instance --target %s, on the machine your runs use)\n", outPath, report.ShellWord(outPath))
	return nil
}

// writableDir checks, touching nothing, that dir is a directory the probe can make its own in.
func writableDir(flag, dir string) error {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: not a directory: want an existing directory the probe can make its own directory in", flag, dir)
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("%s %s: cannot write there (%v): want a directory you can write; nothing was written", flag, dir, err)
	}
	return nil
}

// writeFileAtomically writes data beside path and renames it over, so that an interrupted write
// leaves no half file.
func writeFileAtomically(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".persistlab-*.tmp")
	if err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// writeProbePlan prints, before the first unit of work, what the probe does and writes.
func writeProbePlan(w io.Writer, plan calibrate.ProbePlan) {
	dir := plan.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	fmt.Fprintf(w, "persistlab probe: fixed reference work, timed on this machine; no network\n")
	fmt.Fprintf(w, "  CPU: units of %d, %d and %d rows, %d timed batches each on one thread, then the %d-row batch shared by several threads\n",
		calibrate.UnitRows[0], calibrate.UnitRows[1], calibrate.UnitRows[2], plan.Repeats, calibrate.HeldOutRows)
	fmt.Fprintf(w, "  file system: %d rounds of create+write 4 KiB+close, fsync, rename, stat, unlink in a directory of its own in %s, removed at the end (nothing else there is read or written)\n", plan.FSOps, dir)
	if plan.FUSEDir != "" {
		fmt.Fprintf(w, "  FUSE: %d rounds of the same in a directory of its own in %s, removed at the end (on a Cloud Storage volume each create, fsync and rename uploads an object: about %d requests)\n",
			plan.FUSEOps, plan.FUSEDir, 4*plan.FUSEOps)
	}
	fmt.Fprintf(w, "  at most %s (the CPU work is fixed: it takes as many times longer as this machine is slower)\n\n", plan.MaxTime)
}

// writeProbeAnswer prints what the probe measured: the machine and its speed first.
func writeProbeAnswer(w io.Writer, p *calibrate.Probe) {
	c := p.CPU
	mid := c.Sizes[1]
	fmt.Fprintf(w, "\nANSWER\n  %s: %.4g ms of CPU work per %d-row unit on one thread (%.0f units/s); %d threads did %.2f CPUs' worth; measured in %.1f s\n",
		p.Machine, mid.MsPerUnit, mid.Rows, mid.UnitsPerS, c.Threads, c.EffectiveCPUs, p.Elapsed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  unit\tms per unit\tunits/s\tbatches (ms per unit)")
	for _, s := range c.Sizes {
		var b []string
		for _, x := range s.Batches {
			b = append(b, fmt.Sprintf("%.4g", x))
		}
		fmt.Fprintf(tw, "  %d rows\t%.4g\t%.0f\t%s\n", s.Rows, s.MsPerUnit, s.UnitsPerS, strings.Join(b, " "))
	}
	tw.Flush()
	for _, r := range []struct {
		name string
		fs   *calibrate.FSResult
	}{{"file system", &p.FS}, {"FUSE", p.FUSE}} {
		if r.fs == nil {
			continue
		}
		fmt.Fprintf(w, "  %s: %s, %d rounds\n", r.name, r.fs.FileSystem, r.fs.Ops)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    call\tmedian µs\tp99 µs")
		for _, c := range r.fs.Calls {
			fmt.Fprintf(tw, "    %s\t%.1f\t%.1f\n", c.Call, c.MedianUs, c.P99Us)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
}
