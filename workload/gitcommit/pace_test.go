package gitcommit

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/backend/volume"
	"persistlab/lab"
	"persistlab/workload"
)

// A paced run starts the changes whose slots come before its limit: ceil(rate·limit) of them.
func TestPacedChangesAreTheSlotsBeforeTheLimit(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		limit time.Duration
		want  int
	}{{20, 2 * time.Second, 40}, {2.5, time.Second, 3}, {7, time.Second, 7}, {3, time.Second, 3}, {0.1, time.Second, 1}, {10_000, 24 * time.Hour, 864_000_000}} {
		n := PacedChanges(c.rate, c.limit)
		if n != c.want || Slot(n-1, c.rate) >= c.limit || Slot(n, c.rate) < c.limit {
			t.Errorf("rate %v for %v: %d changes (last slot %v, next %v), want %d", c.rate, c.limit, n, Slot(n-1, c.rate), Slot(n, c.rate), c.want)
		}
	}
}

// A time limit ends a run of a plan far longer than it between changes, with no failure; the
// changes made are all counted, and the run lasted the limit at least.
func TestTimeLimitEndsTheRunBetweenChanges(t *testing.T) {
	in := start(t, newWorkload(t), t.TempDir(), map[string]string{"files": "50", "changes": "1000000", "time_limit": "2s"})
	res, err := in.Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	count, err := in.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m["changes"] < 1 || m["changes"] >= 1_000_000 || m["total_s"] < 2 || m["ok"]+m["unchanged"] != m["changes"] || float64(count) != m["ok"] {
		t.Errorf("changes %v (ok %v + unchanged %v) in %v s, git has %d commits: want fewer than the plan's, all counted, in 2 s at least", m["changes"], m["ok"], m["unchanged"], m["total_s"], count)
	}
	if n := res.Histograms["change"].Count(); float64(n) != m["changes"] {
		t.Errorf("%d changes timed of %v", n, m["changes"])
	}
	// The last window (of 1,000 changes, never reached) ends with the run.
	if s := res.Series["changes"]; len(s) != 1 || s[0].V != m["changes"] {
		t.Errorf("changes series %v, want one window ending at change %v", s, m["changes"])
	}
	if m["inits"] != m["repos"] || m["inits"] < 1 {
		t.Errorf("%v git inits for %v repositories: each made once, by the run", m["inits"], m["repos"])
	}
}

// A paced run starts no change before its slot and none at or after its limit. Each change's
// latency counts from its slot, so a rate the machine cannot keep shows as latency that grows
// with the run, as an open loop counts it, not as the time of one change.
func TestRatePacesChangesFromTheirSlots(t *testing.T) {
	w := newWorkload(t)
	paced, err := start(t, w, t.TempDir(), map[string]string{"files": "50", "rate": "20", "time_limit": "2s"}).Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	m := paced.Metrics
	if m["changes"] < 1 || m["changes"] > float64(PacedChanges(20, 2*time.Second)) || m["changes_per_s"] > 20 {
		t.Errorf("rate 20 for 2 s: %v changes, %v/s; want at most the 40 slots before 2 s, and no faster than 20/s", m["changes"], m["changes_per_s"])
	}
	if s := paced.Histograms["change"].Summarize(0); s.MinMs < 0 || s.Count != int64(m["changes"]) {
		t.Errorf("latencies from the slots: %+v for %v changes, want each at least 0", s, m["changes"])
	}
	behind, err := start(t, w, t.TempDir(), map[string]string{"files": "50", "rate": "10000", "time_limit": "1s"}).Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Ten thousand slots a second: every change but the first is late, the last by most of the run.
	if b := behind.Metrics; b["change_max_ms"] < 500*b["total_s"] || b["change_p95_ms"] < b["change_p50_ms"] {
		t.Errorf("rate 10000 for 1 s: %v changes in %v s, latency p50 %v p95 %v max %v ms; want the latest late by more than half the run",
			b["changes"], b["total_s"], b["change_p50_ms"], b["change_p95_ms"], b["change_max_ms"])
	}
}

// A prefill of what the changes touch leaves them no git init to make, and counts in no measure
// of the changes; its commits are git's, so a count of the repositories includes them.
func TestPrefillLeavesTheChangesNoInit(t *testing.T) {
	w := newWorkload(t)
	fixed := map[string]string{"files": "200", "rate": "20", "time_limit": "1s"}
	cold, err := start(t, w, t.TempDir(), fixed).Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if cold.Metrics["inits"] < 1 || cold.Metrics["inits"] != cold.Metrics["repos"] {
		t.Errorf("without a prefill: %v inits for %v repositories, want one per repository", cold.Metrics["inits"], cold.Metrics["repos"])
	}
	for _, c := range []struct {
		layout, prefill string
		repos           int
	}{
		{LayoutDistributed, PrefillTouched, len(Plan{Files: 200, Changes: 20000, Layout: LayoutDistributed, Seed: 1}.FilesOf(PacedChanges(20, time.Second)))},
		{LayoutMonolithic, PrefillAll, 1},
	} {
		fixed["layout"], fixed["prefill"] = c.layout, c.prefill
		in := start(t, w, t.TempDir(), fixed)
		res, err := in.Drive(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Metrics
		count, err := in.Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if m["inits"] != 0 || m["changes"] < 1 || m["repos"] != float64(c.repos) || float64(count) != m["ok"]+float64(in.prefillCommits) {
			t.Errorf("%s, prefill %s: %v inits, %v changes, %v repositories (want %d), git has %d commits for %v made and %d prefilled",
				c.layout, c.prefill, m["inits"], m["changes"], m["repos"], c.repos, count, m["ok"], in.prefillCommits)
		}
		if n := res.Histograms["change"].Count(); float64(n) != m["changes"] || m["ok"]+m["unchanged"] != m["changes"] || m["changes"] > float64(PacedChanges(20, time.Second)) {
			t.Errorf("%s, prefill %s: %d timed, ok %v + unchanged %v of %v changes: the prefill must count in none",
				c.layout, c.prefill, n, m["ok"], m["unchanged"], m["changes"])
		}
		if !strings.HasPrefix(res.Facts["prefill"], c.prefill+":") {
			t.Errorf("facts %v, want the prefill's", res.Facts)
		}
	}
}

// A crash run paced and time-limited that reaches its limit before any kill is no killed run: its
// acknowledgements are git's commits, the prefill's included, and its disk use is measured.
func TestAckedRunEndsAtItsTimeLimit(t *testing.T) {
	in := start(t, newWorkload(t), t.TempDir(), map[string]string{"files": "100", "rate": "20", "time_limit": "1s", "prefill": PrefillTouched})
	res, acks, err := in.DriveAcked(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	count, err := in.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if acks.Max() != count || acks.Max() != int64(res.Metrics["ok"])+int64(in.prefillCommits) || in.prefillCommits == 0 {
		t.Errorf("acknowledged %d, git has %d, %v made and %d prefilled", acks.Max(), count, res.Metrics["ok"], in.prefillCommits)
	}
	if res.Facts["disk_use"] == "" || res.Metrics["repos"] < 1 {
		t.Errorf("a run that reached its time limit was taken for a killed one: facts %v", res.Facts)
	}
}

// Plan estimates: a time limit bounds a cell, the write-back's cap after it; without one a cell
// runs to its plan's end (ebs-git's estimate as before).
func TestLengthIsTheTimeLimit(t *testing.T) {
	info, err := workload.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fixed map[string]string
		want  time.Duration
	}{
		{nil, 0},
		{map[string]string{"writeback": "true"}, 0},
		{map[string]string{"time_limit": "20s", "rate": "20"}, 20 * time.Second},
		{map[string]string{"time_limit": "20s", "writeback": "true"}, 60 * time.Second},
	} {
		l := info.Length(workload.Resolve(Params, c.fixed, nil))
		if l.Bound != c.want || (c.want > 0 && !strings.HasPrefix(l.BoundBy, "time_limit")) {
			t.Errorf("%v: bound %v by %q, want %v", c.fixed, l.Bound, l.BoundBy, c.want)
		}
	}
}

// onVolume starts a lab volume of opts for one run, stopped at the test's end, where this machine
// can run one.
func onVolume(t *testing.T, opts map[string]string) (backend.Backend, backend.Target) {
	t.Helper()
	b, err := backend.New(volume.Name, backend.Env{WorkDir: t.TempDir(), Options: opts})
	if err != nil {
		t.Skipf("lab volume: %v", err)
	}
	target, err := b.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Stop(context.Background()); err != nil {
			t.Errorf("stop the volume: %v", err)
		}
	})
	return b, target
}

func startOn(t *testing.T, target backend.Target, fixed map[string]string) *instance {
	t.Helper()
	w := newWorkload(t)
	p := workload.Resolve(Params, fixed, nil)
	if err := w.Check(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	in, err := w.Start(context.Background(), workload.Env{Target: target, CellDir: t.TempDir(), Params: p, Self: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Stop(context.Background()) })
	return in.(*instance)
}

// On a volume slower than the changes (io2 at 100 IOPS, changes of about 5 units each at 25/s),
// the page cache absorbs the changes and the timed write-back pays for them: it lasts at least
// what the volume's limit needs for the units it wrote, and leaves nothing behind. The prefill
// before it moved no counter of the volume.
func TestWriteBackTakesTheVolumesTime(t *testing.T) {
	const iops = 100
	b, target := onVolume(t, map[string]string{"type": "io2", "size": "20GiB", "iops": "100"})
	fresh := b.Stats()
	in := startOn(t, target, map[string]string{"files": "5000", "rate": "25", "time_limit": "2s", "prefill": PrefillTouched, "writeback": "true"})
	before := b.Stats()
	for k, v := range fresh {
		if before[k] != v {
			t.Errorf("the prefill moved %s: %v, then %v", k, v, before[k])
		}
	}
	// The volume's units over time, to tell the write-back's from the changes'.
	type sample struct {
		at    time.Time
		units float64
	}
	var samples []sample
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			samples = append(samples, sample{time.Now(), b.Stats()[lab.VolumeWriteUnits]})
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	driven := time.Now() // at most the run's start
	res, err := in.Drive(context.Background(), 0)
	close(stop)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	end := b.Stats()[lab.VolumeWriteUnits]
	// The write-back starts once the last change has ended: no sooner than this after driven.
	changes := res.Series["changes"]
	lastChange := time.Duration(changes[len(changes)-1].T * float64(time.Second))
	atChangesEnd := before[lab.VolumeWriteUnits]
	for _, s := range samples {
		if s.at.Sub(driven) <= lastChange {
			atChangesEnd = s.units
		}
	}
	writtenBack := end - atChangesEnd
	if err := syncFS(target.Dir); err != nil {
		t.Fatal(err)
	}
	left := b.Stats()[lab.VolumeWriteUnits] - end
	t.Logf("%v changes in %v s; write-back %.2f s of %.0f units (%.0f during the changes, %.0f after it); sustained %.1f/s of %.1f/s",
		m["changes"], m["total_s"], m["writeback_s"], writtenBack, atChangesEnd-before[lab.VolumeWriteUnits], left, m["sustained_per_s"], m["changes_per_s"])
	if res.Facts["writeback"] != "" || m["writeback_s"] >= 4 {
		t.Fatalf("write-back %v s, capped (%q): want it within its 4 s cap here", m["writeback_s"], res.Facts["writeback"])
	}
	if writtenBack < 10 || m["writeback_s"] < 0.9*(writtenBack-1)/iops || left > 3 {
		t.Errorf("write-back of %.0f units took %.2f s, want at least the %.2f s of %d IOPS; %.0f units were left after it",
			writtenBack, m["writeback_s"], (writtenBack-1)/iops, iops, left)
	}
	want := m["changes_per_s"] * min(1, m["total_s"]/m["writeback_s"])
	if math.Abs(m["sustained_per_s"]-want) > 1e-9*want || m["sustained_per_s"] > 25 {
		t.Errorf("sustained %v/s, want changes_per_s %v × min(1, %v s / %v s) = %v", m["sustained_per_s"], m["changes_per_s"], m["total_s"], m["writeback_s"], want)
	}
}

// A write-back the volume cannot finish within its cap (st1 with its credits spent: about 5
// units of a MiB a second) is cut there, the figure marked an upper bound; Stop then ends it,
// and the volume stops cleanly after it (nothing holds its mount).
func TestCappedWriteBackEndsByStop(t *testing.T) {
	_, target := onVolume(t, map[string]string{"type": "st1", "size": "125GiB", "credit_scale": "1e-9"})
	in := startOn(t, target, map[string]string{"files": "5000", "rate": "20", "time_limit": "1s", "prefill": PrefillTouched, "writeback": "true"})
	res, err := in.Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	if m["writeback_s"] != 2 || !strings.Contains(res.Facts["writeback"], "upper bound") || m["sustained_per_s"] != m["changes_per_s"]*m["total_s"]/2 {
		t.Errorf("write-back %v s (fact %q), sustained %v of %v/s in %v s: want it capped at 2 s and the figure scaled by it",
			m["writeback_s"], res.Facts["writeback"], m["sustained_per_s"], m["changes_per_s"], m["total_s"])
	}
	t0 := time.Now()
	if err := in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-in.writingBack:
	default:
		t.Error("Stop returned with the write-back still running")
	}
	t.Logf("%v changes; Stop took %v to end the write-back", m["changes"], time.Since(t0).Round(time.Millisecond))
}
