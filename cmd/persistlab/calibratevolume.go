package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/calibrate"
	"persistlab/internal/disk"
	"persistlab/param"
	"persistlab/profile"
	"persistlab/report"
	"persistlab/results"
	"persistlab/workload/fio"
)

// cmdCalibrateVolume measures a mounted volume with fio on one file of its own, fits the volume
// model's options to it, and writes them as a profile for run --profile.
func cmdCalibrateVolume(ctx context.Context, args []string) error {
	fs := newFlags("calibrate volume")
	dir := fs.String("dir", "", "a directory on the volume to probe (required): the probe writes one file of its own there and removes it; nothing else in it is read or written")
	typ := fs.String("type", "", "the volume's type as the lab names it (gp3, pd-balanced, ...): the profile then applies to entries of that type only, and each figure is checked against what the type takes")
	size := fs.String("size", param.FormatSize(calibrate.DefaultVolumePlan().FileBytes), "the probe file's size: the random I/O spreads over it")
	out := fs.String("out", "", "the profile to write (default: a new persistlab-profile-volume-TYPE-TIME.yaml here)")
	force := fs.Bool("force", false, "replace an existing --out file")
	plan := calibrate.DefaultVolumePlan()
	fs.DurationVar(&plan.Runtime, "runtime", plan.Runtime, "how long each measured phase runs")
	fs.BoolVar(&plan.Long, "long", false, "measure the burst drain too: read at depth 32 until the burst credit bucket empties (gp2, st1, sc1), for at most --drain-max")
	fs.DurationVar(&plan.DrainMax, "drain-max", plan.DrainMax, "with --long: the most the drain may take")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return fmt.Errorf("want flags only, not %q", positional[0])
	}
	if *dir == "" {
		return fmt.Errorf("--dir: want a directory on the volume to probe")
	}
	if plan.FileBytes, err = param.ParseSize(*size); err != nil {
		return fmt.Errorf("--size %q: want a size like 256MiB", *size)
	}
	if err := plan.Check(); err != nil {
		return err
	}
	abs, err := probeDir(*dir, plan.FileBytes)
	if err != nil {
		return err
	}
	info := calibrate.VolumeOf(abs)
	target := calibrate.VolumeTarget{Type: *typ, SizeBytes: info.SizeBytes}
	if err := target.CheckTarget(); err != nil {
		return err
	}
	bin, err := fio.Find()
	if err != nil {
		return fmt.Errorf("the volume probe runs fio: %w", err)
	}
	if *out == "" {
		name := *typ
		if name == "" {
			name = filepath.Base(abs)
		}
		*out = fmt.Sprintf("persistlab-profile-volume-%s-%s.yaml", safeName(name), time.Now().UTC().Format("20060102-150405"))
	}
	outPath, err := results.OutputPath("--out", *out, *force)
	if err != nil {
		return err
	}
	return calibrateVolume(ctx, bin, abs, info, target, plan, outPath, terminalSafe(os.Stdout), terminalSafe(os.Stderr))
}

// probeDir checks, touching nothing, that dir is a directory the probe can write its file in;
// it returns dir as an absolute path.
func probeDir(dir string, need int64) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--dir %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("--dir %s: not a directory: want an existing directory on the volume to probe", dir)
	}
	// fio reads ':' as a list of directories, ends a value at ';' or '#', and expands '$'.
	if strings.ContainsAny(abs, ":;#$\n\r\t") {
		return "", fmt.Errorf("--dir %s: fio cannot name a file under a path with ':', ';', '#', '$' or a control character: want another directory on the volume", dir)
	}
	var fsStat unix.Statfs_t
	if err := unix.Statfs(abs, &fsStat); err == nil && fsStat.Flags&unix.ST_RDONLY != 0 {
		return "", fmt.Errorf("--dir %s: cannot write there (a read-only file system): want a directory on the volume that you can write; nothing was written", dir)
	}
	if err := unix.Access(abs, unix.W_OK|unix.X_OK); err != nil {
		return "", fmt.Errorf("--dir %s: cannot write there (%v): want a directory on the volume that you can write; nothing was written", dir, err)
	}
	if err := disk.Room(abs, need, "the probe file (--size)"); err != nil {
		return "", fmt.Errorf("--dir %s: %w", dir, err)
	}
	return abs, nil
}

func calibrateVolume(ctx context.Context, bin, dir string, info calibrate.VolumeInfo, target calibrate.VolumeTarget, plan calibrate.VolumePlan,
	outPath string, stdout, stderr io.Writer) error {
	work, err := os.MkdirTemp("", "persistlab-calibrate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work) // fio's job files: never in dir
	probe := &calibrate.VolumeProbe{Fio: bin, Dir: dir, Name: calibrate.VolumeProbeFile(calibrate.NewProbeID()), WorkDir: work,
		Plan: plan, Drain: target.HasBucket(), Progress: stderr}
	writeVolumePlan(stdout, bin, info, target, probe)
	fmt.Fprintf(stderr, "probing %s ...\n", dir)
	samples, runErr := probe.Run(ctx)
	// The file goes whatever happened, Ctrl-C included.
	removed, rmErr := probe.Cleanup()
	leftover := func(w io.Writer) {
		switch {
		case rmErr != nil:
			fmt.Fprintf(w, "probe file: %s could NOT be removed (remove it yourself): %v\n", probe.Path(), rmErr)
		case removed != "":
			fmt.Fprintf(w, "probe file: %s removed; nothing else in %s was written\n", removed, dir)
		}
	}
	if runErr != nil {
		leftover(stderr)
		if ctx.Err() != nil {
			return &exitError{code: 130, err: fmt.Errorf("interrupted: no profile written")}
		}
		hint := ""
		if strings.Contains(runErr.Error(), "Invalid argument") {
			hint = " (does the file system under --dir take direct I/O? tmpfs does not)"
		}
		return fmt.Errorf("the probe failed, no profile written: %w%s", runErr, hint)
	}
	fit := calibrate.FitVolume(samples, plan, target)
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown"
	}
	p := &profile.Profile{Schema: profile.Schema, Kind: "volume", Measured: measuredBlock(host + ":" + dir),
		Figures: fit.Figures, NotFitted: fit.NotFitted, HeldOut: fit.HeldOut, AppliesTo: fit.AppliesTo}
	if err := p.Check(outPath); err != nil {
		leftover(stderr)
		return fmt.Errorf("the fit is not a valid profile: %w", err)
	}
	writeVolumeAnswer(stdout, dir, info, target, samples, fit)
	leftover(stdout)
	if err := writeProfileFile(outPath, p, &redactor{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "profile: %s (persistlab run SCENARIO --profile %s: its figures replace the volume model's for %s)\n", outPath, report.ShellWord(outPath), appliesText(target))
	if rmErr != nil {
		return fmt.Errorf("the probe file %s could not be removed: %w", probe.Path(), rmErr)
	}
	return nil
}

func appliesText(t calibrate.VolumeTarget) string {
	if t.Type == "" {
		return "every volume entry whose type takes them"
	}
	return "the " + t.Type + " entries"
}

// volumeText is the volume in a phrase: "gp3 of 100.0 GiB on /dev/nvme1n1 (ext4)".
func volumeText(info calibrate.VolumeInfo, t calibrate.VolumeTarget) string {
	s := "a volume"
	if t.Type != "" {
		s = "a " + t.Type + " volume"
	}
	if info.SizeBytes > 0 {
		s += fmt.Sprintf(" of %.1f GiB", float64(info.SizeBytes)/(1<<30))
	} else {
		s += " of unknown size (no block device found under it)"
	}
	if info.Device != "" {
		s += fmt.Sprintf(" on %s (%s)", info.Device, info.FS)
	}
	return s
}

// writeVolumePlan prints, before the first I/O, what the probe will write, where, and for how long.
func writeVolumePlan(w io.Writer, bin string, info calibrate.VolumeInfo, t calibrate.VolumeTarget, probe *calibrate.VolumeProbe) {
	plan := probe.Plan
	fmt.Fprintf(w, "persistlab calibrate volume: %s, %s\n", probe.Dir, volumeText(info, t))
	fmt.Fprintf(w, "it writes one file of its own, %s (%s), and removes it at the end, after an error or Ctrl-C too; nothing else in %s is read or written\n",
		probe.Path(), param.FormatSize(plan.FileBytes), probe.Dir)
	version := fio.Version(bin)
	if version == "" {
		version = "fio"
	}
	fmt.Fprintf(w, "%s (%s), direct I/O (libaio), one phase after another:\n", version, bin)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  phase\tI/O\tdepth\tfor\tfits")
	for _, ph := range plan.Phases() {
		d := plan.Runtime.String()
		switch ph {
		case calibrate.PhaseLayout:
			d = "at most " + plan.LayoutMax.String()
		case calibrate.PhaseDrain:
			d = fmt.Sprintf("at most %s, in steps of %s", plan.DrainMax, plan.Runtime)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", ph.Title, ph.What(), ph.Depth, d, ph.Fits)
	}
	tw.Flush()
	if plan.Long && !probe.Drain {
		fmt.Fprintf(w, "no burst drain: a %s of this size has no burst credit bucket\n", t.Type)
	}
	// A volume that writes as gp3's baseline (125 MiB/s), for scale.
	const typicalMiBps = 125
	typical := time.Duration(len(plan.Phases())-1)*plan.Runtime + time.Duration(float64(plan.FileBytes)/(typicalMiBps<<20)*float64(time.Second))
	drain := ""
	if plan.Long && probe.Drain {
		typical -= plan.Runtime
		drain = " and the drain"
	}
	fmt.Fprintf(w, "at most %s in all (writing the file takes %s over the volume's write rate: at %d MiB/s the probe takes about %s%s)\n\n",
		plan.MaxDuration(), param.FormatSize(plan.FileBytes), typicalMiBps, typical.Round(time.Second), drain)
}

// writeVolumeAnswer prints what the probe found: the figures in a sentence, the held-out point
// against its prediction, the drain, then each figure beside the model's own for the type.
func writeVolumeAnswer(w io.Writer, dir string, info calibrate.VolumeInfo, t calibrate.VolumeTarget, s *calibrate.VolumeSamples, fit calibrate.VolumeFit) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }
	fmt.Fprintf(w, "\nANSWER\n  %s, %s, measured in %s: 4 KiB random reads %s median (p99 %s) and writes %s (p99 %s) at depth 1; %.0f IOPS at depth 32; %.1f MiB/s of 1 MiB sequential reads (the layout wrote %.1f MiB/s)\n",
		dir, volumeText(info, t), s.Elapsed.Round(100*time.Millisecond), ms(s.ReadQD1.Percentile(50)), ms(s.ReadQD1.Percentile(99)),
		ms(s.WriteQD1.Percentile(50)), ms(s.WriteQD1.Percentile(99)), s.ReadQD32.IOPS(), s.SeqRead.MiBps(), s.Layout.MiBps())
	for _, h := range fit.HeldOut {
		fmt.Fprintf(w, "  held out: %s ran at %.0f %s; the fit predicts %.0f (%d × the depth-1 rate of %.0f, capped by the depth-32 rate of %.0f): error %+.1f%%\n",
			h.Point, h.Measured, h.Unit, h.Predicted, calibrate.HeldOutDepth, s.ReadQD1.IOPS(), s.ReadQD32.IOPS(), 100*h.Error)
	}
	if len(fit.HeldOut) == 0 {
		fmt.Fprintln(w, "  held out: nothing: how far the fit predicts is unknown")
	}
	if d := fit.Drain; d != nil {
		switch {
		case d.Emptied:
			fmt.Fprintf(w, "  burst drain: 4 KiB random reads at depth 32 ran at %.0f IOPS for %s after the other phases, then at %.0f: the bucket held about %.0f I/Os above the baseline when the drain began\n",
				d.Burst, d.After.Round(100*time.Millisecond), d.Base, d.Credits)
		default:
			fmt.Fprintf(w, "  burst drain: 4 KiB random reads at depth 32 held %.0f IOPS for %s (--drain-max): no burst bucket emptied\n", d.Burst, d.After.Round(100*time.Millisecond))
		}
	}
	model := "model"
	if t.Type != "" && t.SizeBytes > 0 {
		model = fmt.Sprintf("%s's default at %.0f GiB", t.Type, float64(t.SizeBytes)/(1<<30))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  option\tmeasured\t%s\thow\n", model)
	units := map[string]string{"iops": "IOPS", "throughput": "MiB/s"}
	for _, f := range fit.Figures {
		m := t.ModelFigure(f.Option)
		if m == "" {
			m = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", f.Option, withUnit(f.Value, units[f.Option]), m, f.How)
	}
	tw.Flush()
	for _, n := range fit.NotFitted {
		fmt.Fprintf(w, "  not fitted: %s: %s\n", n.Option, n.Why)
	}
	if t.Type == "" {
		fmt.Fprintln(w, "  (no --type: a run gives each figure to every volume entry whose type takes it, and says which declined it; --type limits the profile to that type's entries)")
	}
	fmt.Fprintf(w, "  (what this machine got from %s: the instance's own storage limits bind these figures too; a probe from the VM your app runs on measures what it will see)\n\n", dir)
}
