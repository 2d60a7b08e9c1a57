package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"persistlab/backend"
	"persistlab/results"
	"persistlab/scenario"
	"persistlab/workload"
)

// Metrics of an instances cell, where the workload can count its data.
const (
	CountDeltaMetric  = "count_delta"  // what the data's count grew by while the instances ran
	LostUpdatesMetric = "lost_updates" // acknowledged writes the final count lacks
)

// instancesCell runs n instances of the workload on one backend at once, each through its own
// mount, with the load split between them; then stops them all (as Cloud Run stops an instance:
// SIGTERM, data closed) and reads what persisted through a fresh mount. Lost updates are
// acknowledged writes the final count lacks. The checks before the first cell made sure the
// backend is a MultiInstance and the workload an Inspector and a Sharer.
func (r *run) instancesCell(ctx context.Context, cell scenario.Cell, n int) (out results.Cell) {
	out = results.Cell{Cell: cell, Started: time.Now().UTC()}
	fail := func(err error) results.Cell { out.Failure = err.Error(); return out }
	life, err := r.open(cell)
	if err != nil {
		return fail(err)
	}
	defer life.close(ctx, &out.Failure)
	multi, ok := life.be.(backend.MultiInstance)
	inspector, inspects := r.wl.(workload.Inspector)
	if !ok || !inspects { // checkModes and checkBackends refuse this before the first cell
		return fail(fmt.Errorf("internal error: instances cell on backend %s (MultiInstance %v), workload %s (Inspector %v)", cell.Backend, ok, r.info.Name, inspects))
	}
	first, err := life.startBackend(ctx)
	if err != nil {
		return fail(err)
	}
	targets := []backend.Target{first}
	for len(targets) < n {
		t, err := life.addInstance(ctx, multi)
		if err != nil {
			return fail(err)
		}
		targets = append(targets, t)
	}
	var instances []workload.Shared
	for _, t := range targets {
		in, err := life.startWorkload(ctx, t)
		if err != nil {
			return fail(err)
		}
		shared, ok := in.(workload.Shared)
		if !ok {
			return fail(fmt.Errorf("workload %s cannot share its load between instances", r.info.Name))
		}
		instances = append(instances, shared)
	}
	if err := life.warmUp(ctx, instances[0]); err != nil {
		return fail(err)
	}
	before := workload.InspectTarget(inspector, first)
	statsBefore, throttledBefore := life.be.Stats(), life.throttling()
	parts := make([]*workload.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, in := range instances {
		wg.Add(1)
		go func(i int, in workload.Shared) {
			defer wg.Done()
			parts[i], errs[i] = in.DriveShare(ctx, time.Duration(r.spec.Duration), workload.Share{Index: i, Of: n})
		}(i, in)
	}
	wg.Wait()
	out.BackendStats = statsDelta(statsBefore, life.be.Stats())
	throttledAfter := life.throttling()
	for i, err := range errs {
		if err != nil {
			errs[i] = fmt.Errorf("instance %d of %d: %w", i+1, n, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	if ctx.Err() != nil {
		return fail(context.Cause(ctx))
	}
	merged := workload.Merge(parts)
	if m, ok := r.wl.(workload.Merger); ok {
		m.MergeShares(merged, parts)
	}
	// Every instance stops as Cloud Run stops it (SIGTERM): its data is closed and flushed.
	for _, in := range instances {
		if err := life.setAside(withDeadline(ctx, in.Stop)); err != nil {
			return fail(err)
		}
	}
	fresh, err := multi.AddInstance(ctx, nil) // only to read what persisted
	if err != nil {
		return fail(err)
	}
	after := workload.InspectTarget(inspector, fresh)
	merged.Metrics[InstancesParam] = float64(n)
	if len(life.limits) > 0 {
		r.recordThrottling(throttledBefore, throttledAfter, merged.Metrics)
	}
	// Lost updates where the workload can count its data (the counter); another app's integrity only.
	if before.Counted && after.Counted {
		delta := after.Count - before.Count
		merged.Metrics[CountDeltaMetric] = float64(delta)
		merged.Metrics[LostUpdatesMetric] = max(0, merged.Metrics[workload.AckedMetric]-float64(delta))
	}
	if after.Integrity != "" {
		merged.Facts["integrity"] = after.Integrity
	}
	if err := fill(&out, merged); err != nil {
		return fail(err)
	}
	return out
}

// withDeadline runs stop with a context that outlives a cancelled ctx, but not forever.
func withDeadline(ctx context.Context, stop func(context.Context) error) error {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupDeadline)
	defer cancel()
	return stop(c)
}
