package calibrate

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"persistlab/profile"
	"persistlab/workload/fio"
)

// step is a phase that moved ios in elapsed (fio's runtime), its wall time wall.
func step(ph VolumePhase, ios int64, elapsed, wall time.Duration) PhaseResult {
	return PhaseResult{Phase: ph, IOs: ios, Bytes: ios * ph.BS, Elapsed: elapsed, Wall: wall}
}

// withLatency gives a phase the median and p99 fio would report.
func withLatency(r PhaseResult, p50, p99 time.Duration) PhaseResult {
	r.Lat = fio.LatencyStats{Count: r.IOs, Percentiles: []fio.Percentile{{P: 50, Value: p50}, {P: 99, Value: p99}}}
	return r
}

// samples are a gp3's: 1 ms reads and 1.2 ms writes at depth 1, depth1Reads a second, iops at
// depth 32, depth8 at depth 8, mibs of 1 MiB reads; each phase 5 s.
func samples(depth1Reads, iops, depth8, mibs float64) *VolumeSamples {
	sec := 5 * time.Second
	n := func(rate float64) int64 { return int64(rate * sec.Seconds()) }
	return &VolumeSamples{
		Layout:   step(PhaseLayout, 256, 2*time.Second, 2*time.Second),
		ReadQD1:  withLatency(step(PhaseReadQD1, n(depth1Reads), sec, sec), time.Millisecond, 2*time.Millisecond),
		WriteQD1: withLatency(step(PhaseWriteQD1, n(depth1Reads*0.9), sec, sec), 1200*time.Microsecond, 3*time.Millisecond),
		ReadQD32: step(PhaseReadQD32, n(iops), sec, sec),
		ReadQD8:  step(PhaseReadQD8, n(depth8), sec, sec),
		SeqRead:  step(PhaseSeqRead, n(mibs), sec, sec),
		Extent:   256 * mib,
	}
}

func notFitted(f VolumeFit, option string) string {
	for _, n := range f.NotFitted {
		if n.Option == option {
			return n.Why
		}
	}
	return ""
}

// The figures map to the volume options; the latency is the mean of the two medians; the held
// out depth-8 rate is predicted by Little's law from depth 1, capped by depth 32.
func TestFitVolumeFiguresAndHeldOut(t *testing.T) {
	s := samples(900, 3950, 3600, 180)
	f := FitVolume(s, DefaultVolumePlan(), VolumeTarget{Type: "gp3", SizeBytes: 100 << 30})
	for option, want := range map[string]string{"latency": "1.1ms", "iops": "3950", "throughput": "180.0"} {
		if got := f.Value(option); got != want {
			t.Errorf("%s = %q, want %q (not fitted: %s)", option, got, want, notFitted(f, option))
		}
	}
	if f.AppliesTo["type"] != "gp3" {
		t.Errorf("applies_to %v", f.AppliesTo)
	}
	if len(f.HeldOut) != 1 {
		t.Fatalf("held out %+v", f.HeldOut)
	}
	h := f.HeldOut[0]
	if h.Predicted != 3950 || h.Measured != 3600 || math.Abs(h.Error-(3950.0-3600)/3600) > 1e-6 || h.Unit != "IOPS" {
		t.Errorf("held out %+v: want 3950 predicted (8 x 900 capped by 3950) against 3600", h)
	}
	// Below the cap, the prediction is 8 times the depth-1 rate.
	if f := FitVolume(samples(300, 3950, 2300, 180), DefaultVolumePlan(), VolumeTarget{}); f.HeldOut[0].Predicted != 2400 {
		t.Errorf("uncapped prediction %+v", f.HeldOut[0])
	}
	// What the fit gives is a profile: it passes every check of the volume kind.
	p := &profile.Profile{Schema: profile.Schema, Kind: "volume", Figures: f.Figures, NotFitted: f.NotFitted, HeldOut: f.HeldOut, AppliesTo: f.AppliesTo,
		Measured: profile.Measured{Target: "vm-1:/mnt/data", When: "2026-11-28T04:00:00Z", Commit: "abc1234", Machine: profile.Machine{Hostname: "vm-1", CPU: "x", Kernel: "Linux"}}}
	if err := p.Check("p.yaml"); err != nil {
		t.Error(err)
	}
}

// A figure the type cannot take is listed as not fitted, with the measured value, the type's
// rule and the model's own figure, never dropped.
func TestFitVolumeSaysWhatTheTypeCannotTake(t *testing.T) {
	s := samples(900, 2990, 2900, 120)
	f := FitVolume(s, DefaultVolumePlan(), VolumeTarget{Type: "gp3", SizeBytes: 100 << 30})
	for option, want := range map[string][]string{
		"iops":       {"measured 2990 IOPS", "3000", "the model keeps its own, 3000 IOPS"},
		"throughput": {"measured 120.0 MiB/s", "125", "the model keeps its own, 125.0 MiB/s"},
	} {
		why := notFitted(f, option)
		for _, w := range want {
			if !strings.Contains(why, w) {
				t.Errorf("%s: not fitted %q lacks %q", option, why, w)
			}
		}
		if f.Value(option) != "" {
			t.Errorf("%s fitted as %s", option, f.Value(option))
		}
	}
	if f.Value("latency") == "" {
		t.Error("latency was not fitted")
	}
	// gp2 provisions neither; without the size, that is still known.
	f = FitVolume(samples(900, 2990, 2900, 120), DefaultVolumePlan(), VolumeTarget{Type: "gp2"})
	if why := notFitted(f, "iops"); !strings.Contains(why, "gp2 provisions no iops") {
		t.Errorf("gp2 iops: %q", why)
	}
	// Without --type, every figure is kept: each entry's type decides when a run applies it.
	f = FitVolume(samples(900, 2990, 2900, 120), DefaultVolumePlan(), VolumeTarget{})
	if f.Value("iops") != "2990" || f.Value("throughput") != "120.0" || f.AppliesTo != nil {
		t.Errorf("no type: %+v", f)
	}
}

// Depth 1 running at the depth-32 rate is the IOPS limit's queue, not a service time.
func TestFitVolumeRefusesALatencyThatIsQueueing(t *testing.T) {
	f := FitVolume(samples(95, 100, 100, 25), DefaultVolumePlan(), VolumeTarget{})
	if f.Value("latency") != "" || !strings.Contains(notFitted(f, "latency"), "waiting for the volume's IOPS limit") {
		t.Errorf("latency %q, not fitted %q", f.Value("latency"), notFitted(f, "latency"))
	}
}

// The drain: the step where the rate falls is interpolated; the baseline is over wall time.
func TestAnalyzeDrain(t *testing.T) {
	sec := 2 * time.Second
	// 3,000 IOPS for 2 steps and 0.5 s of the third, then 300.
	fell := int64(3000*0.5 + 300*1.5)
	// After it, 300 IOPS over each step's 2.2 s of wall time: the start-up's refill spent at once.
	steps := []PhaseResult{step(PhaseDrain, 6000, sec, sec), step(PhaseDrain, 6000, sec, sec), step(PhaseDrain, fell, sec, sec),
		step(PhaseDrain, 660, sec, sec+200*time.Millisecond), step(PhaseDrain, 660, sec, sec+200*time.Millisecond)}
	d := AnalyzeDrain(steps, 3000)
	if !d.Emptied || d.BaseUpper || math.Abs(d.Base-300) > 1 || math.Abs(d.Burst-3000) > 1 {
		t.Fatalf("%+v", d)
	}
	if math.Abs(d.After.Seconds()-4.5) > 0.01 || math.Abs(d.Credits-2700*4.5) > 30 {
		t.Errorf("emptied after %s with %.0f credits: want 4.5s and %.0f", d.After, d.Credits, 2700*4.5)
	}
	// What the baseline refilled while fio started between burst steps was spent too: it is
	// not counted as held at the start.
	steps[0].Wall, steps[1].Wall = sec+300*time.Millisecond, sec+300*time.Millisecond
	if d2 := AnalyzeDrain(steps, 3000); math.Abs(d.Credits-d2.Credits-2*300*0.3) > 1 {
		t.Errorf("credits %.0f with start-ups between the burst steps, %.0f without", d2.Credits, d.Credits)
	}
	// A bucket already empty: the first step falls; the burst is the depth-32 phase's.
	d = AnalyzeDrain([]PhaseResult{step(PhaseDrain, 600, sec, sec)}, 3000)
	if !d.Emptied || !d.BaseUpper || d.After != 0 || d.Burst != 3000 {
		t.Errorf("empty at the start: %+v", d)
	}
	// No fall within the steps: not emptied, and how long it held.
	d = AnalyzeDrain([]PhaseResult{step(PhaseDrain, 6000, sec, sec), step(PhaseDrain, 5900, sec, sec)}, 3000)
	if d.Emptied || d.After != 2*sec {
		t.Errorf("held: %+v", d)
	}
}

// credit_scale: the drain's credits plus what the earlier phases spent above the baseline, over
// the type's published bucket; only with the type and its size.
func TestFitVolumeCreditScale(t *testing.T) {
	sec := 5 * time.Second
	s := samples(900, 3000, 2900, 128)
	s.Drain = []PhaseResult{step(PhaseDrain, 15000, sec, sec), step(PhaseDrain, 1500, sec, sec), step(PhaseDrain, 1500, sec, sec)}
	plan := DefaultVolumePlan()
	plan.Long = true
	f := FitVolume(s, plan, VolumeTarget{Type: "gp2", SizeBytes: 100 << 30})
	// Spent by the earlier phases above 300 IOPS (units of 256 KiB: 4 per 1 MiB I/O), then
	// 2,700 a second for 5 s.
	spent := 0.0
	for _, r := range []PhaseResult{s.Layout, s.ReadQD1, s.WriteQD1, s.ReadQD32, s.ReadQD8, s.SeqRead} {
		units := float64(r.IOs)
		if r.Phase.BS == mib {
			units *= 4
		}
		spent += max(0, units-300*r.Elapsed.Seconds())
	}
	want := (spent + 2700*5) / 5.4e6
	got := f.Value("credit_scale")
	if got == "" || math.Abs(parse(t, got)/want-1) > 0.01 {
		t.Errorf("credit_scale %q, want %.3g (not fitted: %s)", got, want, notFitted(f, "credit_scale"))
	}
	if why := notFitted(FitVolume(s, plan, VolumeTarget{}), "credit_scale"); !strings.Contains(why, "without --type") {
		t.Errorf("no type: %q", why)
	}
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// The plan's bounds name their flags; its phases and longest time follow from it.
func TestVolumePlanChecks(t *testing.T) {
	p := DefaultVolumePlan()
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if got := p.MaxDuration(); got != p.LayoutMax+5*p.Runtime {
		t.Errorf("at most %s", got)
	}
	for flag, change := range map[string]func(*VolumePlan){
		"--size":      func(p *VolumePlan) { p.FileBytes = mib },
		"--runtime":   func(p *VolumePlan) { p.Runtime = 0 },
		"--drain-max": func(p *VolumePlan) { p.Long, p.DrainMax = true, time.Second },
	} {
		q := DefaultVolumePlan()
		change(&q)
		if err := q.Check(); err == nil || !strings.HasPrefix(err.Error(), flag+" ") || !strings.Contains(err.Error(), "want") {
			t.Errorf("%s: %v", flag, err)
		}
	}
	var b bytes.Buffer
	for _, ph := range p.Phases() {
		b.WriteString(ph.What() + ";")
	}
	if b.String() != "1 MiB sequential writes;4 KiB random reads;4 KiB random writes;4 KiB random reads;4 KiB random reads;1 MiB sequential reads;" {
		t.Errorf("phases %s", b.String())
	}
}
