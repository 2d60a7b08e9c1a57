package runner

import (
	"context"
	"time"

	"persistlab/backend"
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
	in, err := life.startWorkload(ctx, target)
	if err != nil {
		return fail(err)
	}
	if err := life.warmUp(ctx, in); err != nil {
		return fail(err)
	}
	before := life.be.Stats()
	res, err := in.Drive(ctx, time.Duration(r.spec.Duration))
	if err != nil {
		return fail(err)
	}
	if ctx.Err() != nil {
		return fail(context.Cause(ctx))
	}
	out.BackendStats = statsDelta(before, life.be.Stats())
	if err := fill(&out, res); err != nil {
		return fail(err)
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
