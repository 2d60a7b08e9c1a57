package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/lab"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/results"
	"persistlab/scenario"
	"persistlab/workload"
)

// A fake backend and a fake workload let the runner be tested without FUSE or processes: they
// count what was started and stopped, and fail on request.
var (
	ledgerMu sync.Mutex
	ledger   []string // "backend start cell-...", "instance stop n=2", ...
)

func record(format string, args ...any) {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	ledger = append(ledger, fmt.Sprintf(format, args...))
}

func takeLedger() []string {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	out := ledger
	ledger = nil
	return out
}

func count(entries []string, prefix string) int {
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

type fakeBackend struct{ env backend.Env }

func (b *fakeBackend) Name() string { return "fakedisk" }
func (b *fakeBackend) Start(context.Context) (backend.Target, error) {
	record("backend start %s", filepath.Base(b.env.WorkDir))
	return backend.Target{Dir: b.env.WorkDir}, nil
}
func (b *fakeBackend) Stats() backend.Stats { return backend.Stats{"bucket_class_a": 1} }
func (b *fakeBackend) Stop(context.Context) error {
	record("backend stop %s", filepath.Base(b.env.WorkDir))
	return nil
}
func (b *fakeBackend) Versions() map[string]string { return map[string]string{"fakedisk": "1"} }

type fakeWorkload struct{}

func (fakeWorkload) Check(_ context.Context, p workload.Params) error {
	if p["n"] == "13" {
		return &param.FieldError{Field: "workload.n", Value: "13", Allowed: "anything but 13"}
	}
	return nil
}
func (fakeWorkload) Versions() map[string]string { return map[string]string{"faketool": "2"} }
func (fakeWorkload) Start(_ context.Context, env workload.Env) (workload.Instance, error) {
	record("instance start n=%s", env.Params["n"])
	return &fakeInstance{p: env.Params}, nil
}

type fakeInstance struct{ p workload.Params }

func (f *fakeInstance) Drive(ctx context.Context, _ time.Duration) (*workload.Result, error) {
	if f.p["n"] == "7" {
		return nil, errors.New("drive failed at 7")
	}
	if f.p["block"] == "true" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	n, _ := strconv.Atoi(f.p["n"])
	r := workload.NewResult()
	r.Elapsed = time.Second
	r.Metrics["twice_n"] = float64(2 * n)
	return r, nil
}
func (f *fakeInstance) Stop(context.Context) error {
	record("instance stop n=%s", f.p["n"])
	return nil
}

func init() {
	backend.RegisterInfo(backend.Info{Name: "fakedisk", Options: []param.Param{{Name: "speed", Kind: param.KindString, Help: "any text"}},
		New: func(env backend.Env) (backend.Backend, error) { return &fakeBackend{env: env}, nil }})
	workload.Register(workload.Info{
		Name: "fake",
		Params: []param.Param{
			{Name: "n", Kind: param.KindInt, Default: "1", Min: 0, Max: 100},
			{Name: "block", Kind: param.KindBool, Default: "false"},
		},
		Metrics: []workload.Metric{{Name: "twice_n", Unit: "count"}},
		New:     func(scenario.Workload) (workload.Workload, error) { return fakeWorkload{}, nil },
	})
}

func fakeSpec(sweep string, backends ...scenario.BackendSpec) *scenario.Spec {
	return &scenario.Spec{Name: "fake", Workload: scenario.Workload{Type: "fake", Params: map[string]string{}},
		Backends: backends, Sweep: scenario.Sweep{{Name: "n", Text: sweep}}, Repeat: 2}
}

func runFake(t *testing.T, ctx context.Context, spec *scenario.Spec) (*results.Results, error) {
	t.Helper()
	res, _, err := runFakeOut(t, ctx, spec)
	return res, err
}

// runFakeOut is runFake, also saying where the results file is.
func runFakeOut(t *testing.T, ctx context.Context, spec *scenario.Spec) (*results.Results, string, error) {
	t.Helper()
	takeLedger()
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	res, err := Run(ctx, spec, Options{Out: out, WorkDir: filepath.Join(work, "scratch"), Derive: groupDerive})
	return res, out, err
}

// groupDerive stands in for report.Summarize: one aggregate per backend and point, over the cells
// that did not fail.
func groupDerive(r *results.Results) {
	groups, order := results.GroupByPoint(r, r.Cells, func(c results.Cell) (results.PointKey, bool) { return r.Key(c.Cell), c.Failure == "" })
	r.Aggregates = r.Aggregates[:0]
	for _, k := range order {
		r.Aggregates = append(r.Aggregates, results.Aggregate{Backend: k.Backend, Point: k.Point, Runs: len(groups[k])})
	}
}

func TestEveryCellRunsAndEverythingStartedIsStopped(t *testing.T) {
	spec := fakeSpec("1,7,3", scenario.BackendSpec{Name: "fakedisk", Label: "a"}, scenario.BackendSpec{Name: "fakedisk", Label: "b"})
	res, out, err := runFakeOut(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	log := takeLedger()
	// 3 points x 2 backends x 2 repeats; n=7 fails in Drive but is still stopped.
	if len(res.Cells) != 12 || count(log, "backend start") != 12 || count(log, "backend stop") != 12 ||
		count(log, "instance start") != 12 || count(log, "instance stop") != 12 {
		t.Fatalf("%d cells; ledger %v", len(res.Cells), log)
	}
	failed := 0
	for _, c := range res.Cells {
		n, _ := strconv.Atoi(c.Params["n"])
		switch {
		case n == 7:
			failed++
			if !strings.Contains(c.Failure, "drive failed at 7") {
				t.Errorf("cell %d failure %q", c.Index, c.Failure)
			}
		case c.Failure != "" || c.M("twice_n") != float64(2*n) || c.BackendStats["bucket_class_a"] != 0 ||
			c.M(MachineCPUMetric) < 0 || c.M(MachineCPUMetric) > 1:
			t.Errorf("cell %+v", c)
		}
	}
	if failed != 4 || res.Versions["fakedisk"] != "1" || res.Versions["faketool"] != "2" || res.Units["twice_n"] != "count" {
		t.Errorf("failed %d, versions %v, units %v", failed, res.Versions, res.Units)
	}
	if len(res.Aggregates) != 4 || res.Aggregates[0].Point != "n=1" || res.Aggregates[1].Point != "n=3" || res.Aggregates[0].Runs != 2 {
		t.Errorf("aggregates %+v", res.Aggregates)
	}
	// The file holds what Derive made from the cells it saved.
	saved, err := results.Load(out)
	if err != nil || len(saved.Aggregates) != 4 {
		t.Errorf("saved aggregates: %v, %v", saved, err)
	}
}

func TestWhatIsKnowableIsCheckedBeforeTheFirstCell(t *testing.T) {
	for name, tc := range map[string]struct {
		spec  *scenario.Spec
		field string
	}{
		"a workload's own check of one point": {fakeSpec("1,13", scenario.BackendSpec{Name: "fakedisk"}), "workload.n (at n=13)"},
		"the second backend's option": {fakeSpec("1", scenario.BackendSpec{Name: "fakedisk", Label: "a"},
			scenario.BackendSpec{Name: "fakedisk", Label: "b", Options: map[string]string{"sped": "2"}}), "backends[1].options.sped"},
		"a duration the workload does not use": {func() *scenario.Spec {
			s := fakeSpec("1", scenario.BackendSpec{Name: "fakedisk"})
			s.Duration = scenario.Duration(time.Second)
			return s
		}(), "duration"},
		"crash runs of a workload that cannot tell what was lost": {func() *scenario.Spec {
			s := fakeSpec("1", scenario.BackendSpec{Name: "fakedisk"})
			s.Crash = &scenario.Crash{Count: 1, After: scenario.DefaultCrashAfter}
			return s
		}(), "crash"},
	} {
		res, err := runFake(t, context.Background(), tc.spec)
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || res != nil {
			t.Errorf("%s: %v (field %q)", name, err, tc.field)
		}
		if log := takeLedger(); len(log) > 0 {
			t.Errorf("%s: started %v before refusing", name, log)
		}
	}
}

func TestInterruptDropsThePartialCellAndStopsIt(t *testing.T) {
	spec := fakeSpec("1", scenario.BackendSpec{Name: "fakedisk"})
	spec.Workload.Params["block"] = "true"
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if count(snapshotLedger(), "instance start") > 0 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err := runFake(t, ctx, spec)
	if err == nil || res.Status != results.StatusInterrupted || len(res.Cells) != 0 {
		t.Fatalf("err %v, results %+v", err, res)
	}
	log := takeLedger()
	if count(log, "instance stop") != 1 || count(log, "backend stop") != 1 {
		t.Errorf("ledger %v", log)
	}
}

func snapshotLedger() []string {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	return append([]string(nil), ledger...)
}

func TestShareBackendStartsEachBackendOncePerRepeat(t *testing.T) {
	spec := fakeSpec("1,2,3", scenario.BackendSpec{Name: "fakedisk", Label: "a"}, scenario.BackendSpec{Name: "fakedisk", Label: "b"})
	spec.ShareBackend = true
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	log := takeLedger()
	// 2 backends x 2 repeats started once each; every cell's instance started and stopped.
	if len(res.Cells) != 12 || count(log, "backend start") != 4 || count(log, "backend stop") != 4 ||
		count(log, "instance start") != 12 || count(log, "instance stop") != 12 {
		t.Fatalf("%d cells; ledger %v", len(res.Cells), log)
	}
	for _, c := range res.Cells {
		if c.Failure != "" {
			t.Errorf("cell %+v", c)
		}
	}
	spec.Crash = &scenario.Crash{Count: 1, After: scenario.DefaultCrashAfter}
	var fe *param.FieldError
	if _, err := runFake(t, context.Background(), spec); !errors.As(err, &fe) || fe.Field != "share_backend" {
		t.Errorf("shared backend with crash runs: %v", err)
	}
}

// fakeProbed is a fakedisk whose lab part has a ceiling on this machine.
type fakeProbed struct{ fakeBackend }

func (b *fakeProbed) ProbeCeiling(context.Context) (lab.Ceiling, bool, error) {
	record("probe %s", filepath.Base(b.env.WorkDir))
	return lab.Ceiling{ReadMiBs: 100, WriteMiBs: 50, Method: "fake"}, true, nil
}

func init() {
	backend.RegisterInfo(backend.Info{Name: "fakeprobed", New: func(env backend.Env) (backend.Backend, error) {
		return &fakeProbed{fakeBackend{env: env}}, nil
	}})
	workload.Register(workload.Info{
		Name:    "fakebulk",
		Params:  []param.Param{{Name: "n", Kind: param.KindInt, Default: "1", Min: 0, Max: 100}},
		Metrics: []workload.Metric{{Name: workload.ReadMiBs, Unit: "MiB/s"}},
		New:     func(scenario.Workload) (workload.Workload, error) { return fakeWorkload{}, nil },
	})
}

// A workload that moves bulk data gets each probing backend's ceiling measured once, before the
// first cell; one that does not, does not pay for the probe.
func TestCeilingsAreProbedOncePerBackendForBulkWorkloads(t *testing.T) {
	spec := fakeSpec("1,3", scenario.BackendSpec{Name: "fakeprobed", Label: "p"}, scenario.BackendSpec{Name: "fakedisk", Label: "d"})
	spec.Workload.Type = "fakebulk"
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	log := takeLedger()
	if count(log, "probe") != 1 || log[0] != "probe ceiling-0" || len(res.Ceilings) != 1 || res.Ceilings["p"].ReadMiBs != 100 {
		t.Errorf("ceilings %v; ledger %v", res.Ceilings, log)
	}
	spec.Workload.Type = "fake"
	res, err = runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if log := takeLedger(); count(log, "probe") != 0 || len(res.Ceilings) != 0 {
		t.Errorf("a counter-like workload was probed: %v %v", res.Ceilings, log)
	}
}

// fakeSampled counts its Stats calls, a counter worth seeing over time.
type fakeSampled struct {
	fakeBackend
	calls atomic.Int64
}

func (b *fakeSampled) SampledStats() []string { return []string{"calls"} }
func (b *fakeSampled) Stats() backend.Stats {
	return backend.Stats{"calls": float64(b.calls.Add(1))}
}

func init() {
	backend.RegisterInfo(backend.Info{Name: "fakesampled", New: func(env backend.Env) (backend.Backend, error) {
		return &fakeSampled{fakeBackend: fakeBackend{env: env}}, nil
	}})
}

// A backend's sampled counters become series of the cell, in time order, from the measured run.
func TestBackendCountersAreSampledOverTheCell(t *testing.T) {
	spec := fakeSpec("1", scenario.BackendSpec{Name: "fakesampled"})
	spec.Repeat = 1
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	points := res.Cells[0].Series["backend.calls"]
	if len(points) < 2 {
		t.Fatalf("series %v", res.Cells[0].Series)
	}
	for i := 1; i < len(points); i++ {
		if points[i].T < points[i-1].T || points[i].V <= points[i-1].V {
			t.Errorf("points out of order: %v", points)
		}
	}
	if res.Cells[0].BackendStats["calls"] <= 0 {
		t.Errorf("stats delta %v", res.Cells[0].BackendStats)
	}
	spec = fakeSpec("1", scenario.BackendSpec{Name: "fakedisk"})
	spec.Repeat = 1
	if res, err := runFake(t, context.Background(), spec); err != nil || len(res.Cells[0].Series) != 0 {
		t.Errorf("a backend that samples nothing got series: %v %v", res.Cells[0].Series, err)
	}
}

// A run interrupted while the ceiling is probed says so in its results file.
func TestInterruptDuringTheCeilingProbe(t *testing.T) {
	spec := fakeSpec("1", scenario.BackendSpec{Name: "fakeprobed"})
	spec.Workload.Type = "fakebulk"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := runFake(t, ctx, spec)
	if err == nil || res == nil || res.Status != results.StatusInterrupted || len(res.Cells) != 0 {
		t.Errorf("%v %+v", err, res)
	}
}

func TestThinKeepsEveryOtherPointAndTheLast(t *testing.T) {
	var s []measure.Point
	for i := 0; i < 10; i++ {
		s = append(s, measure.Point{T: float64(i), V: float64(i * i)})
	}
	got := thin(s)
	want := []float64{0, 2, 4, 6, 8, 9}
	if len(got) != len(want) {
		t.Fatalf("thinned %v", got)
	}
	for i, p := range got {
		if p.T != want[i] || p.V != want[i]*want[i] {
			t.Errorf("point %d: %v, want t=%v", i, p, want[i])
		}
	}
}

// A run whose every cell failed says so in its status; one with a cell that succeeded is complete.
func TestARunWhoseEveryCellFailedIsFailed(t *testing.T) {
	res, out, err := runFakeOut(t, context.Background(), fakeSpec("7", scenario.BackendSpec{Name: "fakedisk"}))
	if err != nil {
		t.Fatal(err)
	}
	saved, lerr := results.Load(out)
	if lerr != nil {
		t.Fatal(lerr)
	}
	for _, r := range []*results.Results{res, saved} {
		if len(r.Cells) != 2 || r.Status != results.StatusFailed || r.Error != "every cell failed (2 of 2); the first, cell 0: drive failed at 7" {
			t.Errorf("%d cells, status %s: %s", len(r.Cells), r.Status, r.Error)
		}
	}
	res, err = runFake(t, context.Background(), fakeSpec("7,1", scenario.BackendSpec{Name: "fakedisk"}))
	if err != nil || res.Status != results.StatusComplete || res.Error != "" {
		t.Errorf("one point of two failed: %v, status %s: %s", err, res.Status, res.Error)
	}
}
