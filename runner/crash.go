package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"time"

	"persistlab/backend"
	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
	"persistlab/workload"
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

// crashCell loses one instance under load and recovers it: load with every acknowledgement
// recorded, SIGKILL at killAfter with the backend's instance thrown away, a new instance from
// what persisted, and the acknowledged writes it lacks. Everything started is stopped.
func (r *run) crashCell(ctx context.Context, cell scenario.Cell, killAfter time.Duration) (out results.CrashRun) {
	out = results.CrashRun{Cell: cell, KillAfterS: killAfter.Seconds()}
	fail := func(err error) results.CrashRun { out.Failure = err.Error(); return out }
	life, err := r.open(cell)
	if err != nil {
		return fail(err)
	}
	defer life.close(ctx, &out.Failure)
	crasher := life.be.(backend.Crasher) // checked before the first cell
	inspector := r.wl.(workload.Inspector)
	target, err := life.startBackend(ctx)
	if err != nil {
		return fail(err)
	}
	started, err := life.startWorkload(ctx, target)
	if err != nil {
		return fail(err)
	}
	in, ok := started.(workload.Acknowledged)
	if !ok {
		return fail(fmt.Errorf("workload %s does not number its acknowledged writes", r.info.Name))
	}
	if err := life.warmUp(ctx, in); err != nil {
		return fail(err)
	}

	// Load runs past the kill; the kill ends it.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	statsBefore, loadStart := life.be.Stats(), time.Now()
	type loaded struct {
		res  *workload.Result
		acks *measure.AckLog
		err  error
	}
	done := make(chan loaded, 1)
	go func() {
		res, acks, err := in.DriveAcked(loadCtx, killAfter+time.Minute)
		done <- loaded{res, acks, err}
	}()
	select {
	case <-time.After(killAfter):
	case <-ctx.Done():
		return fail(context.Cause(ctx))
	}

	// The instance dies at once: the system under test by SIGKILL, then the backend's processes
	// and local disk.
	statsAtKill := life.be.Stats()
	killAt := time.Now()
	in.Kill()
	crashErr := crasher.Crash()
	select {
	case <-in.Exited():
	case <-time.After(30 * time.Second):
		return fail(errors.New("the killed instance did not exit within 30 s"))
	}
	stopLoad()
	load := <-done
	if crashErr != nil {
		return fail(crashErr)
	}
	if load.err != nil {
		return fail(load.err)
	}
	out.MaxAcked, out.OKBeforeKill = load.acks.Max(), int64(load.res.Metrics[workload.AckedMetric])
	out.LoadS = killAt.Sub(loadStart).Seconds()
	out.BackendStats = statsDelta(statsBefore, statsAtKill)

	if p, ok := life.be.(backend.Positioner); ok {
		posDB := filepath.Join(life.dir, "position.db")
		if err := p.RestorePosition(ctx, posDB); err != nil {
			return fail(err)
		}
		if s := inspector.Inspect("", posDB); s.Counted { // a count the workload can read from the data
			n := s.Count
			out.Position = &n
		}
	}

	// A new instance starts from what persisted.
	recoverStart := time.Now()
	target, err = crasher.Recover(ctx)
	if err != nil {
		return fail(err)
	}
	if target, err = within(target, life.firstLimit(), life.limitKnob()); err != nil { // the new instance, same limit
		return fail(err)
	}
	found := workload.InspectTarget(inspector, target) // before the new instance touches it
	out.DBExisted, out.Integrity = found.Exists, found.Integrity
	again, err := life.startWorkload(ctx, target)
	if err != nil {
		return fail(fmt.Errorf("the recovered data does not open: %w", err))
	}
	recovered, ok := again.(workload.Acknowledged)
	if !ok {
		return fail(fmt.Errorf("workload %s does not number its acknowledged writes", r.info.Name))
	}
	if out.Recovered, err = recovered.Count(ctx); err != nil {
		return fail(fmt.Errorf("read the recovered count: %w", err))
	}
	out.RecoveryMs = float64(time.Since(recoverStart)) / float64(time.Millisecond)
	loss := load.acks.Loss(out.Recovered, killAt)
	out.Lost, out.UnackedKept, out.LostWindowMs, out.LostReachMs = loss.Lost, loss.UnackedKept, loss.WindowMs, loss.ReachMs
	return out
}
