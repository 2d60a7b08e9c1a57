package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"persistlab/backend"
	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
	"persistlab/workload"
)

// instancesCell runs n instances of the workload on one backend at once, each through its own
// mount, with the load split between them; then stops them all (as Cloud Run stops an instance:
// SIGTERM, data closed) and reads what persisted through a fresh mount. Lost updates are
// acknowledged writes the final count lacks.
func (r *run) instancesCell(ctx context.Context, cell scenario.Cell, n int) (out results.Cell) {
	out = results.Cell{Cell: cell, Started: time.Now().UTC()}
	fail := func(err error) results.Cell { out.Failure = err.Error(); return out }
	life, err := r.open(cell)
	if err != nil {
		return fail(err)
	}
	defer life.close(ctx, &out.Failure)
	multi := life.be.(backend.MultiInstance) // checked before the first cell
	inspector, ok := r.wl.(workload.Inspector)
	if !ok {
		return fail(fmt.Errorf("workload %s cannot read what several instances left", r.info.Name))
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
	before := inspector.Inspect(first.Dir, "")
	statsBefore, throttledBefore := life.be.Stats(), life.throttling()
	results := make([]*workload.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, in := range instances {
		wg.Add(1)
		go func(i int, in workload.Shared) {
			defer wg.Done()
			results[i], errs[i] = in.DriveShare(ctx, time.Duration(r.spec.Duration), workload.Share{Index: i, Of: n})
		}(i, in)
	}
	wg.Wait()
	out.BackendStats = statsDelta(statsBefore, life.be.Stats())
	throttledAfter := life.throttling()
	merged := workload.NewResult()
	histograms := map[string]*measure.Recorder{} // each instance's, merged by name
	for i, res := range results {
		if errs[i] != nil {
			return fail(errs[i])
		}
		merged.Elapsed = max(merged.Elapsed, res.Elapsed)
		for k, v := range res.Metrics {
			merged.Metrics[k] += v // counts add up; latency figures are recomputed below
		}
		for k, v := range res.Counters {
			merged.Counters[k] += v
		}
		for name, h := range res.Histograms {
			if histograms[name] == nil {
				histograms[name] = measure.NewRecorder()
			}
			histograms[name].Merge(h)
		}
		merged.Errors = append(merged.Errors, res.Errors...)
		if res.LastWrite.After(merged.LastWrite) {
			merged.LastWrite = res.LastWrite
		}
	}
	if ctx.Err() != nil {
		return fail(context.Cause(ctx))
	}
	for k := range merged.Metrics { // sums of per-instance latency figures mean nothing
		if strings.HasPrefix(k, "service_") {
			delete(merged.Metrics, k)
		}
	}
	// Latency figures come from the merged histograms: "latency" unprefixed, "service" (open
	// loop, from the actual send) as service_*, as one instance reports them.
	for name, h := range histograms {
		prefix := name + "_"
		if name == "latency" {
			prefix = ""
		}
		h.Summarize(merged.Elapsed).Metrics(prefix, merged.Metrics)
		merged.Histograms[name] = h
	}
	delete(merged.Metrics, "max_acked") // the highest, not the sum, where the instances state one
	for _, res := range results {
		if v, ok := res.Metrics["max_acked"]; ok {
			merged.Metrics["max_acked"] = max(merged.Metrics["max_acked"], v)
		}
	}
	merged.Metrics["app_cpu_util"] = merged.Metrics["app_cpu_s"] / merged.Elapsed.Seconds() / float64(r.res.AppCPUCount())
	// Every instance stops as Cloud Run stops it (SIGTERM): its data is closed and flushed.
	for _, in := range instances {
		if err := withDeadline(ctx, in.Stop); err != nil {
			return fail(err)
		}
	}
	fresh, err := multi.AddInstance(ctx, nil) // only to read what persisted
	if err != nil {
		return fail(err)
	}
	after := inspector.Inspect(fresh.Dir, "")
	merged.Metrics["instances"] = float64(n)
	if len(life.limits) > 0 {
		r.recordThrottling(throttledBefore, throttledAfter, merged.Metrics)
	}
	// Lost updates where the workload can count its data (the counter); another app's integrity only.
	if before.Counted && after.Counted {
		delta := after.Count - before.Count
		merged.Metrics["count_delta"] = float64(delta)
		merged.Metrics["lost_updates"] = max(0, merged.Metrics["ok"]-float64(delta))
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
