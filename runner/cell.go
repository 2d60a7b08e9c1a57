package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/sysinfo"
	"persistlab/results"
	"persistlab/scenario"
	"persistlab/workload"
)

// MachineCPUMetric is the metric every steady cell carries: the share of the machine's CPU time
// that was busy while it was measured (the report's MachineBoundShare marks rows above it).
const MachineCPUMetric = "machine_cpu_util"

// CleanupDeadline bounds how long a cell's clean-up may take once the run is cancelled.
const CleanupDeadline = time.Minute

// cellLife is one cell's lifetime, shared by every mode: its directory, its backend, the
// workload instances it started, and their clean-up in reverse order with a deadline.
type cellLife struct {
	r       *run
	cell    scenario.Cell
	dir     string // the backend's work directory
	cellDir string // the workload's: dir, or a directory per cell when cells share the backend
	be      backend.Backend
	params  workload.Params
	stops   []func(context.Context) error
	limits  []*cgroup.CPU // each instance's CPU limit (cpu_quota), the first made with the backend
	slowed  *slowdown     // the instance's slower CPU (cpu_slowdown), made with the backend
	// stuck are cgroups a stop could not empty, tried again once the backend has stopped (settle).
	stuck []*cgroup.StuckError
}

// open makes the cell's directory and its backend.
func (r *run) open(cell scenario.Cell) (*cellLife, error) {
	entry := cell.Entry
	if entry.Name == "" {
		return nil, fmt.Errorf("cell %d (backend %q) carries no backend entry: cells come from the scenario's plan", cell.Index, cell.Backend)
	}
	dir := filepath.Join(r.opts.WorkDir, cellDirName(cell))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l := &cellLife{r: r, cell: cell, dir: dir, cellDir: dir, params: r.params(cell)}
	limit, err := l.newLimit()
	if err != nil {
		return nil, err
	}
	l.be, err = backend.New(entry.Name, backend.Env{WorkDir: dir, CPUs: r.res.Placement.AppCPUs, Wrap: wrapOf(limit), Options: entry.Options, Needs: r.info.Needs, Keep: r.opts.Keep, Warn: r.progress.warner()})
	if err != nil {
		return nil, errors.Join(err, l.removeLimits())
	}
	for k, v := range l.be.Versions() {
		r.res.Versions[k] = v
	}
	return l, nil
}

// cellDirName names a cell's directory (labels are restricted to file-name characters).
func cellDirName(cell scenario.Cell) string {
	return fmt.Sprintf("cell-%03d-%s-r%d", cell.Index, cell.Backend, cell.Repeat)
}

// startBackend starts the backend and records its file system, and the versions it learns only
// once started (a user's server's). The target's programs run inside the first instance's CPU
// limit, if any.
func (l *cellLife) startBackend(ctx context.Context) (backend.Target, error) {
	t, err := l.be.Start(ctx)
	if err != nil {
		return t, err
	}
	for k, v := range l.be.Versions() {
		l.r.res.Versions[k] = v
	}
	l.r.res.Machine.FileSystems[t.Dir] = sysinfo.FileSystemOf(t.Dir)
	return within(t, l.firstLimit(), l.limitKnob())
}

// firstLimit is the CPU limit of the instance the backend started with (a recovered instance
// takes it over), nil without one.
func (l *cellLife) firstLimit() *cgroup.CPU {
	if l.slowed != nil {
		return l.slowed.instance
	}
	if len(l.limits) == 0 {
		return nil
	}
	return l.limits[0]
}

// addInstance starts another instance on a backend several can share, with a CPU limit of its own.
func (l *cellLife) addInstance(ctx context.Context, multi backend.MultiInstance) (backend.Target, error) {
	limit, err := l.newLimit()
	if err != nil {
		return backend.Target{}, err
	}
	t, err := multi.AddInstance(ctx, wrapOf(limit))
	if err != nil {
		return t, err
	}
	return within(t, limit, l.limitKnob())
}

// startWorkload starts a workload instance on target; close stops it.
func (l *cellLife) startWorkload(ctx context.Context, target backend.Target) (workload.Instance, error) {
	in, err := l.r.wl.Start(ctx, workload.Env{Target: target, CellDir: l.cellDir, Params: l.params,
		CPUs: l.r.res.Placement.AppCPUs, Self: l.r.opts.Self, ToolOutputDir: l.r.opts.ToolOutputDir})
	if err != nil {
		return nil, err
	}
	l.stops = append(l.stops, in.Stop)
	return in, nil
}

// warmUp drives unmeasured load first, for timed workloads with a warm-up.
func (l *cellLife) warmUp(ctx context.Context, in workload.Instance) error {
	if !l.r.info.Timed || l.r.spec.Warmup <= 0 {
		return nil
	}
	_, err := in.Drive(ctx, time.Duration(l.r.spec.Warmup))
	return err
}

// close stops every workload instance, then the backend, with a deadline that outlives a
// cancelled ctx (Ctrl-C must still unmount and stop processes). The first error is recorded as
// the cell's failure unless it already failed.
func (l *cellLife) close(ctx context.Context, failure *string) {
	l.stopInstances(ctx, failure)
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupDeadline)
	defer cancel()
	if err := l.setAside(l.be.Stop(c)); err != nil && *failure == "" {
		*failure = "backend stop: " + err.Error()
	}
	if l.slowed != nil {
		if err := l.slowed.stillSpinning(); err != nil && *failure == "" {
			*failure = err.Error()
		}
	}
	if err := l.setAside(l.removeLimits()); err != nil && *failure == "" {
		*failure = err.Error()
	}
	l.settle()
}

// setAside takes from what a stop reported the cgroups that did not empty (*cgroup.StuckError),
// for settle, and returns the rest: a cgroup left behind never fails a cell, whose measurement
// stands (clean removes the cgroup).
func (l *cellLife) setAside(err error) error {
	var rest []error
	var walk func(error)
	walk = func(err error) {
		var stuck *cgroup.StuckError
		switch e := err.(type) {
		case nil:
		case *cgroup.StuckError:
			l.stuck = append(l.stuck, e)
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			if errors.As(err, &stuck) {
				walk(e.Unwrap())
			} else {
				rest = append(rest, err)
			}
		default:
			rest = append(rest, err)
		}
	}
	walk(err)
	return errors.Join(rest...)
}

// settle tries once more to empty the cgroups set aside, which the backend's stop may have freed
// (a process blocked on its mount), and notes in the results those that stay: they are recorded
// in the cell's directory, and the run keeps it for `persistlab clean`.
func (l *cellLife) settle() {
	tried := map[string]bool{}
	for _, s := range l.stuck {
		if tried[s.Dir] {
			continue
		}
		tried[s.Dir] = true
		if err := cgroup.Empty(s.Dir, cgroup.GroupWait); err != nil {
			note := fmt.Sprintf("cell %d (%s run %d): %v", l.cell.Index, l.cell.Backend, l.cell.Repeat, err)
			l.r.res.Notes = append(l.r.res.Notes, note)
			l.r.progress.warn(note)
		}
	}
	l.stuck = nil
}

// stopInstances stops the workload instances started so far, newest first.
func (l *cellLife) stopInstances(ctx context.Context, failure *string) {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupDeadline)
	defer cancel()
	var errs []string
	for i := len(l.stops) - 1; i >= 0; i-- {
		if err := l.setAside(l.stops[i](c)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	l.stops = nil
	if len(errs) > 0 && *failure == "" {
		*failure = strings.Join(errs, "; ")
	}
}

// fill records a workload's result in a cell of the results.
func fill(out *results.Cell, r *workload.Result) error {
	out.ElapsedS = r.Elapsed.Seconds()
	out.Metrics, out.Series, out.Counters, out.Facts = r.Metrics, r.Series, r.Counters, r.Facts
	out.ErrorSamples = append(out.ErrorSamples, r.Errors...)
	if len(r.Histograms) > 0 {
		out.Histograms = map[string]string{}
	}
	for name, h := range r.Histograms {
		enc, err := h.Encode()
		if err != nil {
			return fmt.Errorf("histogram %s: %w", name, err)
		}
		out.Histograms[name] = enc
	}
	return nil
}

// statsDelta is what the backend counted between two snapshots.
func statsDelta(before, after backend.Stats) map[string]float64 {
	if len(after) == 0 {
		return nil
	}
	out := make(map[string]float64, len(after))
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}
