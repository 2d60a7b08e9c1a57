package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/internal/mounts"
	"persistlab/param"
	"persistlab/workload/fio"
)

// VolumePlan is the volume probe: fio on one file of its own, every phase bounded in time.
type VolumePlan struct {
	FileBytes int64         // the probe file's size
	Runtime   time.Duration // each measured phase, and each step of the drain
	// LayoutMax bounds writing the file; a slower volume is probed on the part written by then.
	LayoutMax time.Duration
	Long      bool          // the burst drain too
	DrainMax  time.Duration // the most the drain may take
}

// DefaultVolumePlan is the probe `persistlab calibrate volume` makes unless told otherwise: about
// half a minute on a volume that writes 125 MiB/s.
func DefaultVolumePlan() VolumePlan {
	return VolumePlan{FileBytes: 256 * mib, Runtime: 5 * time.Second, LayoutMax: 2 * time.Minute, DrainMax: 10 * time.Minute}
}

// Bounds of the volume plan. A file under 16 MiB spreads 4 KiB random I/O over too few blocks
// to miss a device's caches; a phase under a second holds too few I/Os of a slow volume.
const (
	MinProbeFile = 16 * mib
	MaxProbeFile = 64 << 30
	MinRuntime   = time.Second
	MaxRuntime   = time.Minute
	MinDrain     = 10 * time.Second
	MaxDrain     = 3 * time.Hour
)

// Check says what of the plan is out of bounds, naming the flag.
func (p VolumePlan) Check() error {
	switch {
	case p.FileBytes < MinProbeFile || p.FileBytes > MaxProbeFile:
		return fmt.Errorf("--size %s: want %s to %s for the probe file", param.FormatSize(p.FileBytes), param.FormatSize(MinProbeFile), param.FormatSize(MaxProbeFile))
	case p.FileBytes%mib != 0:
		return fmt.Errorf("--size %s: want whole MiB, like 256MiB", param.FormatSize(p.FileBytes))
	case p.Runtime < MinRuntime || p.Runtime > MaxRuntime || p.Runtime%time.Millisecond != 0:
		return fmt.Errorf("--runtime %s: want %s to %s per phase, in whole milliseconds", p.Runtime, MinRuntime, MaxRuntime)
	case p.Long && (p.DrainMax < MinDrain || p.DrainMax > MaxDrain || p.DrainMax%time.Millisecond != 0):
		return fmt.Errorf("--drain-max %s: want %s to %s", p.DrainMax, MinDrain, MaxDrain)
	}
	return nil
}

// VolumePhase is one fio job of the probe.
type VolumePhase struct {
	Name  string // fio's job name
	Title string // what the plan and the progress call it
	RW    string
	BS    int64
	Depth int
	Fits  string // what it fits, for the plan
}

// What is the phase's I/O in words: "4 KiB random reads".
func (ph VolumePhase) What() string {
	size := strconv.FormatInt(ph.BS>>10, 10) + " KiB"
	if ph.BS >= mib {
		size = strconv.FormatInt(ph.BS/mib, 10) + " MiB"
	}
	kind := map[string]string{"read": "sequential reads", "write": "sequential writes", "randread": "random reads", "randwrite": "random writes"}[ph.RW]
	return size + " " + kind
}

func (ph VolumePhase) write() bool { return ph.RW == "write" || ph.RW == "randwrite" }

// The probe's phases. The depths: 1 for latency (nothing queues), 32 to reach any volume's IOPS
// limit, 8 between them for the held-out point, 8 of 1 MiB to reach its throughput limit.
var (
	PhaseLayout    = VolumePhase{"layout", "lay out", "write", mib, 8, "nothing: writes the file once (its rate is shown)"}
	PhaseReadQD1   = VolumePhase{"read-qd1", "read latency", "randread", 4 << 10, 1, "latency (with the writes' median)"}
	PhaseWriteQD1  = VolumePhase{"write-qd1", "write latency", "randwrite", 4 << 10, 1, "latency (with the reads' median)"}
	PhaseReadQD32  = VolumePhase{"read-qd32", "IOPS", "randread", 4 << 10, 32, "iops"}
	PhaseReadQD8   = VolumePhase{"read-qd8", "held out", "randread", 4 << 10, 8, "nothing: predicted from depths 1 and 32, then compared"}
	PhaseSeqRead   = VolumePhase{"read-1m", "throughput", "read", mib, 8, "throughput"}
	PhaseDrain     = VolumePhase{"drain", "burst drain", "randread", 4 << 10, 32, "credit_scale, with --type (steps until the rate drops)"}
	measuredPhases = []VolumePhase{PhaseReadQD1, PhaseWriteQD1, PhaseReadQD32, PhaseReadQD8, PhaseSeqRead}
)

// HeldOutDepth is the depth whose IOPS the fit predicts and the probe measures.
const HeldOutDepth = 8

// Phases are the plan's phases in order.
func (p VolumePlan) Phases() []VolumePhase {
	out := append([]VolumePhase{PhaseLayout}, measuredPhases...)
	if p.Long {
		out = append(out, PhaseDrain)
	}
	return out
}

// MaxDuration is the longest the probe's I/O can take (fio's start between phases aside).
func (p VolumePlan) MaxDuration() time.Duration {
	d := p.LayoutMax + time.Duration(len(measuredPhases))*p.Runtime
	if p.Long {
		d += p.DrainMax
	}
	return d
}

// VolumeProbeFile is the name of a probe's file: unique, and named for what wrote it.
func VolumeProbeFile(id string) string { return "persistlab-probe-" + id + ".bin" }

// PhaseResult is what one fio job measured, in its direction.
type PhaseResult struct {
	Phase   VolumePhase
	IOs     int64
	Bytes   int64
	Elapsed time.Duration // fio's runtime of the job (whole milliseconds)
	// Wall is from fio's start to its end: Elapsed and fio's own start-up, during which a
	// volume's credit bucket refills.
	Wall time.Duration
	Lat  fio.LatencyStats
}

// IOPS is the job's I/Os per second.
func (r PhaseResult) IOPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.IOs) / r.Elapsed.Seconds()
}

// MiBps is the job's MiB per second.
func (r PhaseResult) MiBps() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Bytes) / mib / r.Elapsed.Seconds()
}

// Percentile is the p-th percentile of the job's total latency (fio's lat_ns), from fio's
// histogram (json+ bins) as fio computes its own, else fio's reported percentile; 0 if neither.
func (r PhaseResult) Percentile(p float64) time.Duration {
	if len(r.Lat.Bins) > 0 {
		if ps := fio.PercentilesFromBins(r.Lat.Bins, r.Lat.Count, []float64{p}); len(ps) == 1 {
			return ps[0].Value
		}
	}
	for _, q := range r.Lat.Percentiles {
		if q.P == p {
			return q.Value
		}
	}
	return 0
}

// VolumeSamples are what the probe measured.
type VolumeSamples struct {
	Layout                                        PhaseResult
	ReadQD1, WriteQD1, ReadQD32, ReadQD8, SeqRead PhaseResult
	Drain                                         []PhaseResult // the drain's steps, in order
	Extent                                        int64         // the bytes of the file the layout wrote: where every later phase works
	FioVersion                                    string
	Elapsed                                       time.Duration
}

// VolumeProbe runs a plan on one file it creates in Dir, and removes only that file.
type VolumeProbe struct {
	Fio     string // fio's path
	Dir     string // absolute
	Name    string // the probe file, in Dir
	WorkDir string // fio's job files, outside Dir
	Plan    VolumePlan
	// Drain: with Plan.Long, measure the burst drain (false when the type has no burst bucket).
	Drain    bool
	Progress io.Writer // a line per phase; nil for none

	created bool
	samples VolumeSamples
}

// Path is the probe file.
func (p *VolumeProbe) Path() string { return filepath.Join(p.Dir, p.Name) }

func (p *VolumeProbe) say(format string, a ...any) {
	if p.Progress != nil {
		fmt.Fprintf(p.Progress, format+"\n", a...)
	}
}

// Run creates the probe file (never one already there), writes it once, and runs the plan's
// phases on it. On an error it returns the error; Cleanup must be called in every case.
func (p *VolumeProbe) Run(ctx context.Context) (*VolumeSamples, error) {
	s := &p.samples
	start := time.Now()
	defer func() { s.Elapsed = time.Since(start) }()
	f, err := os.OpenFile(p.Path(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return s, fmt.Errorf("creating the probe file: %w", err)
	}
	p.created = true
	if err := f.Close(); err != nil {
		return s, fmt.Errorf("creating the probe file: %w", err)
	}
	if s.Layout, err = p.phase(ctx, PhaseLayout, p.Plan.FileBytes, false, p.Plan.LayoutMax); err != nil {
		return s, err
	}
	// Only what was written: reads of the unwritten rest would cost the volume nothing.
	s.Extent = s.Layout.Bytes / mib * mib
	if s.Extent < MinProbeFile {
		return s, fmt.Errorf("the volume wrote %s of the %s probe file in %s: too little to probe (it writes under %.2f MiB/s)",
			param.FormatSize(s.Extent), param.FormatSize(p.Plan.FileBytes), p.Plan.LayoutMax, float64(MinProbeFile)/mib/p.Plan.LayoutMax.Seconds())
	}
	for _, m := range []struct {
		ph  VolumePhase
		out *PhaseResult
	}{{PhaseReadQD1, &s.ReadQD1}, {PhaseWriteQD1, &s.WriteQD1}, {PhaseReadQD32, &s.ReadQD32}, {PhaseReadQD8, &s.ReadQD8}, {PhaseSeqRead, &s.SeqRead}} {
		if *m.out, err = p.phase(ctx, m.ph, s.Extent, true, p.Plan.Runtime); err != nil {
			return s, err
		}
	}
	if p.Plan.Long && p.Drain {
		if err := p.drain(ctx); err != nil {
			return s, err
		}
	}
	return s, nil
}

// phase runs one fio job on the probe file's first extent bytes.
func (p *VolumeProbe) phase(ctx context.Context, ph VolumePhase, extent int64, timeBased bool, runtime time.Duration) (PhaseResult, error) {
	r := PhaseResult{Phase: ph}
	job := fio.Job{Name: ph.Name, Directory: p.Dir, Filename: p.Name, RW: ph.RW, BS: ph.BS, Size: extent, NumJobs: 1,
		IODepth: ph.Depth, Direct: true, Engine: "libaio", Runtime: runtime, TimeBased: timeBased, GroupReporting: true}
	t0 := time.Now()
	out, _, err := fio.Run(ctx, p.Fio, job, p.WorkDir)
	r.Wall = time.Since(t0)
	if err != nil {
		return r, fmt.Errorf("%s (%s at depth %d): %w", ph.Title, ph.What(), ph.Depth, err)
	}
	p.samples.FioVersion = out.FioVersion
	d := out.Aggregate.Read
	if ph.write() {
		d = out.Aggregate.Write
	}
	r.IOs, r.Bytes, r.Elapsed, r.Lat = d.IOs, d.IOBytes, d.Runtime, d.Lat
	if r.IOs == 0 || r.Elapsed <= 0 {
		return r, fmt.Errorf("%s (%s at depth %d): fio reports no I/O in %s", ph.Title, ph.What(), ph.Depth, r.Elapsed)
	}
	line := fmt.Sprintf("  %-14s %-24s depth %-3d %6s  %8.0f IOPS  %7.1f MiB/s", ph.Title, ph.What(), ph.Depth, r.Elapsed.Round(100*time.Millisecond), r.IOPS(), r.MiBps())
	if ph.Depth == 1 {
		line += fmt.Sprintf("  p50 %s  p99 %s", msText(r.Percentile(50)), msText(r.Percentile(99)))
	}
	p.say("%s", line)
	return r, nil
}

// Bounds of the drain: a step whose rate falls below dropShare of the burst rate is where the
// bucket emptied; baseSteps more measure the baseline after it.
const (
	dropShare = 0.8
	baseSteps = 2
)

// drain reads at depth 32 in steps of Plan.Runtime until the rate drops, then baseSteps more,
// for at most Plan.DrainMax.
func (p *VolumeProbe) drain(ctx context.Context) error {
	s := &p.samples
	var elapsed time.Duration
	for elapsed < p.Plan.DrainMax {
		step := min(p.Plan.Runtime, (p.Plan.DrainMax - elapsed).Truncate(time.Millisecond))
		if step < MinRuntime {
			break
		}
		r, err := p.phase(ctx, PhaseDrain, s.Extent, true, step)
		if err != nil {
			return err
		}
		s.Drain = append(s.Drain, r)
		elapsed += r.Elapsed
		if at := dropStep(s.Drain, s.ReadQD32.IOPS()); at >= 0 && len(s.Drain)-1-at >= baseSteps {
			break
		}
	}
	return nil
}

// dropStep is the first drain step whose rate is below dropShare of the burst rate (the higher
// of the depth-32 phase's and the first step's); -1 if none.
func dropStep(steps []PhaseResult, burstRef float64) int {
	if len(steps) == 0 {
		return -1
	}
	ref := max(burstRef, steps[0].IOPS())
	for i, r := range steps {
		if r.IOPS() < dropShare*ref {
			return i
		}
	}
	return -1
}

// Drain is what the drain's steps say of the burst bucket.
type Drain struct {
	Emptied bool
	// After is from the drain's start until the bucket emptied (interpolated within the step
	// where the rate fell), or how long the rate held when it did not fall.
	After time.Duration
	// Burst and Base are the 4 KiB read rates before and after (Base 0 when it did not fall).
	// Burst is over fio's runtimes: its limit holds no more than a few I/Os, so a pause between
	// steps gives the next none. Base is over the steps' wall time: the bucket refills at the
	// baseline during fio's start-up too, and the next step spends that at once.
	Burst, Base float64
	// BaseUpper: no step after the fall, so Base is the falling step's own rate, above the true one.
	BaseUpper bool
	// Credits are the I/Os above the baseline the drain spent until the bucket emptied, less what
	// the baseline refilled between its steps: what the bucket held at the drain's start.
	Credits float64
	Steps   int
}

// AnalyzeDrain reads the drain's steps; burstRef is the depth-32 phase's rate.
func AnalyzeDrain(steps []PhaseResult, burstRef float64) Drain {
	d := Drain{Steps: len(steps)}
	at := dropStep(steps, burstRef)
	if at < 0 {
		var ios int64
		for _, r := range steps {
			d.After += r.Elapsed
			ios += r.IOs
		}
		if d.After > 0 {
			d.Burst = float64(ios) / d.After.Seconds()
		}
		return d
	}
	d.Emptied = true
	rate := func(rs []PhaseResult, wall bool) (float64, time.Duration) {
		var ios int64
		var t time.Duration
		for _, r := range rs {
			ios, t = ios+r.IOs, t+r.Elapsed
			if wall {
				t += max(0, r.Wall-r.Elapsed)
			}
		}
		if t <= 0 {
			return 0, 0
		}
		return float64(ios) / t.Seconds(), t
	}
	var before time.Duration
	if d.Burst, before = rate(steps[:at], false); before == 0 {
		d.Burst = max(burstRef, steps[at].IOPS())
	}
	if d.Base, _ = rate(steps[at+1:], true); len(steps[at+1:]) == 0 {
		d.Base, d.BaseUpper = steps[at].IOPS(), true
	}
	// Within the falling step: Burst for x seconds, then Base.
	fell := steps[at]
	x := 0.0
	if d.Burst > d.Base {
		x = (float64(fell.IOs) - d.Base*fell.Elapsed.Seconds()) / (d.Burst - d.Base)
	}
	x = max(0, min(fell.Elapsed.Seconds(), x))
	d.After = before + time.Duration(x*float64(time.Second))
	for _, r := range steps[:at] {
		d.Credits += float64(r.IOs) - d.Base*r.wall().Seconds()
	}
	d.Credits = max(0, d.Credits+x*(d.Burst-d.Base))
	return d
}

// wall is the phase's wall time, or fio's runtime where it was not taken.
func (r PhaseResult) wall() time.Duration { return max(r.Wall, r.Elapsed) }

// VolumeInfo is what this machine says of the volume a directory is on.
type VolumeInfo struct {
	Device, FS string // from the mount table: /dev/nvme1n1, ext4
	SizeBytes  int64  // the block device's size; 0 when there is none (tmpfs, overlay, NFS)
}

// VolumeOf finds the mount and the block device holding dir.
func VolumeOf(dir string) VolumeInfo {
	var v VolumeInfo
	if m, ok := mounts.Of(dir); ok {
		v.Device, v.FS = m.Device, m.Type
	}
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return v
	}
	f, err := os.Open(fmt.Sprintf("/sys/dev/block/%d:%d/size", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return v
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return v
	}
	// In 512-byte sectors, whatever the device's own sector size.
	if sectors, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && sectors > 0 && sectors < 1<<50 {
		v.SizeBytes = sectors * 512
	}
	return v
}

// Cleanup removes the probe file if the probe created it; it is the only file the probe touches.
// It returns what it removed ("" for nothing) or why it could not.
func (p *VolumeProbe) Cleanup() (removed string, err error) {
	if !p.created {
		return "", nil
	}
	if err := os.Remove(p.Path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	p.created = false
	return p.Path(), nil
}

// msText is a latency in milliseconds, to the microsecond: "0.612 ms".
func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + " ms"
}
