package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/backend"
	_ "persistlab/backend/all"
	"persistlab/internal/disk"
	"persistlab/param"
	"persistlab/runner"
	"persistlab/scenario"
	"persistlab/workload"
	_ "persistlab/workload/all"
)

// Every built-in scenario validates against the real workloads' and backends' declarations, also
// in its quick variant, and every cell's parameters pass the workload's own check.
func TestBuiltinsValidateAgainstTheRealRegistries(t *testing.T) {
	for _, name := range scenario.Builtins() {
		for _, quick := range []bool{false, true} {
			s, err := scenario.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Apply(scenario.Overrides{Quick: quick}); err != nil {
				t.Fatal(err)
			}
			plan, err := scenario.NewPlan(s, runner.Known())
			if err != nil {
				t.Errorf("%s (quick %v): %v", name, quick, err)
				continue
			}
			info, _ := workload.Lookup(s.Workload.Type)
			w, err := info.New(s.Workload)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for _, c := range plan.Cells {
				if err := w.Check(context.Background(), c.Resolved); err != nil {
					t.Errorf("%s cell %d: %v", name, c.Index, err)
					break
				}
			}
		}
	}
}

// What the runner decides once per run, or per cell, cannot be swept or mixed: CPUs are placed
// once; crash runs and shared backends run one instance. Each is refused before any cell.
func TestRunnerParametersRefusedBeforeAnyCell(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		o        scenario.Overrides
		field    string
	}{
		{"cloudrun-sqlite", scenario.Overrides{Sweep: []string{"cpus=1,2"}}, "sweep.cpus"},
		{"cloudrun-sqlite", scenario.Overrides{Set: []string{"instances=2"}, ShareBackend: true}, "workload.instances"},
		{"cloudrun-sqlite-crash", scenario.Overrides{Sweep: []string{"instances=1,2"}}, "workload.instances"},
	} {
		s, err := scenario.Load(tc.scenario)
		if err != nil {
			t.Fatal(err)
		}
		tc.o.Backends = []string{"gcsfuse"}
		if err := s.Apply(tc.o); err != nil {
			t.Fatal(err)
		}
		work := t.TempDir()
		_, err = runner.Run(context.Background(), s, runner.Options{Out: work + "/r.json", WorkDir: work + "/w"})
		var fe *param.FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, tc.field) {
			t.Errorf("%s %+v: %v", tc.scenario, tc.o, err)
		}
		if _, err := os.Stat(work + "/r.json"); !os.IsNotExist(err) {
			t.Errorf("%s: a results file was written before the refusal", tc.scenario)
		}
	}
}

// A backend option its declaration refuses is named as the scenario's field, before any cell.
func TestBackendOptionRefusedAsAField(t *testing.T) {
	s, err := scenario.Load("gcsfuse-cache")
	if err != nil {
		t.Fatal(err)
	}
	s.Backends[1].Options["file_cache"] = "maybe"
	work := t.TempDir()
	_, err = runner.Run(context.Background(), s, runner.Options{Out: work + "/r.json", WorkDir: work + "/w"})
	var fe *param.FieldError
	if !errors.As(err, &fe) || fe.Field != "backends[1].options.file_cache" || fe.Value != "maybe" || !strings.Contains(fe.Allowed, "on") {
		t.Errorf("%v", err)
	}
	if _, err := os.Stat(work + "/r.json"); !os.IsNotExist(err) {
		t.Error("a results file was written before the refusal")
	}
}

// A scenario whose k6 script cannot run as short as asked is refused before any cell.
func TestSubSecondK6RunRefusedBeforeAnyCell(t *testing.T) {
	s, err := scenario.Load("cloudrun-sqlite-python")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(scenario.Overrides{Backends: []string{"local"}, Duration: "500ms", Warmup: "0s", VUs: "2"}); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	_, err = runner.Run(context.Background(), s, runner.Options{Out: work + "/r.json", WorkDir: work + "/w"})
	var fe *param.FieldError
	if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "duration") || fe.Value != "500ms" {
		t.Errorf("%v", err)
	}
}

// No workload declares a parameter of the runner's (cpus, instances, cpu_quota, cpu_period): it
// would shadow the runner's declaration, and the workload would be reading what the runner owns.
func TestEveryWorkloadLeavesTheRunnersParametersToIt(t *testing.T) {
	for name, params := range workload.Declared() {
		for _, p := range params {
			if runner.IsKnob(p.Name) {
				t.Errorf("workload %s declares the runner's parameter %s", name, p.Name)
			}
		}
	}
	known := runner.Known()
	for name, params := range known.Workloads {
		for _, knob := range runner.Knobs {
			if p, ok := param.Find(params, knob.Name); !ok || p.Help != knob.Help {
				t.Errorf("workload %s: runner parameter %s missing from what scenarios may set", name, knob.Name)
			}
		}
	}
}

// Every declared size and duration, of every workload and backend, is described with examples
// that lie within its bounds (lab volume's latency, at most 1s, was described with 10s and 2m).
func TestEveryExampleLiesWithinItsParametersBounds(t *testing.T) {
	var params []param.Param
	for _, decl := range workload.Declared() {
		params = append(params, decl...)
	}
	for _, name := range backend.Names() {
		info, _ := backend.Lookup(name)
		params = append(params, info.Options...)
	}
	checked := 0
	for _, p := range params {
		_, list, ok := strings.Cut(p.Accepts(), " like ")
		if !ok {
			continue
		}
		list, _, _ = strings.Cut(list, " from ")
		list, _, _ = strings.Cut(list, " of at least ")
		for _, ex := range strings.Split(strings.ReplaceAll(list, " or ", ", "), ", ") {
			checked++
			if _, err := p.Number(ex); err != nil {
				t.Errorf("%s: %q describes it with %s, outside its bounds", p.Name, p.Accepts(), ex)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no parameter described with examples")
	}
}

// fio's files and bulkload's data, its redo log (innodb_log_file_size) included, are counted in
// the room a run needs, checked before the first cell starts anything.
func TestRealWorkloadsNeedsAreCheckedBeforeTheFirstCell(t *testing.T) {
	free, err := disk.Free(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if free >= 500<<30 {
		t.Skip("more than 500 GiB free here: no file fio or MariaDB is given here is too large for it")
	}
	for _, tc := range []struct{ yaml, want string }{
		{"name: big-fio\nworkload: {type: fio, file_size: 1TiB, runtime: 1s}\nbackends: [{name: local}]\n", "cell 0 (local run 1) needs about 1.0 TiB"},
		{"name: big-redo\nworkload: {type: bulkload, rows: 1, server: {innodb_log_file_size: 512G}}\nbackends: [{name: local}]\n", "cell 0 (local run 1) needs about 512.2 GiB"},
	} {
		s, err := scenario.Parse([]byte(tc.yaml), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		work := t.TempDir()
		_, err = runner.Run(context.Background(), s, runner.Options{Out: filepath.Join(work, "r.json"), WorkDir: filepath.Join(work, "w")})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q: %v", s.Name, tc.want, err)
		}
		if cells, _ := filepath.Glob(filepath.Join(work, "w", "cell-*")); len(cells) > 0 {
			t.Errorf("%s: refused, yet cells started: %v", s.Name, cells)
		}
	}
}
