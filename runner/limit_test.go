package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// A backend with a helper process per instance (as gcsfuse), and a workload whose app is a busy
// loop, both real processes started through the wraps the runner gives them, so that the test can
// see which cpu cgroup each one runs in.

var (
	helpersMu sync.Mutex
	helpers   = map[string][]*exec.Cmd{} // by the backend's work directory
)

type fakeHelped struct{ env backend.Env }

func startWrapped(wrap []string, argv ...string) (*exec.Cmd, error) {
	argv = append(slices.Clone(wrap), argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	return cmd, cmd.Start()
}

func (b *fakeHelped) start(wrap []string) (backend.Target, error) {
	cmd, err := startWrapped(wrap, "sleep", "600")
	if err != nil {
		return backend.Target{}, err
	}
	helpersMu.Lock()
	helpers[b.env.WorkDir] = append(helpers[b.env.WorkDir], cmd)
	n := len(helpers[b.env.WorkDir])
	helpersMu.Unlock()
	// The target names its helper, so the app can find the one of its own instance.
	return backend.Target{Dir: filepath.Join(b.env.WorkDir, fmt.Sprint(n-1))}, nil
}
func (b *fakeHelped) Name() string                                  { return "fakehelped" }
func (b *fakeHelped) Start(context.Context) (backend.Target, error) { return b.start(b.env.Wrap) }
func (b *fakeHelped) AddInstance(_ context.Context, wrap []string) (backend.Target, error) {
	return b.start(wrap)
}
func (b *fakeHelped) Stats() backend.Stats { return backend.Stats{} }
func (b *fakeHelped) Stop(context.Context) error {
	helpersMu.Lock()
	defer helpersMu.Unlock()
	for _, cmd := range helpers[b.env.WorkDir] {
		cmd.Process.Kill()
		cmd.Wait()
	}
	return nil
}
func (b *fakeHelped) Versions() map[string]string { return nil }

func helperOf(dir string) *exec.Cmd {
	helpersMu.Lock()
	defer helpersMu.Unlock()
	var n int
	fmt.Sscan(filepath.Base(dir), &n)
	return helpers[filepath.Dir(dir)][n]
}

type busyWorkload struct{}

func (busyWorkload) Check(context.Context, workload.Params) error { return nil }
func (busyWorkload) Versions() map[string]string                  { return nil }
func (busyWorkload) Start(_ context.Context, env workload.Env) (workload.Instance, error) {
	cmd, err := startWrapped(env.Target.Wrap, "/bin/sh", "-c", "while :; do :; done")
	if err != nil {
		return nil, err
	}
	return &busyInstance{app: cmd, helper: helperOf(env.Target.Dir)}, nil
}
func (busyWorkload) Inspect(string, string) workload.Survivor { return workload.Survivor{} }
func (busyWorkload) CheckShare(workload.Params, int) error    { return nil }

type busyInstance struct{ app, helper *exec.Cmd }

// Drive lets the loop spin for d, and records the cpu cgroups of the app and its helper.
func (in *busyInstance) Drive(ctx context.Context, d time.Duration) (*workload.Result, error) {
	time.Sleep(d)
	record("groups app=%s helper=%s", cpuGroupOf(in.app.Process.Pid), cpuGroupOf(in.helper.Process.Pid))
	r := workload.NewResult()
	r.Elapsed = d
	return r, nil
}
func (in *busyInstance) DriveShare(ctx context.Context, d time.Duration, _ workload.Share) (*workload.Result, error) {
	return in.Drive(ctx, d)
}
func (in *busyInstance) Stop(context.Context) error {
	in.app.Process.Kill()
	in.app.Wait()
	return nil
}

// cpuGroupOf is the cpu cgroup a process is in, as a path under the cgroup root.
func cpuGroupOf(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "gone"
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (parts[1] == "" || slices.Contains(strings.Split(parts[1], ","), "cpu")) {
			return parts[2]
		}
	}
	return "none"
}

func init() {
	backend.RegisterInfo(backend.Info{Name: "fakehelped", New: func(env backend.Env) (backend.Backend, error) { return &fakeHelped{env: env}, nil }})
	workload.Register(workload.Info{
		Name:  "fakebusy",
		Timed: true,
		New:   func(scenario.Workload) (workload.Workload, error) { return busyWorkload{}, nil },
	})
}

// The instance's CPU limit holds the app and the backend's helper in one cgroup with the CFS
// quota asked for, a group per instance when several share the backend; the limit throttles the
// busy app and the cell says so; every group is gone after the run. Without cpu_quota nothing is
// limited.
func TestInstanceCPULimitHoldsAppAndHelpers(t *testing.T) {
	if err := cgroup.CheckCPU(); err != nil {
		t.Skip(err)
	}
	spec := &scenario.Spec{Name: "limit", Workload: scenario.Workload{Type: "fakebusy", Params: map[string]string{}},
		Backends: []scenario.BackendSpec{{Name: "fakehelped"}}, Repeat: 1, Duration: scenario.Duration(time.Second),
		Sweep: scenario.Sweep{{Name: "instances", Text: "1,2"}, {Name: QuotaParam, Text: "0,0.2"}}}
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]int{}
	for _, e := range takeLedger() {
		var app, helper string
		if _, err := fmt.Sscanf(e, "groups app=%s helper=%s", &app, &helper); err != nil {
			continue
		}
		if app != helper {
			t.Errorf("app in %s, its helper in %s", app, helper)
		}
		groups[app]++
	}
	limited := 0
	for g, n := range groups {
		if strings.Contains(g, "persistlab-instance-") {
			limited++
			if n != 1 {
				t.Errorf("cgroup %s holds %d instances, want its own per instance", g, n)
			}
			for _, dir := range []string{"/sys/fs/cgroup/cpu" + g, "/sys/fs/cgroup" + g} {
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("cgroup %s left after the run", dir)
				}
			}
		}
	}
	if limited != 3 { // one instance, then two, under the limit
		t.Errorf("limited instances' groups %v, want 3", groups)
	}
	if len(res.Cells) != 4 {
		t.Fatalf("%d cells", len(res.Cells))
	}
	for _, c := range res.Cells {
		quota := c.Params[QuotaParam]
		_, hasMetric := c.Metrics[ThrottledShareMetric]
		switch {
		case c.Failure != "":
			t.Errorf("cell %s: %s", c.Point(spec.Sweep), c.Failure)
		case quota == "0" && hasMetric:
			t.Errorf("cell %s without a limit reports throttling %v", c.Point(spec.Sweep), c.Metrics)
		// A loop that wants a whole CPU under 0.2 of one runs out of quota (how often depends on
		// what else the machine runs); a share is a share.
		case quota != "0" && (c.M(ThrottledShareMetric) <= 0 || c.M(ThrottledShareMetric) > 1 || c.M(ThrottledSecondsMetric) <= 0):
			t.Errorf("cell %s under 0.2 CPU: throttled share %v, waited %v s", c.Point(spec.Sweep), c.M(ThrottledShareMetric), c.M(ThrottledSecondsMetric))
		}
	}
}

// Each write to the cloud becomes a point of its kind's series: when it ended, how long it took.
func TestWriteSeriesPlacesEachWriteAtItsEnd(t *testing.T) {
	start := time.Now()
	series := map[string][]measure.Point{}
	writeSeries([]backend.Write{
		{What: "counter.db", Started: start.Add(time.Second), Done: start.Add(1500 * time.Millisecond)},
		{What: "counter.db-wal", Started: start.Add(2 * time.Second), Done: start.Add(2020 * time.Millisecond)},
		{What: "counter.db", Started: start.Add(3 * time.Second), Done: start.Add(3010 * time.Millisecond)},
	}, start, series)
	db, wal := series["write.counter.db"], series["write.counter.db-wal"]
	if len(db) != 2 || db[0].T != 1.5 || db[0].V != 500 || db[1].T != 3.01 || db[1].V != 10 || len(wal) != 1 || wal[0].V != 20 {
		t.Errorf("series %+v", series)
	}
}

// fakeWrapped is a fakehelped that runs its instance in a cgroup of its own (a volume's memory).
type fakeWrapped struct{ fakeHelped }

func (*fakeWrapped) WrapsInstance() bool { return true }

func init() {
	backend.RegisterInfo(backend.Info{Name: "fakewrapped", New: func(env backend.Env) (backend.Backend, error) {
		return &fakeWrapped{fakeHelped{env: env}}, nil
	}})
}

// A CPU limit on a backend that puts its instance in a cgroup of its own is refused before
// anything starts where the machine's cgroups are v2 (one of the limits would be lost), and let
// through where they are v1 (both hold); cells without a quota are never refused.
func TestCPULimitBesideAnInstancesOwnCgroup(t *testing.T) {
	if err := cgroup.CheckCPU(); err != nil {
		t.Skip(err)
	}
	spec := &scenario.Spec{Name: "wrapped", Workload: scenario.Workload{Type: "fakebusy", Params: map[string]string{}},
		Backends: []scenario.BackendSpec{{Name: "fakewrapped"}}, Repeat: 1, Duration: scenario.Duration(time.Second),
		Sweep: scenario.Sweep{{Name: QuotaParam, Text: "0,0.5"}}}
	plan, err := scenario.NewPlan(spec, Known())
	if err != nil {
		t.Fatal(err)
	}
	defer func(f func() (bool, error)) { cpuIsV2 = f }(cpuIsV2)
	for _, v2 := range []bool{true, false} {
		cpuIsV2 = func() (bool, error) { return v2, nil }
		r := &run{spec: spec, plan: plan}
		be, _ := backend.New("fakewrapped", backend.Env{WorkDir: t.TempDir()})
		err := r.checkQuotaBeside(be, "fakewrapped")
		if v2 != (err != nil) || (err != nil && !strings.Contains(err.Error(), "cpu_quota=0.5")) {
			t.Errorf("cgroup v2 %v: %v", v2, err)
		}
	}
	cpuIsV2 = func() (bool, error) { return true, nil }
	takeLedger()
	work := t.TempDir()
	res, err := RunPlan(context.Background(), plan, Options{Out: filepath.Join(work, "r.json"), WorkDir: filepath.Join(work, "w")})
	var fe *param.FieldError
	if !errors.As(err, &fe) || fe.Field != "backends[0]" || res != nil {
		t.Errorf("a run on cgroup v2: %v", err)
	}
	if log := takeLedger(); len(log) > 0 {
		t.Errorf("started %v before refusing", log)
	}
	spec.Sweep = scenario.Sweep{{Name: QuotaParam, Text: "0"}}
	plan, _ = scenario.NewPlan(spec, Known())
	if err := (&run{spec: spec, plan: plan}).checkQuotaBeside(&fakeWrapped{}, "fakewrapped"); err != nil {
		t.Errorf("no quota, refused: %v", err)
	}
}

// A CPU limit under the kernel's least quota (1 ms per period) is refused before anything
// starts, with a field error naming cpu_period and the period that would hold the quota (or
// cpu_quota, when no period up to 1 s would), not the kernel's EINVAL mid-run.
func TestCPULimitUnderTheLeastQuotaIsRefusedFirst(t *testing.T) {
	for _, c := range []struct {
		quota, period string
		field, want   string
	}{
		{"0.25", "1ms", "workload.cpu_period", "a period of at least 4ms with cpu_quota 0.25"},
		{"0.0005", "1s", "workload.cpu_quota", "at least 0.001 CPUs"},
	} {
		spec := &scenario.Spec{Name: "least", Workload: scenario.Workload{Type: "fakebusy", Params: map[string]string{QuotaParam: c.quota, PeriodParam: c.period}},
			Backends: []scenario.BackendSpec{{Name: "fakehelped"}}, Repeat: 1, Duration: scenario.Duration(time.Second)}
		plan, err := scenario.NewPlan(spec, Known())
		if err != nil {
			t.Fatal(err)
		}
		takeLedger()
		work := t.TempDir()
		res, err := RunPlan(context.Background(), plan, Options{Out: filepath.Join(work, "r.json"), WorkDir: filepath.Join(work, "w")})
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Allowed, c.want) || res != nil {
			t.Errorf("cpu_quota %s per %s: %v, want a field error on %s saying %q", c.quota, c.period, err, c.field, c.want)
		}
		if log := takeLedger(); len(log) > 0 {
			t.Errorf("started %v before refusing", log)
		}
	}
}
