package runner_test

import (
	"context"
	"testing"

	_ "persistlab/backend/all"
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
			if err := s.Validate(runner.Known()); err != nil {
				t.Errorf("%s (quick %v): %v", name, quick, err)
				continue
			}
			info, _ := workload.Lookup(s.Workload.Type)
			w, err := info.New(s.Workload)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for _, c := range s.Plan() {
				if err := w.Check(context.Background(), workload.Resolve(info.Params, s.Workload.Params, c.Params)); err != nil {
					t.Errorf("%s cell %d: %v", name, c.Index, err)
					break
				}
			}
		}
	}
}
