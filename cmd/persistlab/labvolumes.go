package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"persistlab/backend"
	"persistlab/internal/benchgoal"
	"persistlab/internal/leftover"
	"persistlab/internal/proc"
	"persistlab/lab"
	"persistlab/lab/volume"
	"persistlab/param"
	"persistlab/runner"
	"persistlab/scenario"
)

// cmdLabVolumes measures the volume emulator's own ceiling on this machine (model off), then
// says for every volume type whether the emulator gives its published maximum here and, if not,
// up to which size it does: a run on a volume beyond that measures this machine, not the volume.
func cmdLabVolumes(ctx context.Context, args []string) error {
	fs := newFlags("lab volumes")
	size := fs.String("probe", "512MiB", "bytes the probe writes and reads")
	if rest, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return fmt.Errorf("want no arguments, got %q", rest)
	}
	lock, err := leftover.CreateTemp("", "persistlab-volumes-", leftover.Run{PID: os.Getpid(), Started: time.Now().UTC()})
	if err != nil {
		return err
	}
	proc.NotifyStarts(lock.Record)
	defer proc.NotifyStarts(nil)
	c, probeErr := probeVolumeCeiling(ctx, lock.Dir(), *size)
	if !lock.Release() {
		os.RemoveAll(lock.Dir())
	}
	if probeErr != nil {
		return probeErr
	}
	return writeReaches(os.Stdout, c)
}

// probeVolumeCeiling is the volume backend's own ceiling probe, in dir.
func probeVolumeCeiling(ctx context.Context, dir, size string) (lab.Ceiling, error) {
	be, err := backend.New("volume", backend.Env{WorkDir: dir, Options: map[string]string{"type": "gp2", "size": "100GiB", "ceiling_probe": size}})
	if err != nil {
		return lab.Ceiling{}, err
	}
	prober, ok := be.(backend.CeilingProber)
	if !ok {
		return lab.Ceiling{}, fmt.Errorf("the volume backend measures no ceiling")
	}
	c, ok, err := prober.ProbeCeiling(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("--probe %s: nothing measured", size)
	}
	return c, err
}

// writeReaches prints the catalog against ceiling c.
func writeReaches(w io.Writer, c lab.Ceiling) error {
	fmt.Fprintf(w, "the volume emulator on this machine, model off: %.0f write IOPS at 4 KiB, %.0f MiB/s of writes (%s)\n", c.WriteIOPS, c.WriteMiBs, c.Method)
	fmt.Fprintf(w, "a type's published maximum is reached here when its peak writes stay under %.0f%% of both\n\n", 100*runner.LabBoundShare)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "type\tpublished maximum\twrite IOPS\tMiB/s\there\tthe largest reached here\t")
	for _, r := range volume.Reaches(c.WriteIOPS, c.WriteMiBs, runner.LabBoundShare) {
		here, upto := "yes", ""
		switch {
		case !r.AtMax && r.UptoOK:
			here, upto = "no", fmt.Sprintf("%s (%s: %.0f IOPS, %.0f MiB/s)", param.FormatSize(r.Upto.SizeBytes), provisioned(r.Upto), r.UptoIOPS, r.UptoMiB)
		case !r.AtMax:
			here, upto = "no", "none: not even the smallest"
		}
		fmt.Fprintf(tw, "%s\t%s, %s\t%.0f\t%.0f\t%s\t%s\t\n", r.Type, param.FormatSize(r.Max.SizeBytes), provisioned(r.Max), r.MaxIOPS, r.MaxMiB, here, upto)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "\nPersistent Disk's figures grow with its size without bound here: its caps are per VM (the volume option instance sets one)."); err != nil {
		return err
	}
	f, err := fastestScenarioVolumes()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nthe fastest volumes the built-in scenarios run: %.0f write IOPS (%s), %.0f MiB/s (%s)\n", f.iops, f.iopsAt, f.mib, f.mibAt)
	basis := fmt.Sprintf("the emulator's ceiling here (model off, %s) over the fastest built-in scenario's peak", c.Method)
	for _, r := range []benchgoal.Row{
		{Name: "volume emulator: write IOPS / fastest scenario's (" + f.iopsAt + ")", Got: c.WriteIOPS / f.iops, Op: ">=", Goal: 2, Basis: basis},
		{Name: "volume emulator: MiB/s / fastest scenario's (" + f.mibAt + ")", Got: c.WriteMiBs / f.mib, Op: ">=", Goal: 2, Basis: basis},
	} {
		if err := benchgoal.Report(w, r); err != nil {
			return err
		}
	}
	return nil
}

type fastest struct {
	iops, mib     float64
	iopsAt, mibAt string // scenario/backend entry
}

// fastestScenarioVolumes finds the built-in scenarios' volumes with the highest peak write IOPS
// and MiB/s within their instances' caps (what the model lets a cell write): what the emulator
// must give with room to spare (issue 23: twice).
func fastestScenarioVolumes() (fastest, error) {
	var f fastest
	for _, name := range scenario.Builtins() {
		spec, err := scenario.Load(name)
		if err != nil {
			return f, err
		}
		for _, b := range spec.Backends {
			if b.Name != "volume" {
				continue
			}
			cfg, err := volume.ConfigFromOptions(b.Options)
			if err != nil {
				return f, fmt.Errorf("scenario %s, backend %s: %w", name, b.ID(), err)
			}
			if cfg.Off { // model off: no rate to give, the machine's own
				continue
			}
			iops, mib := cfg.Spec.Limits().PeakWriteOn()
			if iops > f.iops {
				f.iops, f.iopsAt = iops, name+"/"+b.ID()
			}
			if mib > f.mib {
				f.mib, f.mibAt = mib, name+"/"+b.ID()
			}
		}
	}
	if f.iops == 0 {
		return f, fmt.Errorf("no built-in scenario runs a volume")
	}
	return f, nil
}

// provisioned says what a spec provisions beyond its size.
func provisioned(s volume.Spec) string {
	switch {
	case s.ProvisionedIOPS > 0 && s.ProvisionedMiBps > 0:
		return fmt.Sprintf("%.0f IOPS and %.0f MiB/s provisioned", s.ProvisionedIOPS, s.ProvisionedMiBps)
	case s.ProvisionedIOPS > 0:
		return fmt.Sprintf("%.0f IOPS provisioned", s.ProvisionedIOPS)
	case s.ProvisionedMiBps > 0:
		return fmt.Sprintf("%.0f MiB/s provisioned", s.ProvisionedMiBps)
	}
	return "by size"
}
