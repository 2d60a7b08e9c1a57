package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"persistlab/calibrate"
	"persistlab/lab/instance"
	"persistlab/profile"
	"persistlab/report"
	"persistlab/results"
)

// cmdCalibrateInstance compares a probe the user ran on their target (persistlab probe) with the
// same probe here, and writes the target's speed against this machine as a profile of kind
// instance, for run --profile.
func cmdCalibrateInstance(ctx context.Context, args []string) error {
	fs := newFlags("calibrate instance")
	targetPath := fs.String("target", "", "the probe file persistlab probe wrote on the target (required)")
	herePath := fs.String("here", "", "a probe file of this machine (default: run the probe here now, with the target's repeats and rounds)")
	out := fs.String("out", "", "the profile to write (default: a new persistlab-profile-instance-HOST-TIME.yaml here)")
	force := fs.Bool("force", false, "replace an existing --out file")
	dir := fs.String("dir", "", "without --here: time this machine's file system calls in a directory of its own in this one (default: the system's temporary directory); probe the file system your runs use")
	fuseDir := fs.String("fuse-dir", "", "without --here: time the same calls on a FUSE mount here too, to compare with the target's --fuse-dir")
	maxTime := fs.Duration("max-time", calibrate.DefaultProbeMax, "without --here: stop the probe here with an error past this")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return fmt.Errorf("want flags only, not %q", positional[0])
	}
	if *targetPath == "" {
		return fmt.Errorf("--target: want the probe file persistlab probe wrote on the target")
	}
	if *herePath != "" && (*dir != "" || *fuseDir != "") {
		return fmt.Errorf("--here %s: with --dir or --fuse-dir: those are for the probe run here without --here", *herePath)
	}
	target, err := calibrate.ReadProbe(*targetPath)
	if err != nil {
		return fmt.Errorf("--target: %w", err)
	}
	var here *calibrate.Probe
	if *herePath != "" {
		if here, err = calibrate.ReadProbe(*herePath); err != nil {
			return fmt.Errorf("--here: %w", err)
		}
	}
	if *out == "" {
		*out = fmt.Sprintf("persistlab-profile-instance-%s-%s.yaml", safeName(target.Machine.Hostname), time.Now().UTC().Format("20060102-150405"))
	}
	outPath, err := results.OutputPath("--out", *out, *force)
	if err != nil {
		return err
	}
	stdout, stderr := terminalSafe(os.Stdout), terminalSafe(os.Stderr)
	if here == nil {
		plan := calibrate.DefaultProbePlan()
		plan.Repeats, plan.FSOps, plan.Dir, plan.FUSEDir, plan.MaxTime, plan.Progress = target.CPU.Repeats, target.FS.Ops, *dir, *fuseDir, *maxTime, stderr
		if target.FUSE != nil {
			plan.FUSEOps = target.FUSE.Ops
		}
		if err := plan.Check(); err != nil {
			return err
		}
		for _, d := range []struct{ flag, dir string }{{"--dir", plan.Dir}, {"--fuse-dir", plan.FUSEDir}} {
			if d.dir != "" {
				if err := writableDir(d.flag, d.dir); err != nil {
					return err
				}
			}
		}
		fmt.Fprintf(stdout, "the probe here, as the target's ran (%d batches per unit size, %d rounds of file system calls):\n", plan.Repeats, plan.FSOps)
		writeProbePlan(stdout, plan)
		if here, err = calibrate.RunProbe(ctx, plan); err != nil {
			if ctx.Err() != nil {
				return &exitError{code: 130, err: fmt.Errorf("interrupted: no profile written (the probe's own directory was removed)")}
			}
			return fmt.Errorf("the probe here failed, no profile written: %w", err)
		}
	}
	fit := calibrate.FitInstance(target, here)
	host := safeName(target.Machine.Hostname)
	p := &profile.Profile{Schema: profile.Schema, Kind: "instance",
		Measured: profile.Measured{Target: host, When: target.When, Commit: target.Commit,
			Machine: profile.Machine{Hostname: target.Machine.Hostname, CPU: target.Machine.CPUModel, Kernel: target.Machine.Kernel}},
		Reference: &profile.Machine{Hostname: here.Machine.Hostname, CPU: here.Machine.CPUModel, Kernel: here.Machine.Kernel},
		Figures:   fit.Figures, NotFitted: fit.NotFitted, HeldOut: fit.HeldOut}
	if err := p.Check(outPath); err != nil {
		return fmt.Errorf("the fit is not a valid profile: %w", err)
	}
	emu, emuErr := instance.EmulationOf(p.Options())
	writeInstanceAnswer(stdout, target, here, fit, emu, emuErr)
	if *herePath != "" {
		if this := calibrate.DescribeProbeMachine(); this.Hostname != here.Machine.Hostname || this.CPUModel != here.Machine.CPUModel {
			fmt.Fprintf(stdout, "  note: --here was probed on %s, not this machine (%s): a run applies the factors as they are, against that machine's speed\n", here.Machine, this)
		}
	}
	if err := writeProfileFile(outPath, p, &redactor{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "profile: %s (persistlab run SCENARIO --profile %s, on this machine: each instance's CPU as the target's)\n", outPath, report.ShellWord(outPath))
	return nil
}

// writeInstanceAnswer prints the target's speed against this machine in a sentence, what a run
// does with it, the held-out unit against its prediction, then the tables behind them.
func writeInstanceAnswer(w io.Writer, target, here *calibrate.Probe, fit calibrate.InstanceFit, emu instance.Emulation, emuErr error) {
	f := fit.Value(instance.CPUFactorOption)
	speed := "slower"
	if emu.Factor < 1 {
		speed = "faster"
	}
	fmt.Fprintf(w, "\nANSWER\n  the target %s takes %s times this machine's time for the same CPU work (%s), with %s CPUs' worth at once (this machine: %.3g)\n",
		target.Machine, f, speed, fit.Value(instance.EffectiveCPUsOption), here.CPU.EffectiveCPUs)
	switch {
	case emuErr != nil:
		fmt.Fprintf(w, "  a run cannot emulate it: %v\n", emuErr)
	case emu.Quota == 0:
		fmt.Fprintf(w, "  a run with this profile changes nothing: %s\n", emu.None)
	default:
		fmt.Fprintf(w, "  a run with this profile slows each instance's CPU %s times where the scenario pins it to one CPU (cpus: 1) for a target of one CPU (cpu_slowdown: a spinner's weight), and elsewhere limits it to %s CPUs per %s period (effective_cpus / cpu_factor)\n", emu.FactorText(), emu.QuotaText(), emu.Period)
	}
	for _, h := range fit.HeldOut {
		fmt.Fprintf(w, "  held out: the %s took %.4g %s on the target; cpu_factor %s x this machine's %.4g predicts %.4g: error %+.1f%%\n",
			h.Point, h.Measured, h.Unit, f, heldOutHere(here), h.Predicted, 100*h.Error)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CPU work\ttarget ms\there ms\ttarget/here\t")
	for i, s := range target.CPU.Sizes {
		use := "fits cpu_factor"
		if s.Rows == calibrate.HeldOutRows {
			use = "held out"
		}
		fmt.Fprintf(tw, "  %d-row unit\t%.4g\t%.4g\t%.3f\t%s\n", s.Rows, s.MsPerUnit, here.CPU.Sizes[i].MsPerUnit, fit.Ratios[s.Rows], use)
	}
	fmt.Fprintf(tw, "  %d-row unit, %d threads\t%.4g\t%.4g\t%.3f\t%s CPUs at once on the target\n", target.CPU.ParallelRows, target.CPU.Threads,
		target.CPU.ParallelMs, here.CPU.ParallelMs, target.CPU.ParallelMs/here.CPU.ParallelMs, fit.Value(instance.EffectiveCPUsOption))
	tw.Flush()
	for _, r := range []struct {
		name    string
		where   string
		t, h    *calibrate.FSResult
		factors map[string]float64
	}{{"file system", "fs", &target.FS, &here.FS, fit.FS}, {"FUSE", "fuse", target.FUSE, here.FUSE, fit.FUSE}} {
		if len(r.factors) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n  %s calls (recorded, not emulated): target %s, here %s\n", r.name, r.t.FileSystem, r.h.FileSystem)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    call\ttarget µs median (p99)\there µs median (p99)\ttarget/here")
		for _, call := range instance.FSCalls {
			tc, _ := r.t.Call(call)
			hc, _ := r.h.Call(call)
			if x, ok := r.factors[call]; ok {
				fmt.Fprintf(tw, "    %s\t%.1f (%.1f)\t%.1f (%.1f)\t%.3g\n", call, tc.MedianUs, tc.P99Us, hc.MedianUs, hc.P99Us, x)
			}
		}
		tw.Flush()
	}
	if fit.NoFUSE != "" {
		fmt.Fprintf(w, "  %s\n", fit.NoFUSE)
	}
	for _, n := range fit.NotFitted {
		fmt.Fprintf(w, "  not fitted: %s (left out of the profile; a run keeps %g): %s\n", n.Option, instance.DefaultFSFactor, n.Why)
	}
	if caveat := emulationCaveat(emu); caveat != "" {
		fmt.Fprintf(w, "  (%s)\n", caveat)
	}
	fmt.Fprintln(w)
}

// emulationCaveat says what the quota a run applies cannot hold, "" when a run applies none: the
// latency shape, what a CPU is, and on several CPUs each thread's speed.
func emulationCaveat(e instance.Emulation) string {
	if e.Quota == 0 {
		return ""
	}
	s := "a CPU quota gives each instance the target's CPU time, not its latency shape (bench/instance: a request alone is slowed less than cpu_factor, back to back the p99 runs 1.4-1.6 times longer; docs/benchmarks.md), nor what a CPU is: memory bandwidth, cache sizes and a noisy neighbour's share are this machine's"
	if e.CPUs > 1.1 {
		s += fmt.Sprintf("; the quota holds the target's %.3g CPUs' worth in all, not each thread's speed: a lone request runs on up to %.3g of this machine's CPU where the target gives it one of its own, so with fewer requests at once than the target's CPUs it runs up to %.2g times faster than there",
			e.CPUs, min(1, e.Quota), min(e.Factor, e.CPUs))
	}
	return s
}

// heldOutHere is this machine's time of the held-out unit.
func heldOutHere(here *calibrate.Probe) float64 {
	for _, s := range here.CPU.Sizes {
		if s.Rows == calibrate.HeldOutRows {
			return s.MsPerUnit
		}
	}
	return 0
}
