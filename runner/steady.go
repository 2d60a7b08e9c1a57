package runner

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"time"

	"persistlab/backend"
	"persistlab/internal/proc"
	"persistlab/lab"
	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
)

// steadyCell measures one cell: backend, workload, warm-up, the measured run with the backend's
// counters around it, and the replication lag of the last acknowledged write where the backend
// replicates. Whatever fails is recorded in the cell; everything started is stopped.
func (r *run) steadyCell(ctx context.Context, cell scenario.Cell) (out results.Cell) {
	out = results.Cell{Cell: cell, Started: time.Now().UTC()}
	fail := func(err error) results.Cell { out.Failure = err.Error(); return out }
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
func (r *run) sharedCell(ctx context.Context, cell scenario.Cell) (out results.Cell) {
	out = results.Cell{Cell: cell, Started: time.Now().UTC()}
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
	defer func() {
		life.stopInstances(ctx, &out.Failure)
		life.settle()
	}()
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
func (r *run) measure(ctx context.Context, life *cellLife, target backend.Target, out results.Cell) results.Cell {
	fail := func(err error) results.Cell { out.Failure = err.Error(); return out }
	in, err := life.startWorkload(ctx, target)
	if err != nil {
		return fail(err)
	}
	if err := life.warmUp(ctx, in); err != nil {
		return fail(err)
	}
	pageCache := life.watchPageCache()
	before := life.be.Stats()
	busy0, total0, _ := proc.MachineCPU()
	spun0 := life.spinnersCPU()
	throttled0 := life.throttling()
	stopSampling := sampleCell(life.readings(), time.Duration(r.spec.Duration))
	driveStart := time.Now()
	res, err := in.Drive(ctx, time.Duration(r.spec.Duration))
	series := stopSampling()
	pageCache.stop()
	if err != nil {
		return fail(err)
	}
	throttled1 := life.throttling()
	if life.slowed != nil {
		if err := life.slowed.stillSpinning(); err != nil {
			return fail(err)
		}
	}
	if tl, ok := life.be.(backend.Timeline); ok {
		if series == nil {
			series = map[string][]measure.Point{}
		}
		writeSeries(tl.WritesSince(driveStart), driveStart, series)
	}
	busy1, total1, _ := proc.MachineCPU()
	busy1 -= life.spinnersCPU() - spun0 // cpu_slowdown's spinners take their CPUs by design: no load on the lab
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
	pageCache.record(&out, r.res.Units)
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

// readings are the counters a cell wants seen over time, not only as totals: those a backend
// names (backend.Sampler: a volume's burst credits draining), as "backend.KEY", and the time its
// instances waited for their CPU limit, as "instance.cpu_throttled_s". Nil when there are none.
func (l *cellLife) readings() func() map[string]float64 {
	var keys []string
	if sampler, ok := l.be.(backend.Sampler); ok {
		keys = sampler.SampledStats()
	}
	if len(keys) == 0 && len(l.limits) == 0 {
		return nil
	}
	return func() map[string]float64 {
		out := map[string]float64{}
		if len(keys) > 0 {
			st := l.be.Stats()
			for _, k := range keys {
				if v, ok := st[k]; ok {
					out[lab.StatsSeries(k)] = v
				}
			}
		}
		if len(l.limits) > 0 {
			out["instance."+ThrottledSecondsMetric] = l.throttling().Waited.Seconds()
		}
		return out
	}
}

// sampleCell records read's values, until the returned function is called, as series in seconds
// since the start. Nothing runs when read is nil.
func sampleCell(read func() map[string]float64, expected time.Duration) (stop func() map[string][]measure.Point) {
	if read == nil {
		return func() map[string][]measure.Point { return nil }
	}
	every := max(SampleInterval, expected/MaxSamples)
	series := map[string][]measure.Point{}
	start := time.Now()
	var tick *time.Ticker
	take := func() {
		values, t := read(), time.Since(start).Seconds()
		full := false
		for k, v := range values {
			series[k] = append(series[k], measure.Point{T: t, V: v})
			full = full || len(series[k]) >= 2*MaxSamples
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

// writeSeries records each write to the cloud as a point of series "write.WHAT": when it ended,
// in seconds since start, and how long it took, in ms.
func writeSeries(writes []backend.Write, start time.Time, series map[string][]measure.Point) {
	for _, w := range writes {
		key := "write." + w.What
		series[key] = append(series[key], measure.Point{T: w.Done.Sub(start).Seconds(), V: float64(w.Done.Sub(w.Started)) / float64(time.Millisecond)})
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
