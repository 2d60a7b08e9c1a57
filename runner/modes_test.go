package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// Fakes for the crash and instances modes, as fakedisk and fake are the steady mode's: a backend
// that can lose its instance and mount its data more than once (fakevolume; fakereplica also
// records a replica position at the crash), and a workload that numbers what it acknowledges,
// splits its load by Share and counts what its data holds (fakeacked). Like the others they
// write to the ledger, with ids, so that everything started can be matched with its stop. Their
// counts are set by parameters, so every figure the runner derives from them is known exactly.

// fakeVolume keeps the workload's data in WorkDir/data; each further instance mounts it through a
// directory of its own (a symbolic link: another path to the same data).
type fakeVolume struct {
	fakeBackend
	mounts   int
	position int64 // the count the data held at Crash (fakereplica)
}

func (b *fakeVolume) Name() string { return "fakevolume" }
func (b *fakeVolume) data() string { return filepath.Join(b.env.WorkDir, "data") }

func (b *fakeVolume) Start(context.Context) (backend.Target, error) {
	record("backend start %s", filepath.Base(b.env.WorkDir))
	return backend.Target{Dir: b.data()}, os.MkdirAll(b.data(), 0o755)
}

func (b *fakeVolume) AddInstance(context.Context, []string) (backend.Target, error) {
	if b.env.Options["fail"] == "add" {
		return backend.Target{}, errors.New("fakevolume: add failed")
	}
	b.mounts++
	mount := filepath.Join(b.env.WorkDir, fmt.Sprintf("mount-%d", b.mounts))
	record("backend add %s", mount)
	return backend.Target{Dir: mount}, os.Symlink(b.data(), mount)
}

func (b *fakeVolume) Crash() error {
	record("backend crash %s", filepath.Base(b.env.WorkDir))
	n, err := readFakeCount(b.data())
	b.position = n
	return err
}

func (b *fakeVolume) Recover(context.Context) (backend.Target, error) {
	if b.env.Options["fail"] == "recover" {
		return backend.Target{}, errors.New("fakevolume: recover failed")
	}
	record("backend recover %s", filepath.Base(b.env.WorkDir))
	return backend.Target{Dir: b.data()}, nil
}

// fakeReplica is a fakevolume that also records, at Crash, how far its replica had got.
type fakeReplica struct{ fakeVolume }

func (b *fakeReplica) RestorePosition(_ context.Context, dbPath string) error {
	record("backend position %d", b.position)
	return os.WriteFile(dbPath, []byte(strconv.FormatInt(b.position, 10)), 0o644)
}

var (
	_ backend.Crasher       = (*fakeVolume)(nil)
	_ backend.MultiInstance = (*fakeVolume)(nil)
	_ backend.Positioner    = (*fakeReplica)(nil)
)

// The count on disk: what fakeacked's writes persisted. One lock for every instance's
// read-modify-write, as one database serialises its writers.
var fakeDiskMu sync.Mutex

const fakeCountFile = "count"

func readFakeCount(dir string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, fakeCountFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(b), 10, 64)
}

func addFakeCount(dir string, n int64) error {
	fakeDiskMu.Lock()
	defer fakeDiskMu.Unlock()
	have, err := readFakeCount(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fakeCountFile), []byte(strconv.FormatInt(have+n, 10)), 0o644)
}

type fakeAcked struct{}

var fakeAckedIDs atomic.Int64

func (fakeAcked) Check(context.Context, workload.Params) error { return nil }

// CheckShare refuses fewer VUs than instances, as the counter does.
func (fakeAcked) CheckShare(p workload.Params, n int) error {
	if vus, _ := strconv.Atoi(p["vus"]); vus < n {
		return &param.FieldError{Field: "workload.vus", Value: p["vus"], Allowed: "at least one VU per instance"}
	}
	return nil
}

// MergeShares keeps the highest acknowledged count, not the sum, and makes the CPU share from
// the summed CPU time (which only a workload's own merge can).
func (fakeAcked) MergeShares(merged *workload.Result, parts []*workload.Result) {
	merged.Metrics["max_acked"] = 0
	for _, p := range parts {
		merged.Metrics["max_acked"] = max(merged.Metrics["max_acked"], p.Metrics["max_acked"])
	}
	merged.Metrics["app_cpu_util"] = merged.Metrics["app_cpu_s"] / merged.Elapsed.Seconds()
}
func (fakeAcked) Versions() map[string]string { return nil }

func (fakeAcked) Start(_ context.Context, env workload.Env) (workload.Instance, error) {
	num := func(name string) int { n, _ := strconv.Atoi(env.Params[name]); return n }
	in := &ackedInstance{id: fakeAckedIDs.Add(1), dir: env.Target.Dir, started: time.Now(), exited: make(chan struct{}),
		vus: num("vus"), acks: num("acks"), lose: num("lose"), extra: num("extra"), failShare: num("fail_share")}
	record("acked start id=%d dir=%s", in.id, filepath.Base(in.dir))
	return in, nil
}

// Inspect reads the count without an instance; a file elsewhere is a replica position's copy.
func (fakeAcked) Inspect(dir, file string) workload.Survivor {
	if file == "" {
		file = filepath.Join(dir, fakeCountFile)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return workload.Survivor{Counted: true, Integrity: "ok"}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return workload.Survivor{Exists: true, Integrity: err.Error()}
	}
	return workload.Survivor{Exists: true, Count: n, Counted: true, Integrity: "ok"}
}

type ackedInstance struct {
	id                                int64
	dir                               string
	started                           time.Time
	vus, acks, lose, extra, failShare int
	killOnce                          sync.Once
	exited                            chan struct{}
}

var (
	_ workload.Acknowledged = (*ackedInstance)(nil)
	_ workload.Shared       = (*ackedInstance)(nil)
	_ workload.Inspector    = fakeAcked{}
	_ workload.Sharer       = fakeAcked{}
	_ workload.Merger       = fakeAcked{}
)

// fakeKills holds, for each kill, how long after its instance's start it came.
var (
	fakeKillsMu sync.Mutex
	fakeKills   []time.Duration
)

func (in *ackedInstance) Drive(ctx context.Context, d time.Duration) (*workload.Result, error) {
	return in.DriveShare(ctx, d, workload.Share{Index: 0, Of: 1})
}

// DriveShare: this instance's VUs (the counter's split), each making 10 writes answered in
// Index+1 ms (service time twice that); each instance persists lose fewer than it answered.
func (in *ackedInstance) DriveShare(_ context.Context, _ time.Duration, share workload.Share) (*workload.Result, error) {
	vus := in.vus / share.Of
	if share.Index < in.vus%share.Of {
		vus++
	}
	record("acked share %d/%d vus=%d id=%d", share.Index, share.Of, vus, in.id)
	if share.Index == in.failShare {
		return nil, fmt.Errorf("share %d failed", share.Index)
	}
	ok := 10 * vus
	if err := addFakeCount(in.dir, int64(ok-in.lose)); err != nil {
		return nil, err
	}
	r := workload.NewResult()
	r.Elapsed = time.Duration(share.Index+1) * time.Second
	latency, service := measure.NewRecorder(), measure.NewRecorder()
	for i := 0; i < ok; i++ {
		latency.Record(time.Duration(share.Index+1) * time.Millisecond)
		service.Record(time.Duration(2*(share.Index+1)) * time.Millisecond)
	}
	latency.Summarize(r.Elapsed).Metrics("", r.Metrics)
	service.Summarize(r.Elapsed).Metrics("service_", r.Metrics)
	r.Histograms["latency"], r.Histograms["service"] = latency, service
	r.Metrics["ok"] = float64(ok)
	r.Metrics["max_acked"] = float64(100 * (share.Index + 1))
	r.Metrics["app_cpu_s"] = 0.5
	r.Counters["http_200"] = int64(ok)
	return r, nil
}

// DriveAcked acknowledges acks writes, of which the disk keeps all but the last lose, plus extra
// never acknowledged (in flight at the kill); then the load goes on until the kill ends it.
func (in *ackedInstance) DriveAcked(ctx context.Context, _ time.Duration) (*workload.Result, *measure.AckLog, error) {
	var acks []measure.Ack
	for i := 1; i <= in.acks; i++ {
		acks = append(acks, measure.Ack{Count: int64(i), At: time.Now()})
	}
	if err := addFakeCount(in.dir, int64(in.acks-in.lose+in.extra)); err != nil {
		return nil, nil, err
	}
	select {
	case <-in.exited:
	case <-ctx.Done():
	}
	select { // whichever came first, the kill must have come no later than the end of the load
	case <-in.exited:
		record("acked load ended by the kill id=%d", in.id)
	default:
		record("acked load cancelled before any kill id=%d", in.id)
	}
	<-ctx.Done() // crash.go ends the load once the instance exited
	r := workload.NewResult()
	r.Elapsed = time.Since(in.started)
	r.Metrics["ok"] = float64(in.acks)
	r.Metrics["max_acked"] = float64(in.acks)
	return r, measure.NewAckLog(acks), nil
}

func (in *ackedInstance) Kill() {
	in.killOnce.Do(func() {
		fakeKillsMu.Lock()
		fakeKills = append(fakeKills, time.Since(in.started))
		fakeKillsMu.Unlock()
		record("acked kill id=%d", in.id)
		close(in.exited)
	})
}

func (in *ackedInstance) Exited() <-chan struct{} { return in.exited }

func (in *ackedInstance) Count(context.Context) (int64, error) { return readFakeCount(in.dir) }

func (in *ackedInstance) Stop(context.Context) error {
	record("acked stop id=%d", in.id)
	return nil
}

func init() {
	fail := []param.Param{{Name: "fail", Kind: param.KindEnum, Allowed: []string{"add", "recover"}, Help: "the step that fails"}}
	backend.RegisterInfo(backend.Info{Name: "fakevolume", Options: fail, New: func(env backend.Env) (backend.Backend, error) {
		return &fakeVolume{fakeBackend: fakeBackend{env: env}}, nil
	}})
	backend.RegisterInfo(backend.Info{Name: "fakereplica", Options: fail, New: func(env backend.Env) (backend.Backend, error) {
		return &fakeReplica{fakeVolume{fakeBackend: fakeBackend{env: env}}}, nil
	}})
	count := func(name string, def string, max float64) param.Param {
		return param.Param{Name: name, Kind: param.KindInt, Default: def, Min: -1, Max: max}
	}
	workload.Register(workload.Info{
		Name:    "fakeloner",
		Params:  []param.Param{count("vus", "4", 100)},
		Metrics: []workload.Metric{{Name: "ok", Unit: "count"}},
		Timed:   true,
		New:     func(scenario.Workload) (workload.Workload, error) { return fakeLoner{}, nil },
	})
	workload.Register(workload.Info{
		Name: "fakeacked",
		Params: []param.Param{count("vus", "4", 100), count("acks", "10", 1000),
			count("lose", "0", 1000), count("extra", "0", 1000), count("fail_share", "-1", 8)},
		Metrics: []workload.Metric{{Name: "ok", Unit: "count"}, {Name: "max_acked", Unit: "count"}, {Name: "med_ms", Unit: "ms"}},
		Timed:   true,
		New:     func(scenario.Workload) (workload.Workload, error) { return fakeAcked{}, nil },
	})
}

func ackedSpec(sweep scenario.Sweep, backends ...scenario.BackendSpec) *scenario.Spec {
	return &scenario.Spec{Name: "fakeacked", Workload: scenario.Workload{Type: "fakeacked", Params: map[string]string{}},
		Backends: backends, Sweep: sweep, Repeat: 1, Duration: scenario.Duration(time.Second)}
}

// ledgerIDs are the instance ids of the ledger's entries that start with prefix.
func ledgerIDs(log []string, prefix string) map[int64]int {
	ids := map[int64]int{}
	for _, e := range log {
		if !strings.HasPrefix(e, prefix) {
			continue
		}
		i := strings.Index(e, "id=")
		var id int64
		fmt.Sscan(e[i+3:], &id)
		ids[id]++
	}
	return ids
}

// everyStartStopped fails the test unless every instance started was stopped, and every backend
// started was stopped once.
func everyStartStopped(t *testing.T, log []string) {
	t.Helper()
	started, stopped := ledgerIDs(log, "acked start"), ledgerIDs(log, "acked stop")
	for id := range started {
		if stopped[id] == 0 {
			t.Errorf("instance %d started, never stopped; ledger %v", id, log)
		}
	}
	if len(stopped) != len(started) {
		t.Errorf("%d instances started, %d stopped", len(started), len(stopped))
	}
	if count(log, "backend start") != count(log, "backend stop") {
		t.Errorf("backends: %d started, %d stopped", count(log, "backend start"), count(log, "backend stop"))
	}
}

// A crash run kills each instance under load at the moment drawn from the scenario's seed,
// recovers a new instance from what persisted, and counts Lost = MaxAcked - Recovered, never
// negative (writes kept without an acknowledgement are UnackedKept instead); a backend that keeps
// a replica position records it. Everything started is stopped.
func TestCrashRunKillsAtTheDrawnMomentAndCountsWhatWasLost(t *testing.T) {
	spec := ackedSpec(scenario.Sweep{{Name: "lose", Text: "0,3,10"}, {Name: "extra", Text: "0,2"}},
		scenario.BackendSpec{Name: "fakevolume"}, scenario.BackendSpec{Name: "fakereplica"})
	spec.Crash = &scenario.Crash{Count: 2, After: scenario.DurRange{From: 5 * time.Millisecond, To: 40 * time.Millisecond}, Seed: 7}
	fakeKillsMu.Lock()
	fakeKills = nil
	fakeKillsMu.Unlock()
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	log := takeLedger()
	plan, err := scenario.NewPlan(spec, Known())
	if err != nil {
		t.Fatal(err)
	}
	draws := crashDraws(spec, plan.Cells)
	// 6 points x 2 backends x 2 crashes, none a steady cell.
	if len(res.Crashes) != 24 || len(res.Cells) != 0 {
		t.Fatalf("%d crash runs, %d cells", len(res.Crashes), len(res.Cells))
	}
	for _, c := range res.Crashes {
		lose, _ := strconv.ParseInt(c.Resolved["lose"], 10, 64)
		extra, _ := strconv.ParseInt(c.Resolved["extra"], 10, 64)
		what := fmt.Sprintf("%s lose=%d extra=%d run %d", c.Backend, lose, extra, c.Repeat)
		drawn := draws[c.Index]
		if c.Failure != "" {
			t.Errorf("%s: %s", what, c.Failure)
			continue
		}
		if c.KillAfterS != drawn.Seconds() || drawn < spec.Crash.After.From || drawn > spec.Crash.After.To {
			t.Errorf("%s: killed after %vs, drawn %v in %v", what, c.KillAfterS, drawn, spec.Crash.After)
		}
		wantRecovered := 10 - lose + extra
		if c.MaxAcked != 10 || c.OKBeforeKill != 10 || c.Recovered != wantRecovered || c.Lost != max(0, c.MaxAcked-c.Recovered) ||
			c.Lost < 0 || c.UnackedKept != max(0, c.Recovered-c.MaxAcked) {
			t.Errorf("%s: max acked %d, ok %d, recovered %d (want %d), lost %d, unacked kept %d",
				what, c.MaxAcked, c.OKBeforeKill, c.Recovered, wantRecovered, c.Lost, c.UnackedKept)
		}
		if c.LostWindowMs < 0 || (c.Lost == 0 && (c.LostWindowMs != 0 || c.LostReachMs != 0)) {
			t.Errorf("%s: lost %d over %v ms reaching %v ms back", what, c.Lost, c.LostWindowMs, c.LostReachMs)
		}
		if !c.DBExisted && wantRecovered > 0 || c.Integrity != "ok" {
			t.Errorf("%s: data existed %v, integrity %q", what, c.DBExisted, c.Integrity)
		}
		switch {
		case c.Backend == "fakereplica" && (c.Position == nil || *c.Position != c.Recovered):
			t.Errorf("%s: replica position %v, recovered %d", what, c.Position, c.Recovered)
		case c.Backend == "fakevolume" && c.Position != nil:
			t.Errorf("%s: a backend without a replica recorded position %d", what, *c.Position)
		}
	}
	// Per crash: one backend started, crashed, recovered and stopped; the instance killed once,
	// while its load ran, and no sooner than drawn; it and the recovered one both stopped.
	n := len(res.Crashes)
	if count(log, "backend start") != n || count(log, "backend crash") != n || count(log, "backend recover") != n ||
		count(log, "backend stop") != n || count(log, "acked start") != 2*n || count(log, "acked kill") != n ||
		count(log, "acked load ended by the kill") != n || count(log, "backend position") != n/2 {
		t.Errorf("ledger %v", log)
	}
	everyStartStopped(t, log)
	fakeKillsMu.Lock()
	kills := fakeKills
	fakeKillsMu.Unlock()
	if len(kills) != n {
		t.Fatalf("%d kills for %d crash runs", len(kills), n)
	}
	// Runs go in plan order, one at a time: the i-th kill is the i-th crash run's.
	for i, c := range res.Crashes {
		if kills[i] < draws[c.Index] {
			t.Errorf("crash run %d killed %v after its instance started, before the drawn %v", c.Index, kills[i], draws[c.Index])
		}
	}
}

// A crash run whose recovery fails records the failure and still stops the killed instance and
// the backend.
func TestCrashRunThatCannotRecoverStopsEverything(t *testing.T) {
	spec := ackedSpec(nil, scenario.BackendSpec{Name: "fakevolume", Options: map[string]string{"fail": "recover"}})
	spec.Crash = &scenario.Crash{Count: 2, After: scenario.DurRange{From: time.Millisecond, To: 5 * time.Millisecond}, Seed: 1}
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	log := takeLedger()
	if len(res.Crashes) != 2 {
		t.Fatalf("%d crash runs", len(res.Crashes))
	}
	for _, c := range res.Crashes {
		if !strings.Contains(c.Failure, "recover failed") || c.Lost != 0 {
			t.Errorf("crash run %d: failure %q, lost %d", c.Index, c.Failure, c.Lost)
		}
	}
	if count(log, "acked start") != 2 || count(log, "acked kill") != 2 || count(log, "backend stop") != 2 {
		t.Errorf("ledger %v", log)
	}
	everyStartStopped(t, log)
}

// An instances cell starts n instances on n mounts of one backend, gives instance i share i of n
// (the VUs split as evenly as they go), sums their counts and counters, takes the highest
// acknowledgement, merges their histograms (latency figures come from the merged one, never sums
// of each instance's), counts lost updates through a fresh mount, and stops every instance.
func TestInstancesSplitTheLoadAndMergeTheirResults(t *testing.T) {
	spec := ackedSpec(scenario.Sweep{{Name: "instances", Text: "2,3"}}, scenario.BackendSpec{Name: "fakevolume"})
	spec.Workload.Params["vus"], spec.Workload.Params["lose"] = "5", "1"
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	log := takeLedger()
	if len(res.Cells) != 2 {
		t.Fatalf("%d cells", len(res.Cells))
	}
	for _, c := range res.Cells {
		n, _ := strconv.Atoi(c.Resolved["instances"])
		if c.Failure != "" {
			t.Errorf("%d instances: %s", n, c.Failure)
			continue
		}
		// Each share given once; the VUs split as evenly as they go, all of them.
		vus, sumVUs := map[int]int{}, 0
		for _, e := range log {
			var i, of, v int
			var id int64
			if _, err := fmt.Sscanf(e, "acked share %d/%d vus=%d id=%d", &i, &of, &v, &id); err == nil && of == n {
				vus[i]++
				sumVUs += v
				if v != 5/n && v != 5/n+1 || (i < 5%n) != (v == 5/n+1) {
					t.Errorf("%d instances: share %d has %d VUs", n, i, v)
				}
			}
		}
		if len(vus) != n || sumVUs != 5 {
			t.Errorf("%d instances: shares %v, %d VUs in all", n, vus, sumVUs)
		}
		for i, times := range vus {
			if times != 1 || i >= n {
				t.Errorf("%d instances: share %d given %d times", n, i, times)
			}
		}
		// Instance i answered 10 per VU in i+1 ms (service time twice that); its data kept 1 fewer.
		var ok, weighted, serviceWeighted float64
		for i := 0; i < n; i++ {
			v := 5 / n
			if i < 5%n {
				v++
			}
			ok += float64(10 * v)
			weighted += float64(10*v) * float64(i+1)
			serviceWeighted += float64(10*v) * float64(2*(i+1))
		}
		m := c.Metrics
		if m["ok"] != ok || c.Counters["http_200"] != int64(ok) || m["count"] != ok || m["service_count"] != ok {
			t.Errorf("%d instances: ok %v, http_200 %d, latencies %v, service times %v; want %v each", n, m["ok"], c.Counters["http_200"], m["count"], m["service_count"], ok)
		}
		if m["max_acked"] != float64(100*n) || m["instances"] != float64(n) {
			t.Errorf("%d instances: max_acked %v (want the highest, %d), instances %v", n, m["max_acked"], 100*n, m["instances"])
		}
		if math.Abs(m["avg_ms"]-weighted/ok) > 1e-9 || math.Abs(m["service_avg_ms"]-serviceWeighted/ok) > 1e-9 ||
			m["min_ms"] != 1 || m["max_ms"] != float64(n) {
			t.Errorf("%d instances: avg %v (want %v), service avg %v (want %v), min %v, max %v",
				n, m["avg_ms"], weighted/ok, m["service_avg_ms"], serviceWeighted/ok, m["min_ms"], m["max_ms"])
		}
		if m["count_delta"] != ok-float64(n) || m["lost_updates"] != float64(n) || c.Facts["integrity"] != "ok" {
			t.Errorf("%d instances: count delta %v, lost updates %v, integrity %q", n, m["count_delta"], m["lost_updates"], c.Facts["integrity"])
		}
		if math.IsNaN(m["app_cpu_util"]) || m["app_cpu_util"] <= 0 {
			t.Errorf("%d instances: app_cpu_util %v", n, m["app_cpu_util"])
		}
		for _, name := range []string{"latency", "service"} {
			h, err := measure.DecodeHistogram(c.Histograms[name])
			if err != nil || float64(h.TotalCount()) != ok {
				t.Errorf("%d instances: histogram %s holds %v (%v), want %v", n, name, h, err, ok)
			}
		}
	}
	// Per cell: the backend started once and stopped once, n-1 mounts for instances and one fresh
	// mount to read what persisted; every instance stopped.
	if count(log, "backend start") != 2 || count(log, "backend stop") != 2 || count(log, "backend add") != (1+1)+(2+1) ||
		count(log, "acked start") != 5 {
		t.Errorf("ledger %v", log)
	}
	everyStartStopped(t, log)
}

// An instance whose share fails fails the cell; every instance started, and the backend, are
// still stopped.
func TestInstancesCellThatFailsStopsEveryInstance(t *testing.T) {
	spec := ackedSpec(scenario.Sweep{{Name: "instances", Text: "3"}}, scenario.BackendSpec{Name: "fakevolume"})
	spec.Workload.Params["fail_share"] = "1"
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	log := takeLedger()
	if len(res.Cells) != 1 || !strings.Contains(res.Cells[0].Failure, "share 1 failed") {
		t.Fatalf("cells %+v", res.Cells)
	}
	if count(log, "acked start") != 3 || count(log, "acked share") != 3 {
		t.Errorf("ledger %v", log)
	}
	everyStartStopped(t, log)
	spec = ackedSpec(scenario.Sweep{{Name: "instances", Text: "3"}}, scenario.BackendSpec{Name: "fakevolume", Options: map[string]string{"fail": "add"}})
	res, err = runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	log = takeLedger()
	if len(res.Cells) != 1 || !strings.Contains(res.Cells[0].Failure, "add failed") || count(log, "acked start") != 0 {
		t.Errorf("cells %+v, ledger %v", res.Cells, log)
	}
	everyStartStopped(t, log)
}

// A crash run needs a backend that can lose its instance, and several instances one they can
// share: both refused before the first cell.
func TestCrashAndInstancesNeedTheirBackends(t *testing.T) {
	crash := ackedSpec(nil, scenario.BackendSpec{Name: "fakedisk"})
	crash.Crash = &scenario.Crash{Count: 1, After: scenario.DefaultCrashAfter}
	instances := ackedSpec(scenario.Sweep{{Name: "instances", Text: "1,2"}}, scenario.BackendSpec{Name: "fakedisk"})
	for name, spec := range map[string]*scenario.Spec{"crash": crash, "instances": instances} {
		res, err := runFake(t, context.Background(), spec)
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != "backends[0]" || res != nil {
			t.Errorf("%s on fakedisk: %v", name, err)
		}
		if log := takeLedger(); len(log) > 0 {
			t.Errorf("%s: started %v before refusing", name, log)
		}
	}
}

// fakeLoner is fakeacked without a way to split its load (no workload.Sharer).
type fakeLoner struct{ acked fakeAcked }

func (f fakeLoner) Check(ctx context.Context, p workload.Params) error { return f.acked.Check(ctx, p) }
func (f fakeLoner) Versions() map[string]string                        { return nil }
func (f fakeLoner) Start(ctx context.Context, env workload.Env) (workload.Instance, error) {
	return f.acked.Start(ctx, env)
}
func (f fakeLoner) Inspect(dir, file string) workload.Survivor { return f.acked.Inspect(dir, file) }

// Several instances of a workload that cannot split its load, or with fewer VUs than instances,
// are refused before anything starts, naming where the instances come from.
func TestInstancesModeIsRefusedBeforeAnythingStarts(t *testing.T) {
	takeLedger()
	loner := ackedSpec(nil, scenario.BackendSpec{Name: "fakevolume"})
	loner.Workload.Type, loner.Instances = "fakeloner", 2
	tooFew := ackedSpec(scenario.Sweep{{Name: "instances", Text: "2,5"}}, scenario.BackendSpec{Name: "fakevolume"})
	for _, c := range []struct {
		name  string
		spec  *scenario.Spec
		field string
	}{
		{"no sharer", loner, "instances"},
		{"fewer VUs than instances", tooFew, "workload.vus (at instances=5)"},
	} {
		plan, err := scenario.NewPlan(c.spec, Known())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		res, err := RunPlan(context.Background(), plan, Options{Out: filepath.Join(t.TempDir(), "r.json"), WorkDir: t.TempDir()})
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || res != nil {
			t.Errorf("%s: %v, want a refusal of %s", c.name, err, c.field)
		}
		if log := takeLedger(); len(log) > 0 {
			t.Errorf("%s: started %v before refusing", c.name, log)
		}
	}
}

// Each cell runs in one mode, which the loop and the checks share.
func TestEachCellHasOneMode(t *testing.T) {
	spec := ackedSpec(scenario.Sweep{{Name: "instances", Text: "1,2"}}, scenario.BackendSpec{Name: "fakevolume"})
	plan, err := scenario.NewPlan(spec, Known())
	if err != nil {
		t.Fatal(err)
	}
	r := &run{spec: spec, plan: plan}
	var modes []Mode
	for _, c := range plan.Cells {
		modes = append(modes, r.modeOf(c))
	}
	if want := []Mode{ModeSteady, ModeInstances}; !slices.Equal(modes, want) {
		t.Errorf("modes %v, want %v", modes, want)
	}
	spec.ShareBackend = true
	if m := r.modeOf(plan.Cells[0]); m != ModeSharedBackend {
		t.Errorf("share_backend, one instance: %v", m)
	}
	spec.ShareBackend, spec.Crash = false, &scenario.Crash{Count: 1}
	if m := r.modeOf(plan.Cells[0]); m != ModeCrash {
		t.Errorf("crash: %v", m)
	}
}
