package runner

import (
	"fmt"
	"slices"
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
// gcsfuse, 2 s over Litestream, 7 s for the Rails app over Litestream. Once MeasuredAfter cells
// have run, the progress line's ETA is measured from them instead.
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
	// drawn kill moment; for a workload that runs to its own end, what bounds its measured part
	// (fio's runtime), counted in full.
	Load time.Duration
	// Transfers is what the backends' models allow the files such a workload moves outside its
	// measured part, summed: laying out what it reads, writing back what it wrote at each close
	// (workload.Length, backend.Transfer).
	Transfers time.Duration
	// Unbounded cells run a workload to its own end, of a length no parameter bounds: Load
	// leaves them out.
	Unbounded int
	StartUps  int // backend starts: one per cell, or one per backend entry and repeat (share_backend)
	Probes    int // backend entries whose lab ceiling is measured before the first cell (not counted)
	// PerCell is each cell's estimate in the plan's order, a backend's start-up with the cell that
	// starts it; 0 for a cell of unknown length.
	PerCell []time.Duration
	// NotCounted names what the cells do that the estimate leaves out.
	NotCounted []string
	// laidOut and writtenBack are Transfers' two parts, for the plan line.
	laidOut, writtenBack time.Duration
	perCell              string
	workload             string
}

// EstimatePlan is the size and length of plan, from its cells, the scenario's duration and
// warm-up, what its workload says of a cell's length (workload.Length) and its backends' models of
// moving files (backend.Transfer), and AssumedStartUp.
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
	var notCounted notes
	var minBound, maxBound time.Duration
	var boundBy string // what bounds the cells' measured part, if they say
	for _, c := range plan.Cells {
		var cell time.Duration
		switch {
		case e.Crash:
			cell = warmup + kills[c.Index]
			e.Load += cell
		case info.Timed:
			cell = warmup + duration
			e.Load += cell
		default:
			var l workload.Length
			if info.Length != nil {
				l = info.Length(c.Resolved)
			}
			if l.Bound <= 0 {
				e.Unbounded++
				e.PerCell = append(e.PerCell, 0)
				countStartUp(&e, started, spec.ShareBackend, c)
				continue
			}
			if minBound == 0 || l.Bound < minBound {
				minBound = l.Bound
			}
			maxBound = max(maxBound, l.Bound)
			if boundBy == "" {
				boundBy = l.BoundBy
			} else if boundBy != l.BoundBy {
				boundBy = "own bound"
			}
			laidOut, writtenBack := transferTime(l, c.Entry, &notCounted)
			e.Load += l.Bound
			e.laidOut += laidOut
			e.writtenBack += writtenBack
			e.Transfers += laidOut + writtenBack
			cell = l.Bound + laidOut + writtenBack
		}
		if countStartUp(&e, started, spec.ShareBackend, c) {
			cell += AssumedStartUp
		}
		e.PerCell = append(e.PerCell, cell)
	}
	e.NotCounted = notCounted
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
	case e.Unbounded < e.Cells:
		bound := seconds(maxBound)
		if minBound != maxBound {
			bound = seconds(minBound) + ".." + seconds(maxBound)
		}
		if boundBy == "" {
			boundBy = "own bound"
		}
		e.perCell = fmt.Sprintf("per cell up to %s's %s (%s; less when its work is done first)", info.Name, boundBy, bound)
		var moves []string
		if e.laidOut > 0 {
			moves = append(moves, humanDuration(e.laidOut)+" laying out what it reads")
		}
		if e.writtenBack > 0 {
			moves = append(moves, humanDuration(e.writtenBack)+" writing back what it wrote, at each close")
		}
		if len(moves) > 0 {
			e.perCell += fmt.Sprintf(" + its files moved through the backend as its model allows (in all: %s)", strings.Join(moves, ", "))
		}
		e.perCell += " + " + startUp
		if e.Unbounded > 0 {
			e.perCell = fmt.Sprintf("%d of them run to their own end, of a length nothing bounds; %s", e.Unbounded, e.perCell)
		}
	default:
		e.perCell = fmt.Sprintf("each cell runs workload %s to its own end, plus %s", info.Name, startUp)
	}
	return e, nil
}

// countStartUp counts the backend start c makes, if it makes one (share_backend: one per backend
// entry and repeat), and says whether it does.
func countStartUp(e *Estimate, started map[string]bool, shared bool, c scenario.Cell) bool {
	key := fmt.Sprint(c.Backend, c.Repeat)
	if shared && started[key] {
		return false
	}
	started[key] = true
	e.StartUps++
	return true
}

// transferTime is what entry's model allows the files a cell of length l moves outside its
// measured part: its layout at the model's bandwidth; and for an entry that writes a file back at
// each close, each close's upload and each later writer's read-back of the whole file, or the
// per-object write limit's spacing of the closes, whichever is longer (files apart move at once).
// What it cannot count is added to notCounted.
func transferTime(l workload.Length, entry scenario.BackendSpec, notCounted *notes) (laidOut, writtenBack time.Duration) {
	if l.LayoutBytes == 0 && l.WrittenFiles == 0 {
		return 0, 0
	}
	t, _ := backend.TransferOf(entry.Name, entry.Options) // none: nothing known to move
	perSecond := t.WriteMiBps * (1 << 20)
	at := func(bytes float64) time.Duration { return time.Duration(bytes / perSecond * float64(time.Second)) }
	if l.LayoutBytes > 0 {
		if perSecond > 0 {
			laidOut = at(float64(l.LayoutBytes))
		} else {
			notCounted.add("laying out files on " + entry.ID() + " (no modelled bandwidth)")
		}
	}
	if !t.WriteBack || l.WrittenFiles == 0 {
		return laidOut, 0
	}
	closes := l.ClosesPerFile
	var moved, spaced time.Duration
	switch {
	case perSecond <= 0:
		notCounted.add("writing back files on " + entry.ID() + " (no modelled bandwidth)")
	case l.ClosedBytes > 0:
		moved = at(float64(2*closes-1) * float64(l.ClosedBytes))
	default:
		notCounted.add("what a sequential writer wrote, written back at its close (as far as its speed took it)")
	}
	if t.ObjectWriteInterval > 0 && closes > t.ObjectWriteBurst {
		spaced = time.Duration(closes-t.ObjectWriteBurst) * t.ObjectWriteInterval
		notCounted.add("the bucket's refusals (429) above one write per object per " + seconds(t.ObjectWriteInterval) + ", and their retries")
	}
	return laidOut, max(moved, spaced)
}

// notes are things said once each, in the order first said.
type notes []string

func (n *notes) add(s string) {
	if !slices.Contains(*n, s) {
		*n = append(*n, s)
	}
}

// Total is the estimated length: the load, the transfers and the start-ups; with unbounded cells,
// of the others alone.
func (e Estimate) Total() time.Duration {
	return e.Load + e.Transfers + time.Duration(e.StartUps)*AssumedStartUp
}

// Known says whether Total is an estimate of the whole run (every cell's length counted).
func (e Estimate) Known() bool { return e.Unbounded == 0 }

// String is the plan line: "plan: 30 cells (3 backends x 10 points x 1 repeat), about 1 h 5 min:
// per cell ...", then what it does not count. Never "at most": a start-up is assumed, and a
// workload's own bound holds for its measured part alone.
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
		fmt.Fprintf(&b, ", about %s for the %d it can count, more for the rest: %s", humanDuration(e.Total()), e.Cells-e.Unbounded, e.perCell)
	default:
		fmt.Fprintf(&b, ", about %s: %s", humanDuration(e.Total()), e.perCell)
	}
	if len(e.NotCounted) > 0 {
		fmt.Fprintf(&b, "; not counted: %s", strings.Join(e.NotCounted, "; "))
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
		return fmt.Sprintf("%s, about %s for the %d it can count", plural(e.Cells, one, many), humanDuration(e.Total()), e.Cells-e.Unbounded)
	case len(e.NotCounted) > 0:
		return plural(e.Cells, one, many) + ", about " + humanDuration(e.Total()) + " and what it cannot count"
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
