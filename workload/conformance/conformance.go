// Package conformance is the one test every workload passes, as backend/conformance is every
// backend's: its declarations are complete, its defaults pass its own check, one brief cell on a
// local directory starts, drives and stops twice leaving no process behind, every metric it reports
// is declared with a unit, and, for a workload that numbers its acknowledged writes, a killed
// instance keeps on disk every write it acknowledged.
//
// Processes are found by parent pid from this test process down (never by name), with this
// process made a child subreaper meanwhile, so that what a workload's process leaves orphaned
// is reparented here and found too.
package conformance

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"persistlab/backend"
	"persistlab/backend/local"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// Options are what one workload's test gives the suite.
type Options struct {
	// Fixed are the few parameters that keep the cell brief and small (sizes, counts, VUs), as a
	// scenario fixes them; every other parameter keeps its declared default.
	Fixed map[string]string
	// Sections are the workload's own settings (an app's command), as a scenario gives them.
	Sections map[string]any
	// Self is Env.Self: the persistlab executable, or a test binary that answers `app ...`.
	Self string
	// Drive is how long a timed workload is driven (default 1 s; the warm-up before it, half).
	Drive time.Duration
	// KillAfter is how long the acknowledged load runs before the kill (default 1 s).
	KillAfter time.Duration
	// KillFixed are parameters over Fixed for the kill: a load long enough to be killed mid-way.
	KillFixed map[string]string
	// Result, if set, checks what only this workload can promise of a brief cell's result.
	Result func(t *testing.T, res *workload.Result)
}

// Timeouts of the suite: the whole of one part, and a killed instance's exit (crash.go's bound).
const (
	partTimeout = 3 * time.Minute
	exitWithin  = 30 * time.Second
)

// settleWithin is how long processes may take to be gone after what should end them (SIGKILL of
// a group is not instant; a SIGTERM'd server flushes first).
var settleWithin = 10 * time.Second

// Run checks the registered workload name with opts on the local backend.
func Run(t *testing.T, name string, opts Options) {
	t.Helper()
	if opts.Drive <= 0 {
		opts.Drive = time.Second
	}
	if opts.KillAfter <= 0 {
		opts.KillAfter = time.Second
	}
	info, err := workload.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	spec := scenario.Workload{Type: name, Params: opts.Fixed, Sections: opts.Sections}
	if info.NeedsOf != nil {
		info.Needs = info.NeedsOf(spec)
	}
	becomeSubreaper(t)

	t.Run("Declarations", func(t *testing.T) { checkDeclarations(t, info) })

	wl, err := info.New(spec)
	if err != nil {
		t.Fatalf("New(%+v): %v", spec, err)
	}
	for _, fixed := range []map[string]string{opts.Fixed, opts.KillFixed} {
		for k := range fixed {
			if _, ok := param.Find(info.Params, k); !ok {
				t.Fatalf("the test fixes %s, which workload %s does not declare", k, name)
			}
		}
	}
	params := workload.Resolve(info.Params, opts.Fixed, nil)

	t.Run("DefaultsPassCheck", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), partTimeout)
		defer cancel()
		if err := wl.Check(ctx, workload.Resolve(info.Params, nil, nil)); err != nil {
			t.Errorf("the declared defaults alone: %v", err)
		}
		if err := wl.Check(ctx, params); err != nil {
			t.Errorf("the defaults with %v: %v", opts.Fixed, err)
		}
	})

	t.Run("StartDriveStopTwice", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), partTimeout)
		defer cancel()
		before := processes()
		c := newCell(t, ctx, info)
		in, err := wl.Start(ctx, c.env(params, opts.Self))
		if err != nil {
			settle(t, before, "after a failed Start")
			t.Fatal(err)
		}
		stopped := false
		defer func() {
			if !stopped {
				in.Stop(context.WithoutCancel(ctx))
			}
		}()
		checkCapabilities(t, wl, in)
		d := time.Duration(0) // an untimed workload runs to its own end (the runner passes 0)
		if info.Timed {
			d = opts.Drive
			// The runner warms a timed instance up with Drive before the measured Drive.
			if _, err := in.Drive(ctx, d/2); err != nil {
				t.Fatalf("warm-up Drive: %v", err)
			}
		}
		res, err := in.Drive(ctx, d)
		if err != nil {
			t.Fatalf("Drive: %v", err)
		}
		checkResult(t, info, res, true)
		if opts.Result != nil {
			opts.Result(t, res)
		}
		stopped = true
		if err := in.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := in.Stop(ctx); err != nil {
			t.Errorf("second Stop: %v", err)
		}
		settle(t, before, "after Stop")
	})

	t.Run("KillKeepsAcknowledged", func(t *testing.T) {
		inspector, ok := wl.(workload.Inspector)
		if !ok {
			t.Skipf("workload %s cannot read what persisted (no workload.Inspector): no crash runs", name)
		}
		params := workload.Resolve(info.Params, opts.Fixed, opts.KillFixed)
		if cc, ok := wl.(workload.CrashChecker); ok {
			if err := cc.CheckCrash(params); err != nil {
				t.Skipf("crash runs refused with these parameters: %v", err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), partTimeout)
		defer cancel()
		if err := wl.Check(ctx, params); err != nil {
			t.Fatalf("the parameters of the kill, %v: %v", params, err)
		}
		checkKill(t, ctx, info, wl, inspector, params, opts)
	})
}

// checkCapabilities: what the runner's checks let a workload run, before anything starts, its
// instances can do. Crash runs need an Inspector, whose instances must be Acknowledged; several
// instances need a Sharer (and an Inspector), whose instances must be Shared.
func checkCapabilities(t *testing.T, wl workload.Workload, in workload.Instance) {
	t.Helper()
	_, inspects := wl.(workload.Inspector)
	if _, ok := in.(workload.Acknowledged); inspects && !ok {
		t.Errorf("the workload is a workload.Inspector, so crash runs are let through, but its instance is not workload.Acknowledged: every crash cell would fail")
	}
	if _, shares := wl.(workload.Sharer); shares {
		if _, ok := in.(workload.Shared); !ok {
			t.Errorf("the workload is a workload.Sharer, but its instance is not workload.Shared: every instances cell would fail")
		}
		if !inspects {
			t.Errorf("the workload is a workload.Sharer but no workload.Inspector: the runner refuses several instances it cannot count")
		}
	}
	if _, merges := wl.(workload.Merger); merges {
		if _, shares := wl.(workload.Sharer); !shares {
			t.Errorf("the workload is a workload.Merger but no workload.Sharer: its merge is never used")
		}
	}
}

// cell is one cell's local backend, made and started as runner/cell.go makes it: the backend's
// work directory is the cell's directory, its data a directory in it.
type cell struct {
	be     backend.Backend
	work   string
	target backend.Target
}

func newCell(t *testing.T, ctx context.Context, info workload.Info) *cell {
	t.Helper()
	work := t.TempDir()
	be, err := backend.New(local.Name, backend.Env{WorkDir: work, Needs: info.Needs})
	if err != nil {
		t.Fatal(err)
	}
	target, err := be.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := be.Stop(context.Background()); err != nil {
			t.Errorf("backend stop: %v", err)
		}
	})
	return &cell{be: be, work: work, target: target}
}

func (c *cell) env(p workload.Params, self string) workload.Env {
	return workload.Env{Target: c.target, CellDir: c.work, Params: p, Self: self}
}

// checkDeclarations: every parameter has a name, a kind the scenario knows, help, and a default
// its own declaration accepts; every metric a unit; no name twice.
func checkDeclarations(t *testing.T, info workload.Info) {
	kinds := []param.Kind{param.KindInt, param.KindFloat, param.KindSize, param.KindDuration,
		param.KindBool, param.KindEnum, param.KindString}
	seen := map[string]bool{}
	for _, p := range info.Params {
		switch {
		case p.Name == "":
			t.Errorf("a parameter without a name: %+v", p)
			continue
		case seen[p.Name]:
			t.Errorf("parameter %s declared twice", p.Name)
		}
		seen[p.Name] = true
		if !slices.Contains(kinds, p.Kind) {
			t.Errorf("parameter %s: kind %q, want one of %v", p.Name, p.Kind, kinds)
		}
		if p.Kind == param.KindEnum && len(p.Allowed) == 0 {
			t.Errorf("parameter %s: an enum with no allowed values", p.Name)
		}
		if strings.TrimSpace(p.Help) == "" {
			t.Errorf("parameter %s has no Help (users read it in `workloads` and in errors)", p.Name)
		}
		if p.Default != "" {
			if err := p.Check("workload."+p.Name, p.Default); err != nil {
				t.Errorf("parameter %s: its default is refused by its own declaration: %v", p.Name, err)
			}
		}
	}
	seenMetric := map[string]bool{}
	for _, m := range info.Metrics {
		switch {
		case m.Name == "":
			t.Errorf("a metric without a name: %+v", m)
			continue
		case seenMetric[m.Name]:
			t.Errorf("metric %s declared twice", m.Name)
		}
		seenMetric[m.Name] = true
		// workload.Metric has no unitless form: its Unit is one of ms, MiB/s, IOPS, count, share...
		if strings.TrimSpace(m.Unit) == "" {
			t.Errorf("metric %s has no unit", m.Name)
		}
		// A name that states its unit agrees with the declared one.
		for _, s := range []struct{ suffix, unit string }{{"_ms", "ms"}, {"_mib_s", "MiB/s"}, {"_mib", "MiB"}} {
			if strings.HasSuffix(m.Name, s.suffix) && m.Unit != s.unit {
				t.Errorf("metric %s is declared in %q, its name says %s", m.Name, m.Unit, s.unit)
				break
			}
		}
	}
}

// checkResult: every metric declared, finite and not negative, a count whole;
// counters not negative; series in time order and finite. A clean cell carries no error samples.
func checkResult(t *testing.T, info workload.Info, res *workload.Result, clean bool) {
	t.Helper()
	if res == nil {
		t.Fatal("a nil result without an error")
	}
	if res.Elapsed <= 0 {
		t.Errorf("elapsed %v", res.Elapsed)
	}
	units := map[string]string{}
	for _, m := range info.Metrics {
		units[m.Name] = m.Unit
	}
	var undeclared []string
	for _, k := range sortedKeys(res.Metrics) {
		v := res.Metrics[k]
		unit, declared := units[k]
		if !declared {
			undeclared = append(undeclared, k)
		}
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			t.Errorf("metric %s = %v", k, v)
		case v < 0:
			t.Errorf("metric %s = %v: negative", k, v)
		case unit == "count" && v != math.Trunc(v):
			t.Errorf("metric %s = %v: a count that is not a whole number", k, v)
		}
	}
	if len(undeclared) > 0 {
		t.Errorf("metrics reported but not declared in Info.Metrics (no unit in the results file; a threshold on them is refused): %s",
			strings.Join(undeclared, ", "))
	}
	for k, v := range res.Counters {
		if v < 0 {
			t.Errorf("counter %s = %d: negative", k, v)
		}
	}
	for k, h := range res.Histograms {
		if h == nil {
			t.Errorf("histogram %s is nil", k)
		}
	}
	for k, s := range res.Series {
		for i, p := range s {
			if math.IsNaN(p.T) || math.IsNaN(p.V) || math.IsInf(p.T, 0) || math.IsInf(p.V, 0) || p.T < 0 || (i > 0 && p.T < s[i-1].T) {
				t.Errorf("series %s point %d: %+v (after %+v)", k, i, p, s[max(0, i-1)])
				break
			}
		}
	}
	if clean && len(res.Errors) > 0 {
		t.Errorf("a brief cell on a local directory reported errors: %q", res.Errors)
	}
}

// checkKill runs the acknowledged load, kills the instance as runner/crash.go does (Kill, then
// wait for Exited), and checks what the disk kept. A process kill keeps the page cache, so every
// acknowledged write is there whatever the workload syncs: recovered >= max acknowledged, whatever
// the durability settings (a lost disk is another matter: local's Crash keeps nothing, checked last).
func checkKill(t *testing.T, ctx context.Context, info workload.Info, wl workload.Workload, inspector workload.Inspector,
	params workload.Params, opts Options) {
	before := processes()
	c := newCell(t, ctx, info)
	var stops []func(context.Context) error
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			if err := stops[i](context.WithoutCancel(ctx)); err != nil {
				t.Errorf("Stop: %v", err)
			}
		}
		settle(t, before, "after every instance was stopped")
	}()
	start := func(target backend.Target) workload.Acknowledged {
		t.Helper()
		in, err := wl.Start(ctx, workload.Env{Target: target, CellDir: c.work, Params: params, Self: opts.Self})
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, in.Stop)
		acked, ok := in.(workload.Acknowledged)
		if !ok {
			t.Skipf("workload %s is an Inspector but its instance does not number its acknowledged writes", info.Name)
		}
		return acked
	}
	in := start(c.target)

	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	type loaded struct {
		res  *workload.Result
		acks *measure.AckLog
		err  error
	}
	done := make(chan loaded, 1)
	go func() {
		res, acks, err := in.DriveAcked(loadCtx, opts.KillAfter+time.Minute)
		done <- loaded{res, acks, err}
	}()
	select {
	case <-time.After(opts.KillAfter):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	killAt := time.Now()
	in.Kill()
	select {
	case <-in.Exited():
	case <-time.After(exitWithin):
		t.Fatalf("the killed instance did not exit within %v", exitWithin)
	}
	stopLoad()
	load := <-done
	if load.err != nil {
		t.Fatalf("DriveAcked ended by the kill: %v", load.err)
	}
	// The instance's processes are gone once it exited: a crash run counts on it.
	settle(t, before, "after Kill and Exited")

	checkResult(t, info, load.res, false) // errors after the kill are expected
	maxAcked := load.acks.Max()
	if maxAcked <= 0 {
		t.Fatalf("no write acknowledged in %v of load: nothing to check", opts.KillAfter)
	}
	if v, ok := load.res.Metrics["max_acked"]; ok && v != float64(maxAcked) {
		t.Errorf("metric max_acked %v, the acknowledgement log's highest %d", v, maxAcked)
	}
	for i := 1; i < len(load.acks.Acks); i++ {
		if load.acks.Acks[i].Count == load.acks.Acks[i-1].Count {
			t.Errorf("count %d acknowledged twice: two acknowledged writes, one count", load.acks.Acks[i].Count)
			break
		}
	}

	// What the disk kept, read without the system under test, then by a new instance on it.
	found := workload.InspectTarget(inspector, c.target)
	switch {
	case found == (workload.Survivor{}):
		t.Logf("Inspect reads nothing of this workload's data (a zero Survivor)")
	case !found.Exists:
		t.Errorf("Inspect finds no data after %d acknowledged writes: %+v", maxAcked, found)
	}
	if found.Integrity != "" && found.Integrity != "ok" {
		t.Errorf("integrity after a process kill: %s", found.Integrity)
	}
	if found.Counted && found.Count < maxAcked {
		t.Errorf("Inspect counts %d, %d acknowledged: a process kill lost acknowledged writes", found.Count, maxAcked)
	}
	again := start(c.target)
	recovered, err := again.Count(ctx)
	if err != nil {
		t.Fatalf("the new instance's Count: %v", err)
	}
	if loss := load.acks.Loss(recovered, killAt); recovered < maxAcked || loss.Lost != 0 {
		t.Errorf("recovered %d, acknowledged %d: lost %d (a process kill on a local disk loses nothing acknowledged)", recovered, maxAcked, loss.Lost)
	}
	if found.Counted && recovered != found.Count {
		t.Errorf("the new instance counts %d, Inspect read %d from the same data", recovered, found.Count)
	}
	if !found.Counted {
		t.Logf("Inspect does not count (Survivor.Counted false, Count %d); the new instance counts %d", found.Count, recovered)
	}
	if err := again.Stop(ctx); err != nil {
		t.Errorf("Stop of the new instance: %v", err)
	}

	// The lost instance's disk: local's Crash keeps nothing, so everything acknowledged is lost.
	crasher, ok := c.be.(backend.Crasher)
	if !ok {
		return
	}
	if err := crasher.Crash(); err != nil {
		t.Fatal(err)
	}
	target, err := crasher.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := workload.InspectTarget(inspector, target); s.Count != 0 || (s.Integrity != "" && s.Integrity != "ok" && s.Exists) {
		t.Errorf("Inspect of an empty recovered directory: %+v", s)
	}
	fresh := start(target)
	n, err := fresh.Count(ctx)
	if err != nil {
		t.Fatalf("a new instance on an empty recovered directory cannot count: %v", err)
	}
	if loss := load.acks.Loss(n, killAt); n != 0 || loss.Lost != maxAcked {
		t.Errorf("on an empty directory: count %d, lost %d of %d", n, loss.Lost, maxAcked)
	}
}

// proc is one live process of this test process's tree.
type proc struct {
	PID, PPID int
	Start     uint64 // clock ticks after boot: a reused pid has another
	Comm      string
}

func (p proc) String() string { return fmt.Sprintf("%d %s (parent %d)", p.PID, p.Comm, p.PPID) }

type procKey struct {
	pid   int
	start uint64
}

// processes is every live (not zombie) process descending from this one, found by parent pid.
func processes() map[procKey]proc {
	byParent := map[int][]proc{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		lp, rp := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if lp < 0 || rp < lp {
			continue
		}
		f := strings.Fields(s[rp+1:]) // [0] state, [1] ppid, ..., [19] starttime
		if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		start, _ := strconv.ParseUint(f[19], 10, 64)
		byParent[ppid] = append(byParent[ppid], proc{PID: pid, PPID: ppid, Start: start, Comm: s[lp+1 : rp]})
	}
	out := map[procKey]proc{}
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range byParent[pid] {
			out[procKey{c.PID, c.Start}] = c
			queue = append(queue, c.PID)
		}
	}
	return out
}

// settle fails the test if processes that were not in before are still alive after a short
// grace, and kills them, by pid and start time, so one leak does not spill into the next test.
func settle(t *testing.T, before map[procKey]proc, when string) {
	t.Helper()
	deadline := time.Now().Add(settleWithin)
	for {
		var extra []proc
		for k, p := range processes() {
			if _, ok := before[k]; !ok {
				extra = append(extra, p)
			}
		}
		if len(extra) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sort.Slice(extra, func(i, j int) bool { return extra[i].PID < extra[j].PID })
			t.Errorf("%s, still running after %v: %v", when, settleWithin, extra)
			for _, p := range extra {
				if same(p) {
					_ = syscall.Kill(p.PID, syscall.SIGKILL)
				}
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// same says whether p's pid still names the process p was (its start time).
func same(p proc) bool {
	for k := range processes() {
		if k.pid == p.PID {
			return k.start == p.Start
		}
	}
	return false
}

// becomeSubreaper makes this process the reaper of its descendants' orphans for the test, so a
// process a workload's child leaves behind is still found by parent pid.
func becomeSubreaper(t *testing.T) {
	var prev int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&prev)), 0, 0, 0); err != nil {
		t.Logf("PR_GET_CHILD_SUBREAPER: %v: orphans of the workload's processes are not followed", err)
		return
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Logf("PR_SET_CHILD_SUBREAPER: %v: orphans of the workload's processes are not followed", err)
		return
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, uintptr(prev), 0, 0, 0) })
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
