package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"persistlab/app/counter"
	"persistlab/backend"
	"persistlab/internal/proc"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/scenario"
	workload "persistlab/workload/counter"
)

// runInstancesCell runs several app instances on one backend at once, each through its own mount,
// with the VUs split between them; then stops them all and reads the count and integrity_check
// through a fresh mount. Lost updates are 200 answers the final count does not reflect.
func runInstancesCell(ctx context.Context, spec *scenario.Spec, cell scenario.Cell, res *report.Results, opts Options) (out report.Cell) {
	n := spec.Workload.Instances
	out = report.Cell{Cell: cell, Started: time.Now().UTC(), Instances: n}
	fail := func(err error) report.Cell { out.Failure = err.Error(); return out }
	be, cellDir, err := newCellBackend(spec, cell, res, opts)
	if err != nil {
		return fail(err)
	}
	defer stopCellBackend(ctx, be, &out.Failure)
	multi, ok := be.(backend.MultiInstance)
	if !ok {
		return fail(fmt.Errorf("backend %q cannot be shared by %d instances (each would have a disk of its own)", cell.Backend, n))
	}
	first, err := be.Start(ctx)
	if err != nil {
		return fail(err)
	}
	targets := []backend.Target{first}
	for len(targets) < n {
		t, err := multi.AddInstance(ctx)
		if err != nil {
			return fail(err)
		}
		targets = append(targets, t)
	}
	apps := make([]*App, 0, n)
	defer func() {
		for _, a := range apps {
			withCleanupDeadline(ctx, a.Stop)
		}
	}()
	for i, t := range targets {
		a, err := StartApp(opts.Self, filepath.Join(t.Dir, backend.DBFile), filepath.Join(cellDir, fmt.Sprintf("app-%d.log", i+1)), spec.Workload.App)
		if err != nil {
			return fail(err)
		}
		apps = append(apps, a)
	}
	before, err := apps[0].Count()
	if err != nil {
		return fail(err)
	}

	cpuBefore, statsBefore := appsCPU(apps), be.Stats()
	var wg sync.WaitGroup
	results := make([]*workload.Result, n)
	errs := make([]error, n)
	for i, a := range apps {
		vus := cell.VUs / n
		if i < cell.VUs%n {
			vus++
		}
		wg.Add(1)
		go func(i, vus int, url string) {
			defer wg.Done()
			results[i], errs[i] = workload.Run(ctx, workload.Config{URL: url + spec.Workload.Path, Method: spec.Workload.Method,
				Mode: spec.Workload.Mode, VUs: max(vus, 1), Rate: spec.Workload.Rate / float64(n), Duration: time.Duration(spec.Duration)})
		}(i, vus, a.URL)
	}
	wg.Wait()
	out.AppCPUSeconds = (appsCPU(apps) - cpuBefore).Seconds()
	out.BackendStats = statsDelta(statsBefore, be.Stats())
	all := measure.NewRecorder()
	var elapsed time.Duration
	for i, r := range results {
		if errs[i] != nil {
			return fail(errs[i])
		}
		all.Merge(r.Latency)
		elapsed = max(elapsed, r.Elapsed)
		out.OK += r.OK
		out.Errors += r.Errors()
		out.TransportErrors += r.TransportErrors
		out.MaxAcked = max(out.MaxAcked, r.MaxAcked)
		out.ErrorSamples = append(out.ErrorSamples, r.ErrorSamples...)
	}
	if ctx.Err() != nil {
		return fail(context.Cause(ctx))
	}
	// Every instance stops as Cloud Run stops it (SIGTERM): its database is closed and flushed.
	for _, a := range apps {
		if err := withCleanupDeadline(ctx, a.Stop); err != nil {
			return fail(err)
		}
	}
	fresh, err := multi.AddInstance(ctx)
	if err != nil {
		return fail(err)
	}
	found := counter.Inspect(filepath.Join(fresh.Dir, backend.DBFile))
	out.CountDelta, out.Integrity = found.Count-before, found.Integrity
	out.ElapsedS = elapsed.Seconds()
	out.AppCPUUtil = appCPUUtil(out.AppCPUSeconds, elapsed, res)
	out.Summary = all.Summarize(elapsed)
	if out.Histogram, err = all.Encode(); err != nil {
		return fail(err)
	}
	return out
}

// appsCPU is the CPU time the apps have used so far.
func appsCPU(apps []*App) time.Duration {
	var total time.Duration
	for _, a := range apps {
		if t, err := proc.CPUTime(a.Child.Pid()); err == nil {
			total += t
		}
	}
	return total
}
