package runner

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"time"

	"persistlab/backend"
	"persistlab/internal/proc"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/scenario"
)

// steadyCell measures one cell: backend, workload, warm-up, the measured run with the backend's
// counters around it, and the replication lag of the last acknowledged write where the backend
// replicates. Whatever fails is recorded in the cell; everything started is stopped.
func (r *run) steadyCell(ctx context.Context, cell scenario.Cell) (out report.Cell) {
	out = report.Cell{Cell: cell, Started: time.Now().UTC()}
	fail := func(err error) report.Cell { out.Failure = err.Error(); return out }
	life, err := r.open(cell)
	if err != nil {
		return fail(err)
	}
	defer life.close(ctx, &out.Failure)
	target, err := life.startBackend(ctx)
	if err != nil {
		return fail(err)
	}
	return r.measure(ctx, life, target, out)
}

// sharedCell measures a cell on a backend that outlives it: consecutive cells of one backend entry
// and repeat share one started backend (a blog's tests run one after another on one mount, so a
// later test finds the cache an earlier one filled). The backend is stopped when the next cell
// needs another, and at the end of the run (closeShared).
func (r *run) sharedCell(ctx context.Context, cell scenario.Cell) (out report.Cell) {
	out = report.Cell{Cell: cell, Started: time.Now().UTC()}
	if s := r.shared; s != nil && (s.cell.Backend != cell.Backend || s.cell.Repeat != cell.Repeat) {
		r.closeShared(ctx)
	}
	if r.shared == nil {
		life, err := r.open(cell)
		if err != nil {
			out.Failure = err.Error()
			return out
		}
		target, err := life.startBackend(ctx)
		if err != nil {
			life.close(ctx, &out.Failure)
			out.Failure = err.Error()
			return out
		}
		r.shared, r.sharedTarget = life, target
	}
	life := r.shared
	life.cell, life.params = cell, r.params(cell)
	life.cellDir = filepath.Join(r.opts.WorkDir, cellDirName(cell))
	if err := os.MkdirAll(life.cellDir, 0o755); err != nil {
		out.Failure = err.Error()
		return out
	}
	defer life.stopInstances(ctx, &out.Failure)
	return r.measure(ctx, life, r.sharedTarget, out)
}

// closeShared stops the backend cells have shared, if any.
func (r *run) closeShared(ctx context.Context) {
	if r.shared == nil {
		return
	}
	var failure string
	r.shared.close(ctx, &failure)
	if failure != "" {
		r.res.Notes = append(r.res.Notes, "stopping the shared backend "+r.shared.cell.Backend+": "+failure)
	}
	r.shared = nil
}

// measure starts the workload on a started backend and measures one cell.
func (r *run) measure(ctx context.Context, life *cellLife, target backend.Target, out report.Cell) report.Cell {
	fail := func(err error) report.Cell { out.Failure = err.Error(); return out }
	in, err := life.startWorkload(ctx, target)
	if err != nil {
		return fail(err)
	}
	if err := life.warmUp(ctx, in); err != nil {
		return fail(err)
	}
	before := life.be.Stats()
	busy0, total0, _ := proc.MachineCPU()
	throttled0 := life.throttling()
	stopSampling := sampleBackend(life.be, time.Duration(r.spec.Duration))
	res, err := in.Drive(ctx, time.Duration(r.spec.Duration))
	series := stopSampling()
	if err != nil {
		return fail(err)
	}
	throttled1 := life.throttling()
	busy1, total1, _ := proc.MachineCPU()
	if ctx.Err() != nil {
		return fail(context.Cause(ctx))
	}
	out.BackendStats = statsDelta(before, life.be.Stats())
	if err := fill(&out, res); err != nil {
		return fail(err)
	}
	if len(series) > 0 && out.Series == nil {
		out.Series = map[string][]measure.Point{}
	}
	maps.Copy(out.Series, series)
	// The whole machine's busy share: near 1, the cell measured this machine, not the cloud model.
	out.Metrics[MachineCPUMetric] = proc.MachineBusy(busy0, total0, busy1, total1)
	if len(life.limits) > 0 {
		r.recordThrottling(throttled0, throttled1, out.Metrics)
	}
	if lr, ok := life.be.(backend.LagReporter); ok && !res.LastWrite.IsZero() {
		if lag, err := lr.ReplicationLag(ctx, res.LastWrite); err == nil {
			out.Metrics["replication_lag_ms"] = float64(lag) / float64(time.Millisecond)
		} else {
			out.ErrorSamples = append(out.ErrorSamples, "replication lag: "+err.Error())
		}
	}
	return out
}

// SampleInterval bounds how often a backend's counters are sampled during a cell; a long cell is
// sampled less often, so that a series holds at most MaxSamples points.
const (
	SampleInterval = 250 * time.Millisecond
	MaxSamples     = 400
)

// sampleBackend records, until the returned function is called, the counters a backend wants seen
// over time (backend.Sampler), as series named "backend.KEY" in seconds since the start. Nothing
// runs for a backend that wants none.
func sampleBackend(be backend.Backend, expected time.Duration) (stop func() map[string][]measure.Point) {
	sampler, ok := be.(backend.Sampler)
	if !ok || len(sampler.SampledStats()) == 0 {
		return func() map[string][]measure.Point { return nil }
	}
	keys := sampler.SampledStats()
	every := max(SampleInterval, expected/MaxSamples)
	series := map[string][]measure.Point{}
	start := time.Now()
	var tick *time.Ticker
	take := func() {
		st, t := be.Stats(), time.Since(start).Seconds()
		full := false
		for _, k := range keys {
			if v, ok := st[k]; ok {
				series["backend."+k] = append(series["backend."+k], measure.Point{T: t, V: v})
				full = full || len(series["backend."+k]) >= 2*MaxSamples
			}
		}
		if full && tick != nil { // a cell longer than expected (one that runs to its own end): halve
			for k, s := range series {
				series[k] = thin(s)
			}
			every *= 2
			tick.Reset(every)
		}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick = time.NewTicker(every)
		defer tick.Stop()
		take()
		for {
			select {
			case <-done:
				take()
				return
			case <-tick.C:
				take()
			}
		}
	}()
	return func() map[string][]measure.Point {
		close(done)
		<-finished
		return series
	}
}

// thin keeps every other point of a series, and its last.
func thin(s []measure.Point) []measure.Point {
	out := s[:0]
	for i := 0; i < len(s); i += 2 {
		out = append(out, s[i])
	}
	if len(s)%2 == 0 {
		out = append(out, s[len(s)-1])
	}
	return out
}
