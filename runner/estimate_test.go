package runner_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

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
				if want := cells * (warm + time.Duration(spec.Duration)); e.Load != want || !e.Known() || e.Bounded {
					t.Errorf("%s: load %v, want %v", name, e.Load, want)
				}
			case e.Bounded:
				if !strings.Contains(e.String(), "at most") || e.Load <= 0 {
					t.Errorf("%s: a bound of %v: %q", name, e.Load, e.String())
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
			if e.StartUps != startUps || e.Total() != e.Load+time.Duration(startUps)*runner.AssumedStartUp {
				t.Errorf("%s: %d start-ups, want %d; total %v", name, e.StartUps, startUps, e.Total())
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

// fio runs to its own end, which its runtime bounds: the estimate of seed 003's plan is that
// bound, each cell's runtime and ramp time, and says "at most".
func TestEstimateBoundsFioByItsRuntime(t *testing.T) {
	plan := builtinPlan(t, "gcsfuse-fio", scenario.Overrides{})
	e, err := runner.EstimatePlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	var bound time.Duration
	for _, c := range plan.Cells {
		runtime, err1 := time.ParseDuration(c.Resolved["runtime"])
		ramp, err2 := time.ParseDuration(c.Resolved["ramp_time"])
		if err1 != nil || err2 != nil || runtime <= 0 {
			t.Fatalf("cell %d: runtime %q, ramp_time %q", c.Index, c.Resolved["runtime"], c.Resolved["ramp_time"])
		}
		bound += runtime + ramp
	}
	if !e.Known() || !e.Bounded || e.Load != bound || !strings.Contains(e.String(), ", at most about ") {
		t.Errorf("load %v, want the runtimes' %v: %q", e.Load, bound, e.String())
	}
}
