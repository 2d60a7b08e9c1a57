package runner_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"persistlab/lab/bucket"
	"persistlab/param"
	"persistlab/runner"
	"persistlab/scenario"
	"persistlab/workload"
)

func builtinPlan(t *testing.T, name string, o scenario.Overrides) *scenario.Plan {
	t.Helper()
	s, err := scenario.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(o); err != nil {
		t.Fatal(err)
	}
	plan, err := scenario.NewPlan(s, runner.Known())
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// Every built-in scenario's estimate counts its plan's cells as backends x points x runs, and
// adds up what each cell is made of: its load (duration and warm-up, a crash run's drawn kill
// moment, fio's runtime as a bound) and one assumed start-up per backend start. A quick
// variant is never estimated longer than the full plan.
func TestEstimateAddsUpEveryBuiltinPlan(t *testing.T) {
	for _, name := range scenario.Builtins() {
		var totals [2]time.Duration
		for i, quick := range []bool{false, true} {
			plan := builtinPlan(t, name, scenario.Overrides{Quick: quick})
			e, err := runner.EstimatePlan(plan)
			if err != nil {
				t.Fatal(err)
			}
			spec := plan.Spec
			totals[i] = e.Total()
			if e.Cells != len(plan.Cells) || e.Backends*e.Points*e.Runs != len(plan.Cells) {
				t.Errorf("%s (quick %v): %d cells, %d x %d x %d, the plan has %d", name, quick, e.Cells, e.Backends, e.Points, e.Runs, len(plan.Cells))
			}
			if !strings.HasPrefix(e.String(), fmt.Sprintf("plan: %d ", len(plan.Cells))) {
				t.Errorf("%s: %q", name, e.String())
			}
			info, _ := workload.Lookup(spec.Workload.Type)
			warm, cells := time.Duration(spec.Warmup), time.Duration(len(plan.Cells))
			switch {
			case spec.Crash != nil:
				lo, hi := cells*(warm+spec.Crash.After.From), cells*(warm+spec.Crash.After.To)
				if e.Load < lo || e.Load > hi || !strings.Contains(e.String(), "crash runs") {
					t.Errorf("%s: crash runs' load %v, want within %v..%v: %q", name, e.Load, lo, hi, e.String())
				}
			case info.Timed:
				if want := cells * (warm + time.Duration(spec.Duration)); e.Load != want || !e.Known() || e.Transfers != 0 {
					t.Errorf("%s: load %v, want %v", name, e.Load, want)
				}
			case e.Unbounded < e.Cells:
				var bounds time.Duration
				for _, c := range plan.Cells {
					bounds += info.Length(c.Resolved).Bound
				}
				if e.Load != bounds || e.Load <= 0 {
					t.Errorf("%s: load %v, want the cells' own bounds, %v: %q", name, e.Load, bounds, e.String())
				}
			default:
				if e.Known() || !strings.Contains(e.String(), "cannot be told before it runs") {
					t.Errorf("%s: workload %s runs to its own end, yet the estimate claims to know: %q", name, info.Name, e.String())
				}
			}
			startUps := len(plan.Cells)
			if spec.ShareBackend {
				startUps = e.Backends * e.Runs
			}
			if e.StartUps != startUps || e.Total() != e.Load+e.Transfers+time.Duration(startUps)*runner.AssumedStartUp {
				t.Errorf("%s: %d start-ups, want %d; total %v", name, e.StartUps, startUps, e.Total())
			}
			// Each cell's estimate, which the progress line starts from, adds up to the total.
			var sum time.Duration
			for _, d := range e.PerCell {
				sum += d
			}
			if len(e.PerCell) != len(plan.Cells) || (e.Known() && sum != e.Total()) {
				t.Errorf("%s: %d cells' estimates summing to %v; %d cells, total %v", name, len(e.PerCell), sum, len(plan.Cells), e.Total())
			}
			// No estimate is a bound: a start-up is assumed, and a workload's own bound holds for
			// its measured part alone.
			for _, line := range []string{e.String(), e.Brief()} {
				if strings.Contains(line, "at most") {
					t.Errorf("%s: %q", name, line)
				}
			}
		}
		if totals[1] > totals[0] {
			t.Errorf("%s: quick %v is longer than the full plan's %v", name, totals[1], totals[0])
		}
	}
}

// The plan line names the shape of the plan and the estimate in words a person reads: for seed
// 000's full plan, 90 cells of 122 s each and the assumed start-up, 3 h 11 min.
func TestEstimateLineOfSeed000(t *testing.T) {
	e, err := runner.EstimatePlan(builtinPlan(t, "cloudrun-sqlite", scenario.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	perCell := 120*time.Second + 2*time.Second + runner.AssumedStartUp
	hours, minutes := int((90 * perCell).Round(time.Minute).Hours()), int((90*perCell).Round(time.Minute).Minutes())%60
	want := fmt.Sprintf("plan: 90 cells (3 backends x 10 points x 3 repeats), about %d h %d min: per cell 2 s warm-up + 120 s of load + about %v s start-up (assumed)", hours, minutes, runner.AssumedStartUp.Seconds())
	if e.String() != want {
		t.Errorf("got  %q\nwant %q", e.String(), want)
	}
	// A shard says which share of the whole it is.
	plan := builtinPlan(t, "cloudrun-sqlite", scenario.Overrides{})
	share, err := plan.Share(scenario.Shard{Index: 0, Of: 3, By: scenario.ShardByPoint})
	if err != nil {
		t.Fatal(err)
	}
	e, err = runner.EstimatePlan(share)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.String(), fmt.Sprintf("plan: %d of 90 cells (shard 0/3 of 3 backends x 10 points x 3 repeats)", len(share.Cells))) || len(share.Cells) >= 90 {
		t.Errorf("shard: %q", e.String())
	}
}

// fio's runtime and ramp time bound its measured I/O alone: seed 003's estimate counts them in
// full, adds the layout of the files its read jobs read at the bucket model's bandwidth (and
// nothing for writes to files of their own, closed once each), and says "up to".
func TestEstimateBoundsFioByItsRuntime(t *testing.T) {
	plan := builtinPlan(t, "gcsfuse-fio", scenario.Overrides{})
	e, err := runner.EstimatePlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	var bound time.Duration
	var laidOut int64
	for _, c := range plan.Cells {
		runtime, err1 := time.ParseDuration(c.Resolved["runtime"])
		ramp, err2 := time.ParseDuration(c.Resolved["ramp_time"])
		if err1 != nil || err2 != nil || runtime <= 0 {
			t.Fatalf("cell %d: runtime %q, ramp_time %q", c.Index, c.Resolved["runtime"], c.Resolved["ramp_time"])
		}
		bound += runtime + ramp
		if strings.Contains(c.Resolved["rw"], "read") {
			size, _ := param.ParseSize(c.Resolved["file_size"])
			jobs, _ := strconv.Atoi(c.Resolved["numjobs"])
			laidOut += size * int64(jobs)
		}
	}
	perSecond := bucket.BenchModel().StreamBytesPerSecond
	want := time.Duration(float64(laidOut) / perSecond * float64(time.Second))
	if !e.Known() || e.Load != bound || !strings.Contains(e.String(), ", about ") || !strings.Contains(e.String(), "up to fio's ramp time and runtime") {
		t.Errorf("load %v, want the runtimes' %v: %q", e.Load, bound, e.String())
	}
	if d := e.Transfers - want; d < -time.Second || d > time.Second {
		t.Errorf("transfers %v, want %v: %d bytes laid out at %.1f MiB/s", e.Transfers, want, laidOut, perSecond/(1<<20))
	}
}

// fioPlan is seed 002's plan narrowed to one backend, one access pattern and the file sizes given.
func fioPlan(t *testing.T, backendName, rw string, sizes ...string) (runner.Estimate, *scenario.Plan) {
	t.Helper()
	plan := builtinPlan(t, "gcsfuse-cache", scenario.Overrides{Backends: []string{backendName}, Repeat: 1, RepeatSet: true,
		Sweep: []string{"file_size=" + strings.Join(sizes, ","), "rw=" + rw}})
	e, err := runner.EstimatePlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.PerCell) != len(sizes) {
		t.Fatalf("%d cells' estimates, want %d", len(e.PerCell), len(sizes))
	}
	return e, plan
}

// What a fio cell moves outside its runtime grows with its file: a read lays the file out, and a
// random write through gcsfuse's 16 jobs writes it back at each close and reads it back before
// each later write. A file four times larger adds four times the time; the plan line says what
// it counts and what it does not, and never "at most".
func TestEstimateOfFioGrowsWithItsFileSize(t *testing.T) {
	for _, rw := range []string{"read", "randwrite"} {
		e, plan := fioPlan(t, "gcsfuse", rw, "256MiB", "1GiB")
		fixed := 10*time.Second + runner.AssumedStartUp // runtime and start-up
		small, large := e.PerCell[0]-fixed, e.PerCell[1]-fixed
		if small <= 0 || large <= 0 {
			t.Fatalf("%s: cells of %v and %v, nothing beyond the runtime and start-up %v", rw, e.PerCell[0], e.PerCell[1], fixed)
		}
		if ratio := float64(large) / float64(small); ratio < 3.99 || ratio > 4.01 {
			t.Errorf("%s: 1 GiB moves in %v, 256 MiB in %v: %.3fx, want 4x", rw, large, small, ratio)
		}
		if line := e.String(); strings.Contains(line, "at most") || !strings.Contains(line, map[string]string{"read": " laying out what it reads)", "randwrite": " writing back what it wrote, at each close)"}[rw]) {
			t.Errorf("%s: %q", rw, line)
		}
		// A random write's file moves 31 times: 16 uploads, 15 read-backs; a read's once.
		moves := map[string]float64{"read": 1, "randwrite": 31}[rw]
		perSecond := bucket.DefaultModel().StreamBytesPerSecond
		want := time.Duration(moves * float64(1<<30) / perSecond * float64(time.Second))
		if d := large - want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s of 1 GiB: %v beyond the runtime, want %v", rw, large, want)
		}
		if plan.Cells[1].Resolved["numjobs"] != "16" {
			t.Fatalf("numjobs %q", plan.Cells[1].Resolved["numjobs"])
		}
	}
	// Sequential writes: how far each got is its speed's, not counted but said; the bucket's
	// per-object limit spaces the 16 closes, so every size counts the same.
	e, _ := fioPlan(t, "gcsfuse", "write", "10KiB", "1GiB")
	if e.PerCell[0] != e.PerCell[1] || e.PerCell[0] <= 10*time.Second+runner.AssumedStartUp {
		t.Errorf("sequential writes: %v and %v", e.PerCell[0], e.PerCell[1])
	}
	if line := e.String(); !strings.Contains(line, "not counted: what a sequential writer wrote") || !strings.Contains(line, "429") {
		t.Errorf("sequential writes: %q", line)
	}
	// On a local directory nothing models the layout: the estimate says so rather than count it.
	e, _ = fioPlan(t, "local", "read", "256MiB", "1GiB")
	if e.Transfers != 0 || !strings.Contains(e.String(), "not counted: laying out files on local (no modelled bandwidth)") {
		t.Errorf("local: transfers %v: %q", e.Transfers, e.String())
	}
}

// A time-limited git crawler is bounded by its time_limit, and the write-back's cap after it;
// seed 004's plan, which runs each cell to its 20,000th change, stays one nothing bounds.
func TestEstimateBoundsGitByItsTimeLimit(t *testing.T) {
	e, err := runner.EstimatePlan(builtinPlan(t, "ebs-git", scenario.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	if e.Known() || e.Unbounded != e.Cells {
		t.Errorf("ebs-git: %d of %d cells unbounded: %q", e.Unbounded, e.Cells, e.String())
	}
	plan := builtinPlan(t, "ebs-git", scenario.Overrides{Set: []string{"time_limit=20s", "writeback=true"}, Sweep: []string{"rate=20,40"}})
	if e, err = runner.EstimatePlan(plan); err != nil {
		t.Fatal(err)
	}
	perCell := 20*time.Second + 40*time.Second // the limit, and the write-back's cap of twice it
	if e.Unbounded != 0 || e.Load != time.Duration(len(plan.Cells))*perCell || !strings.Contains(e.String(), "time_limit") {
		t.Errorf("ebs-git for 20 s with its write-back: load %v for %d cells, want %v each: %q", e.Load, len(plan.Cells), perCell, e.String())
	}
	t.Log(e.String())
}
