package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"time"

	"persistlab/app/counter"
	"persistlab/backend"
	"persistlab/report"
	"persistlab/scenario"
	workload "persistlab/workload/counter"
)

// crashDraws gives each crash cell its kill moment from the scenario's seed, so a run can be repeated.
func crashDraws(spec *scenario.Spec, cells []scenario.Cell) map[int]time.Duration {
	rng := rand.New(rand.NewSource(spec.Crash.Seed))
	out := map[int]time.Duration{}
	span := spec.Crash.After.To - spec.Crash.After.From
	for _, c := range cells {
		out[c.Index] = spec.Crash.After.From + time.Duration(rng.Int63n(int64(span)+1))
	}
	return out
}

// runCrashCell loses one instance under load and recovers it. Whatever fails is recorded in the
// run; everything it started is stopped before it returns.
func runCrashCell(ctx context.Context, spec *scenario.Spec, cell scenario.Cell, killAfter time.Duration, res *report.Results, opts Options) (out report.CrashRun) {
	out = report.CrashRun{Cell: cell, KillAfterS: killAfter.Seconds()}
	fail := func(err error) report.CrashRun { out.Failure = err.Error(); return out }
	be, cellDir, err := newCellBackend(spec, cell, res, opts)
	if err != nil {
		return fail(err)
	}
	defer stopCellBackend(ctx, be, &out.Failure)
	crasher, ok := be.(backend.Crasher)
	if !ok {
		return fail(fmt.Errorf("backend %q cannot lose an instance", cell.Backend))
	}
	target, err := be.Start(ctx)
	if err != nil {
		return fail(err)
	}
	app, err := StartApp(opts.Self, filepath.Join(target.Dir, backend.DBFile), filepath.Join(cellDir, "app.log"), spec.Workload.App)
	if err != nil {
		return fail(err)
	}
	defer withCleanupDeadline(ctx, app.Stop)

	// Load runs past the kill; the kill ends it.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	drive := workload.Config{URL: app.URL + spec.Workload.Path, Method: spec.Workload.Method, Mode: spec.Workload.Mode,
		VUs: cell.VUs, Rate: spec.Workload.Rate, Timeout: 5 * time.Second, Duration: killAfter + time.Minute, RecordAcks: true}
	statsBefore, loadStart := be.Stats(), time.Now()
	results := make(chan *workload.Result, 1)
	go func() {
		r, _ := workload.Run(loadCtx, drive)
		results <- r
	}()
	select {
	case <-time.After(killAfter):
	case <-ctx.Done():
		return fail(context.Cause(ctx))
	}

	// The instance dies at once: the app by SIGKILL, then the backend's processes and local disk.
	statsAtKill := be.Stats()
	killAt := time.Now()
	app.Child.SignalKill()
	crashErr := crasher.Crash()
	select {
	case <-app.Child.Done():
	case <-time.After(30 * time.Second):
		return fail(errors.New("the killed app did not exit within 30 s"))
	}
	stopLoad()
	load := <-results
	if crashErr != nil {
		return fail(crashErr)
	}
	out.MaxAcked, out.OKBeforeKill = load.MaxAcked, load.OK
	out.LoadS = killAt.Sub(loadStart).Seconds()
	out.BackendStats = statsDelta(statsBefore, statsAtKill)

	if p, ok := be.(backend.Positioner); ok {
		posDB := filepath.Join(cellDir, "position.db")
		if err := p.RestorePosition(ctx, posDB); err != nil {
			return fail(err)
		}
		n := counter.Inspect(posDB).Count
		out.Position = &n
	}

	// A new instance starts from what persisted.
	recoverStart := time.Now()
	target, err = crasher.Recover(ctx)
	if err != nil {
		return fail(err)
	}
	dbPath := filepath.Join(target.Dir, backend.DBFile)
	found := counter.Inspect(dbPath) // before the new app touches it
	out.DBExisted, out.Integrity = found.Exists, found.Integrity
	app2, err := StartApp(opts.Self, dbPath, filepath.Join(cellDir, "app-recovered.log"), spec.Workload.App)
	if err != nil {
		return fail(fmt.Errorf("the recovered database does not open: %w", err))
	}
	defer withCleanupDeadline(ctx, app2.Stop)
	out.Recovered, err = app2.Count()
	if err != nil {
		return fail(fmt.Errorf("read the recovered count: %w", err))
	}
	out.RecoveryMs = float64(time.Since(recoverStart)) / float64(time.Millisecond)

	out.Lost = max(0, out.MaxAcked-out.Recovered)
	out.UnackedKept = max(0, out.Recovered-out.MaxAcked)
	if out.Lost > 0 {
		first, last := firstAckAfter(load, out.Recovered), load.Acks[len(load.Acks)-1].At
		if at, ok := load.AckedAt(out.MaxAcked); ok {
			last = at
		}
		out.LostWindowMs = float64(last.Sub(first)) / float64(time.Millisecond)
		out.LostReachMs = float64(killAt.Sub(first)) / float64(time.Millisecond)
	}
	return out
}

// firstAckAfter is when the lowest acknowledged count above n was acknowledged.
func firstAckAfter(r *workload.Result, n int64) time.Time {
	for _, a := range r.Acks { // sorted by count
		if a.Count > n {
			return a.At
		}
	}
	return r.LastAck
}
