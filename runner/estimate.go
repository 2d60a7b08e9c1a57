package runner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"persistlab/backend"
	"persistlab/scenario"
	"persistlab/workload"
)

// AssumedStartUp is what an estimate counts per backend start for all that is not load: starting
// and stopping the backend and the system under test, a crash run's recovery, saving. It is
// assumed: on a 2-core machine a one-cell run spent 1 s beside its load on the counter over
// gcsfuse, 2 s over Litestream, 7 s for the Rails app over Litestream. Once a cell has run, the
// progress line's ETA is the cells' measured time instead.
const AssumedStartUp = 5 * time.Second

// LongRun is an estimate above which run says how to shorten the run.
const LongRun = 5 * time.Minute

// Estimate is a plan's size and length, said before it runs.
type Estimate struct {
	Cells int // cells of this plan (a shard's share)
	Whole int // cells of the whole plan
	Shard string
	// Backends x Points x Runs is the whole plan; Runs are repeats, or crash runs per backend
	// and point.
	Backends, Points, Runs int
	Crash                  bool
	Timed                  bool // the workload runs for the scenario's duration (--duration shortens it)
	// Load is the cells' load summed: duration and warm-up, or for crash runs warm-up and each
	// drawn kill moment; for a workload that runs to its own end, its bound (fio's runtime).
	Load time.Duration
	// Unbounded cells run a workload to its own end, of a length no parameter bounds: Load
	// leaves them out.
	Unbounded int
	// Bounded: Load holds a bound, not a length (fio stops at its runtime or when done).
	Bounded  bool
	StartUps int // backend starts: one per cell, or one per backend entry and repeat (share_backend)
	Probes   int // backend entries whose lab ceiling is measured before the first cell (not counted)
	perCell  string
	workload string
}

// EstimatePlan is the size and length of plan, from its cells, the scenario's duration and
// warm-up, and AssumedStartUp.
func EstimatePlan(plan *scenario.Plan) (Estimate, error) {
	spec := plan.Spec
	info, err := workload.Lookup(spec.Workload.Type)
	if err != nil {
		return Estimate{}, err
	}
	e := Estimate{Cells: len(plan.Cells), Whole: plan.Whole, Backends: len(spec.Backends), Points: 1, Runs: spec.Repeat, Timed: info.Timed, workload: info.Name}
	if plan.Shard != nil {
		e.Shard = fmt.Sprintf("%d/%d", plan.Shard.Index, plan.Shard.Of)
	}
	for _, a := range spec.Sweep {
		e.Points *= len(a.Values)
	}
	warmup, duration := time.Duration(spec.Warmup), time.Duration(spec.Duration)
	var kills map[int]time.Duration
	if spec.Crash != nil {
		e.Crash, e.Runs, kills = true, spec.Crash.Count, crashDraws(spec, plan.Cells)
	}
	started := map[string]bool{}
	for _, c := range plan.Cells {
		if !spec.ShareBackend || !started[fmt.Sprint(c.Backend, c.Repeat)] {
			e.StartUps++
			started[fmt.Sprint(c.Backend, c.Repeat)] = true
		}
		switch {
		case e.Crash:
			e.Load += warmup + kills[c.Index]
		case info.Timed:
			e.Load += warmup + duration
		case info.MaxLength != nil && info.MaxLength(c.Resolved) > 0:
			e.Load += info.MaxLength(c.Resolved)
			e.Bounded = true
		default:
			e.Unbounded++
		}
	}
	for _, entry := range spec.Backends {
		if _, modelled := backend.VolumeModelOf(entry.Name, entry.Options); planHas(plan.Cells, entry.ID()) && (info.MovesBulk() || modelled) {
			e.Probes++
		}
	}
	startUp := fmt.Sprintf("about %s start-up (assumed)", seconds(AssumedStartUp))
	switch {
	case spec.ShareBackend:
		startUp = fmt.Sprintf("about %s start-up (assumed) per backend and repeat", seconds(AssumedStartUp))
	case e.Crash:
		startUp = fmt.Sprintf("about %s start-up and recovery (assumed)", seconds(AssumedStartUp))
	}
	warm := ""
	if warmup > 0 {
		warm = seconds(warmup) + " warm-up + "
	}
	switch {
	case e.Crash:
		e.perCell = fmt.Sprintf("per run %sload until the kill (%s..%s, drawn) + %s", warm, seconds(spec.Crash.After.From), seconds(spec.Crash.After.To), startUp)
	case info.Timed:
		e.perCell = fmt.Sprintf("per cell %s%s of load + %s", warm, seconds(duration), startUp)
	case e.Unbounded == 0:
		e.perCell = fmt.Sprintf("per cell at most workload %s's runtime + %s", info.Name, startUp)
	default:
		e.perCell = fmt.Sprintf("each cell runs workload %s to its own end, plus %s", info.Name, startUp)
	}
	return e, nil
}

// Total is the estimated length: the load and the start-ups; with unbounded cells, a floor.
func (e Estimate) Total() time.Duration {
	return e.Load + time.Duration(e.StartUps)*AssumedStartUp
}

// Known says whether Total is an estimate of the whole run (every cell's load known or bounded).
func (e Estimate) Known() bool { return e.Unbounded == 0 }

// String is the plan line: "plan: 30 cells (3 backends x 10 points x 1 repeat), about 1 h 5 min:
// per cell ...".
func (e Estimate) String() string {
	one, many := "cell", "cells"
	if e.Crash {
		one, many = "crash run", "crash runs"
	}
	runs := plural(e.Runs, "repeat", "repeats")
	if e.Crash {
		runs = plural(e.Runs, "crash", "crashes")
	}
	shape := fmt.Sprintf("%s x %s x %s", plural(e.Backends, "backend", "backends"), plural(e.Points, "point", "points"), runs)
	var b strings.Builder
	if e.Shard != "" {
		fmt.Fprintf(&b, "plan: %d of %s (shard %s of %s)", e.Cells, plural(e.Whole, one, many), e.Shard, shape)
	} else {
		fmt.Fprintf(&b, "plan: %s (%s)", plural(e.Cells, one, many), shape)
	}
	switch {
	case e.Unbounded == e.Cells:
		fmt.Fprintf(&b, "; how long it takes cannot be told before it runs: %s", e.perCell)
	case !e.Known():
		fmt.Fprintf(&b, ", at least %s; %d of them run to their own end, of a length nothing bounds", humanDuration(e.Total()), e.Unbounded)
	case e.Bounded:
		fmt.Fprintf(&b, ", at most about %s: %s", humanDuration(e.Total()), e.perCell)
	default:
		fmt.Fprintf(&b, ", about %s: %s", humanDuration(e.Total()), e.perCell)
	}
	if e.Probes > 0 {
		fmt.Fprintf(&b, "; first, the lab's ceiling is measured for %s (not counted)", plural(e.Probes, "backend", "backends"))
	}
	return b.String()
}

// Brief is the estimate in a few words: "12 cells, about 2 min".
func (e Estimate) Brief() string {
	one, many := "cell", "cells"
	if e.Crash {
		one, many = "crash run", "crash runs"
	}
	switch {
	case e.Unbounded == e.Cells:
		return plural(e.Cells, one, many) + ", of a length that cannot be told before it runs"
	case !e.Known():
		return plural(e.Cells, one, many) + ", at least " + humanDuration(e.Total())
	case e.Bounded:
		return plural(e.Cells, one, many) + ", at most about " + humanDuration(e.Total())
	}
	return plural(e.Cells, one, many) + ", about " + humanDuration(e.Total())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// seconds is d in seconds, as a scenario's durations are written: "120 s", "0.5 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// humanDuration is d for people, to the precision an estimate has: "45 s", "12 min", "1 h 5 min".
func humanDuration(d time.Duration) string {
	switch {
	case d < 90*time.Second:
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	}
	m := int(d.Round(time.Minute) / time.Minute)
	if m%60 == 0 {
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}
