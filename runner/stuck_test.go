package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"persistlab/internal/cgroup"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// A workload whose app's cgroup does not empty at its stop: a cgroup that will not go even when
// tried again (no cgroup at all: Empty leaves it alone), or one that is gone by then.

type stuckWorkload struct{}

func (stuckWorkload) Check(context.Context, workload.Params) error { return nil }
func (stuckWorkload) Versions() map[string]string                  { return nil }
func (stuckWorkload) Start(_ context.Context, env workload.Env) (workload.Instance, error) {
	dir := filepath.Join(env.CellDir, "persistlab-app-stays")
	if env.Params["gone"] == "true" {
		dir = "/sys/fs/cgroup/unified/persistlab-app-gone-by-now"
	} else if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	return &stuckInstance{dir: dir}, nil
}

type stuckInstance struct{ dir string }

func (in *stuckInstance) Drive(context.Context, time.Duration) (*workload.Result, error) {
	r := workload.NewResult()
	r.Elapsed = time.Second
	r.Metrics["twice_n"] = 2
	return r, nil
}
func (in *stuckInstance) Stop(context.Context) error {
	return &cgroup.StuckError{Dir: in.dir, Left: []int{1}, Waited: time.Second}
}

func init() {
	workload.Register(workload.Info{
		Name:    "fakestuck",
		Params:  []param.Param{{Name: "gone", Kind: param.KindBool, Default: "false"}},
		Metrics: []workload.Metric{{Name: "twice_n", Unit: "count"}},
		New:     func(scenario.Workload) (workload.Workload, error) { return stuckWorkload{}, nil },
	})
}

// A cgroup that does not empty never fails the cell it was measured in: the cell keeps its
// figures, and the run notes the cgroup (left for clean) unless it empties once the backend has
// stopped.
func TestACgroupThatWillNotEmptyKeepsTheCell(t *testing.T) {
	spec := &scenario.Spec{Name: "stuck", Workload: scenario.Workload{Type: "fakestuck", Params: map[string]string{}},
		Backends: []scenario.BackendSpec{{Name: "fakedisk"}}, Repeat: 1, Sweep: scenario.Sweep{{Name: "gone", Text: "false,true"}}}
	res, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 2 {
		t.Fatalf("%d cells", len(res.Cells))
	}
	for _, c := range res.Cells {
		if c.Failure != "" || c.M("twice_n") != 2 {
			t.Errorf("cell %s: failure %q, metrics %v", c.Point(spec.Sweep), c.Failure, c.Metrics)
		}
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "persistlab-app-stays") || !strings.Contains(res.Notes[0], "cell 0") {
		t.Errorf("notes %q, want the cgroup that stays, of cell 0", res.Notes)
	}
}
