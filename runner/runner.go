// Package runner executes a scenario's plan: for every cell it starts the backend, hands the
// workload its target and parameters, collects what the backend counted, stops everything, and
// saves the results file as it goes (after every cell while saving is cheap beside the cells:
// saver) and at the end, so an interrupted run keeps every finished cell. It
// knows neither the workloads' nor the backends' internals: both come from their registries.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/internal/tools"
	"persistlab/param"
	"persistlab/results"
	"persistlab/scenario"
	"persistlab/workload"
)

// Options of one run.
type Options struct {
	Out      string    // results.json path
	WorkDir  string    // scratch space; each cell gets a fresh subdirectory
	Self     string    // the persistlab executable, for workloads that run part of it
	Progress io.Writer // nil: quiet
	// ProgressWidth is the terminal's width: the progress line is cut to fit it, as a line that
	// wraps cannot be cleared by returning to its start (0: not cut).
	ProgressWidth int
	Command       []string // as typed, for the results file
	Keep          bool     // backends leave their data in the work directory (run --keep)
	// ToolOutputDir is where workloads keep their tools' own report of each cell (run --fio-json).
	ToolOutputDir string
	// Derive recomputes the results' derived figures (aggregates) before each save, so the file
	// holds them for readers other than persistlab (report.Summarize); nil leaves them to the
	// report, which derives them again on load.
	Derive func(*results.Results)
	// PausedPageOut are the machine's page-out policies paused for the run (run
	// --pause-host-pageout), for the results' machine section.
	PausedPageOut []string
}

// run is one execution of a plan.
type run struct {
	spec *scenario.Spec
	plan *scenario.Plan
	opts Options
	info workload.Info
	wl   workload.Workload
	res  *results.Results
	// versions are the programs the run's backends and workload name, for the results file.
	versions map[string]string
	// shared is the backend consecutive cells share (scenario share_backend), and its target.
	shared       *cellLife
	sharedTarget backend.Target
	// space is what each backend entry keeps under the work directory (checkSpace).
	space map[string]backendSpace
	// progress is the terminal's status line; every warning during the run goes through it.
	progress *progress
}

// Run plans spec (scenario.NewPlan: checked once, every cell's parameters resolved) and runs the
// plan (RunPlan).
func Run(ctx context.Context, spec *scenario.Spec, opts Options) (*results.Results, error) {
	plan, err := scenario.NewPlan(spec, Known())
	if err != nil {
		return nil, err
	}
	return RunPlan(ctx, plan, opts)
}

// RunPlan executes a plan. It returns the results (also written to opts.Out) and the first error
// that stopped the run; cells that fail on their own are recorded and the run goes on. Everything
// knowable before the first cell (every backend's options, every cell's parameters as the
// workload reads them) is checked first.
func RunPlan(ctx context.Context, plan *scenario.Plan, opts Options) (*results.Results, error) {
	spec := plan.Spec
	r, err := prepare(ctx, plan, opts)
	if err != nil {
		return nil, err
	}
	res := r.res
	saves := &saver{write: func() error {
		res.Machine.Programs = tools.Found() // a program found once the run began (an app's k6) too
		return res.Save(opts.Out, opts.Derive)
	}}
	if err := saves.save(); err != nil {
		return nil, err
	}
	r.flagPageOut()
	if err := r.probeCeilings(ctx); err != nil {
		res.Status, res.Error, res.Finished = results.StatusFailed, err.Error(), time.Now().UTC()
		if ctx.Err() != nil {
			res.Status, res.Error = results.StatusInterrupted, context.Cause(ctx).Error()
			err = fmt.Errorf("interrupted before the first cell: %w", err)
		}
		return res, errors.Join(err, saves.save())
	}
	cells := plan.Cells
	progress := r.progress
	var runErr error
	var killAfter map[int]time.Duration
	if spec.Crash != nil {
		killAfter = crashDraws(spec, cells)
	}
cells:
	for _, cell := range cells {
		if ctx.Err() != nil {
			break
		}
		progress.start(cell)
		if mode := r.modeOf(cell); mode == ModeCrash {
			c := r.crashCell(ctx, cell, killAfter[cell.Index])
			if ctx.Err() != nil && c.Failure != "" {
				break cells // interrupted mid-cell: what it measured is partial, so it is not kept
			}
			res.Crashes = append(res.Crashes, c)
		} else {
			c := r.measureCell(ctx, cell, mode)
			if ctx.Err() != nil && c.Failure != "" {
				break cells
			}
			res.Cells = append(res.Cells, c)
		}
		if err := saves.afterCell(); err != nil {
			runErr = fmt.Errorf("stopped after %d of %d cells: %w", len(res.Cells)+len(res.Crashes), len(cells), err)
			break
		}
	}
	r.closeShared(ctx)
	progress.done()
	res.Finished = time.Now().UTC()
	switch {
	case ctx.Err() != nil:
		res.Status, res.Error = results.StatusInterrupted, context.Cause(ctx).Error()
		runErr = errors.Join(runErr, fmt.Errorf("interrupted after %d of %d cells", len(res.Cells)+len(res.Crashes), len(cells)))
	case runErr != nil:
		res.Status, res.Error = results.StatusFailed, runErr.Error()
	default:
		res.Status = results.StatusComplete
		if why := everyCellFailed(res); why != "" { // the run went on, but measured nothing
			res.Status, res.Error = results.StatusFailed, why
		}
	}
	if err := saves.save(); err != nil { // every cell measured, whatever stopped the run
		return res, saveElsewhere(res, opts.Out, opts.Derive, err)
	}
	return res, runErr
}

// everyCellFailed says so, with the first cell's failure, when no cell of res succeeded; "" when
// one did (or none ran).
func everyCellFailed(res *results.Results) string {
	first, n := "", len(res.Cells)+len(res.Crashes)
	for _, c := range res.Cells {
		if c.Failure == "" {
			return ""
		}
		if first == "" {
			first = fmt.Sprintf("cell %d: %s", c.Index, c.Failure)
		}
	}
	for _, c := range res.Crashes {
		if c.Failure == "" {
			return ""
		}
		if first == "" {
			first = fmt.Sprintf("crash %d: %s", c.Index, c.Failure)
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("every cell failed (%d of %d); the first, %s", n, n, first)
}

// SaveError says that the results could not be written where asked (a full disk), and where the
// measured cells were saved instead, if anywhere.
type SaveError struct {
	Out, Fallback string
	Err           error
}

func (e *SaveError) Error() string {
	if e.Fallback == "" {
		return fmt.Sprintf("results could not be saved to %s, nor anywhere else: %v", e.Out, e.Err)
	}
	return fmt.Sprintf("results could not be saved to %s (%v): what was measured is saved in %s", e.Out, e.Err, e.Fallback)
}

func (e *SaveError) Unwrap() error { return e.Err }

// saveElsewhere keeps what a run measured when its results file cannot be written: a new file
// in the system's temporary directory ($TMPDIR).
func saveElsewhere(res *results.Results, out string, derive func(*results.Results), cause error) error {
	e := &SaveError{Out: out, Err: cause}
	f, err := os.CreateTemp("", "persistlab-results-*.json")
	if err != nil {
		return e
	}
	f.Close()
	if err := res.Save(f.Name(), derive); err != nil {
		os.Remove(f.Name())
		return e
	}
	e.Fallback = f.Name()
	// What is left at out is an earlier save that still says "running": the fallback supersedes it.
	if st, err := os.Lstat(out); err == nil && st.Mode().IsRegular() {
		os.Remove(out)
	}
	return e
}

// measureCell runs one cell of a mode other than crash runs.
func (r *run) measureCell(ctx context.Context, cell scenario.Cell, mode Mode) results.Cell {
	switch mode {
	case ModeInstances:
		return r.instancesCell(ctx, cell, knobsOf(cell.Resolved).Instances)
	case ModeSharedBackend:
		return r.sharedCell(ctx, cell)
	}
	return r.steadyCell(ctx, cell)
}

// params is a cell's full parameters, as the plan resolved them.
func (r *run) params(cell scenario.Cell) workload.Params { return cell.Resolved }

// prepare checks everything knowable before the first cell, starting nothing that outlives it,
// and sets up the results.
func prepare(ctx context.Context, plan *scenario.Plan, opts Options) (*run, error) {
	r, err := newRun(plan, opts)
	if err != nil {
		return nil, err
	}
	if err := r.checkDuration(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	for _, check := range []func(context.Context) error{r.checkKnobs, r.checkBackends, r.checkCells} {
		if err := check(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.checkSpace(); err != nil {
		return nil, err
	}
	if err := r.newResults(); err != nil {
		return nil, err
	}
	return r, nil
}

// fail is a refusal of the scenario's field, before the first cell.
func (r *run) fail(field, value, allowed string) error {
	return &param.FieldError{Scenario: r.spec.Name, Field: field, Value: value, Allowed: allowed}
}

// newRun makes the scenario's workload (its own sections: pragmas, extra) and learns what it asks
// of a backend.
func newRun(plan *scenario.Plan, opts Options) (*run, error) {
	spec := plan.Spec
	info, err := workload.Lookup(spec.Workload.Type)
	if err != nil {
		return nil, err
	}
	wl, err := info.New(spec.Workload)
	if err != nil {
		var fe *param.FieldError
		if errors.As(err, &fe) {
			fe.Scenario = spec.Name
		}
		return nil, err
	}
	if info.NeedsOf != nil { // what this scenario's workload asks of a backend (an app's SQLite file)
		info.Needs = info.NeedsOf(spec.Workload)
	}
	var perCell []time.Duration // the plan's estimate of each cell, the ETA until cells have run
	if e, err := EstimatePlan(plan); err == nil {
		perCell = e.PerCell
	}
	return &run{spec: spec, plan: plan, opts: opts, info: info, wl: wl, versions: sysinfo.Versions(), space: map[string]backendSpace{},
		progress: newProgress(opts.Progress, plan.Cells, perCell, opts.ProgressWidth)}, nil
}

// checkDuration refuses a duration the workload cannot use.
func (r *run) checkDuration() error {
	spec, info := r.spec, r.info
	switch {
	case info.Timed && spec.Duration <= 0:
		return r.fail("duration", time.Duration(spec.Duration).String(), "a duration above 0, like 120s: workload "+info.Name+" runs for it")
	case !info.Timed && (spec.Duration > 0 || spec.Warmup > 0):
		return r.fail("duration", time.Duration(spec.Duration).String(), "no duration or warmup: workload "+info.Name+" runs to its own end (set its parameters)")
	}
	return nil
}

// checkBackends makes every backend entry once (options, programs, what the workload needs),
// starting nothing, and asks it whether it can serve the run's mode.
func (r *run) checkBackends(ctx context.Context) error {
	checkDir, err := os.MkdirTemp(r.opts.WorkDir, "check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(checkDir)
	for i, b := range r.spec.Backends {
		field := fmt.Sprintf("backends[%d]", i)
		be, err := backend.New(b.Name, backend.Env{WorkDir: checkDir, Options: b.Options, Needs: r.info.Needs})
		var fe *param.FieldError
		switch {
		case errors.As(err, &fe): // an option its declaration refuses: backends[1].options.file_cache
			return r.fail(field+"."+fe.Field, fe.Value, fe.Allowed)
		case err != nil:
			return r.fail(field, b.ID(), err.Error())
		}
		if c, ok := be.(backend.Checker); ok {
			if err := c.Check(ctx); err != nil {
				return r.fail(field, b.ID(), "a backend that can run here: "+err.Error())
			}
		}
		for k, v := range be.Versions() {
			r.versions[k] = v
		}
		r.space[b.ID()] = r.spaceOf(b, be)
		if err := r.checkQuotaBeside(be, b.ID()); err != nil {
			return r.fail(field, b.ID(), err.Error())
		}
		if _, ok := be.(backend.Crasher); r.spec.Crash != nil && !ok {
			return r.fail(field, b.ID(), "a backend that can lose its instance, for crash runs")
		}
		if _, ok := be.(backend.MultiInstance); !ok && r.sharedBy(b.ID()) {
			return r.fail(field, b.ID(), fmt.Sprintf("a backend several instances can share (each %s instance would have a disk of its own)", b.Name))
		}
	}
	return nil
}

// sharedBy says whether any cell of backend entry id runs several instances on it.
func (r *run) sharedBy(id string) bool {
	for _, c := range r.plan.Cells {
		if c.Backend == id && r.modeOf(c) == ModeInstances {
			return true
		}
	}
	return false
}

// checkKnobs refuses, before anything starts, the runner's parameters in places or mixtures it
// cannot honour: CPUs are placed once per run (neither swept nor set per backend entry); a CPU
// quota needs cgroup v2's cpu controller (or v1's) and, on a shared backend, one value; and
// the cell's mode must be one the workload can run (checkModes).
func (r *run) checkKnobs(context.Context) error {
	spec := r.spec
	for _, a := range spec.Sweep {
		for _, n := range a.Params() {
			if n == CPUsParam {
				return r.fail("sweep."+a.Name, a.Text, "no sweep of cpus: CPUs are placed once per run; run once per value with --set cpus=N")
			}
			if (n == QuotaParam || n == PeriodParam || n == SlowdownParam) && spec.ShareBackend {
				return r.fail("sweep."+a.Name, a.Text, "no sweep of "+n+" with share_backend: the instance's CPU limit is made with the backend the cells share")
			}
		}
	}
	for i, b := range spec.Backends {
		if v, ok := b.Params[CPUsParam]; ok {
			return r.fail(fmt.Sprintf("backends[%d].params.%s", i, CPUsParam), v, "cpus in workload: CPUs are placed once per run, for every backend")
		}
	}
	for _, c := range r.plan.Cells {
		if err := r.checkLeastQuota(c); err != nil {
			return err
		}
		if err := r.checkSlowdown(c); err != nil {
			return err
		}
	}
	for _, c := range r.plan.Cells {
		if k := knobsOf(c.Resolved); k.Quota > 0 {
			if err := cgroup.CheckCPU(); err != nil {
				return r.fail(knobField(QuotaParam, c.PointName), c.Resolved[QuotaParam], "0 on this machine: "+err.Error())
			}
			break
		}
	}
	return r.checkModes()
}

// checkCells has the workload check each sweep point's parameters as it reads them (fio's own
// reading of a job, a rate its mode needs), and crash runs' own needs.
func (r *run) checkCells(ctx context.Context) error {
	spec := r.spec
	checked := map[string]bool{}
	for _, c := range r.plan.Cells {
		point := c.PointName
		if checked[point] {
			continue
		}
		checked[point] = true
		err := r.wl.Check(ctx, c.Resolved)
		if cc, ok := r.wl.(workload.CrashChecker); ok && err == nil && spec.Crash != nil {
			err = cc.CheckCrash(c.Resolved)
		}
		if dc, ok := r.wl.(workload.DurationChecker); ok && err == nil {
			err = dc.CheckDurations(c.Resolved, time.Duration(spec.Duration), time.Duration(spec.Warmup))
		}
		if err != nil {
			return r.named(err, point)
		}
	}
	return nil
}

// named says which scenario, and which sweep point, a workload's refusal of a cell concerns.
func (r *run) named(err error, point string) error {
	var fe *param.FieldError
	switch {
	case errors.As(err, &fe):
		fe.Scenario = r.spec.Name
		if point != "" {
			fe.Field += " (at " + point + ")"
		}
		return fe
	case point == "":
		return fmt.Errorf("scenario %q: %w", r.spec.Name, err)
	}
	return fmt.Errorf("scenario %q at %s: %w", r.spec.Name, point, err)
}

// newResults starts the results: what ran, where, with which versions, units and defaults, and
// which CPUs the system under test has (the driver pins itself to the others).
func (r *run) newResults() error {
	spec, info := r.spec, r.info
	for k, v := range r.wl.Versions() {
		r.versions[k] = v
	}
	res := &results.Results{
		Schema: results.Schema, Status: results.StatusRunning, Command: r.opts.Command,
		Started: time.Now().UTC(), Scenario: spec, Versions: r.versions, Units: map[string]string{},
		Defaults: map[string]string{}, Machine: sysinfo.Describe(r.opts.WorkDir),
		Shard: r.plan.Shard, PlanCells: r.plan.Whole,
	}
	res.Machine.Programs = tools.Found()
	if len(r.opts.PausedPageOut) > 0 {
		res.Machine.PageOutPaused = r.opts.PausedPageOut
		res.Notes = append(res.Notes, "this machine's page-out policies were paused for this run at its owner's request (--pause-host-pageout), to be turned on again when it ends: "+strings.Join(r.opts.PausedPageOut, "; "))
	}
	for _, m := range info.Metrics {
		res.Units[m.Name] = m.Unit
	}
	for _, p := range append(slices.Clone(info.Params), Knobs...) {
		res.Defaults[p.Name] = p.Default
	}
	if cpus := PinnedCPUs(spec.Workload.Params); cpus > 0 {
		app, rest, err := proc.SplitCPUs(cpus)
		if err != nil {
			return r.fail("workload."+CPUsParam, strconv.Itoa(cpus), err.Error())
		}
		res.Placement = results.Placement{AppCPUs: app, DriverCPUs: rest}
		if len(rest) > 0 {
			if err := proc.PinSelf(rest); err != nil {
				return err
			}
		}
	}
	r.res = res
	return nil
}
