package runner

import (
	"context"
	"os"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/internal/disk"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// fakeSpace lays out lays_out bytes on its target, as it says before it starts.
type fakeSpace struct{ fakeWorkload }

func (fakeSpace) SpaceNeed(p workload.Params) (int64, int64, error) {
	n, err := param.ParseSize(p["lays_out"])
	return n, 0, err
}

// fakeRoomy is a fakedisk whose ceiling probe stores its option probe's bytes and which keeps its
// option copies' copies of the target's data.
type fakeRoomy struct{ fakeProbed }

func (b *fakeRoomy) CeilingProbeBytes() int64 {
	n, _ := param.ParseSize(b.env.Options["probe"])
	return n
}

func (b *fakeRoomy) LocalCopies() int {
	if b.env.Options["copies"] == "0" {
		return 0
	}
	return 1
}

func init() {
	workload.Register(workload.Info{
		Name: "fakespace",
		Params: []param.Param{{Name: "n", Kind: param.KindInt, Default: "1", Min: 0, Max: 100},
			{Name: "lays_out", Kind: param.KindSize, Default: "0", Min: 0, Max: 1 << 60}},
		Metrics: []workload.Metric{{Name: workload.ReadMiBs, Unit: "MiB/s"}},
		New:     func(scenario.Workload) (workload.Workload, error) { return fakeSpace{}, nil },
	})
	backend.RegisterInfo(backend.Info{Name: "fakeroomy",
		Options: []param.Param{{Name: "probe", Kind: param.KindString}, {Name: "copies", Kind: param.KindString}},
		New: func(env backend.Env) (backend.Backend, error) {
			return &fakeRoomy{fakeProbed{fakeBackend{env: env}}}, nil
		}})
}

// The run's room is checked once, before the first probe or cell, for its largest step: a cell's
// files (as many copies as its backend keeps; none on a user's server) or a ceiling probe.
func TestFreeSpaceIsCheckedBeforeTheFirstProbeOrCell(t *testing.T) {
	free, err := disk.Free(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tooMuch := param.FormatSize((2*free + 1<<30) &^ (1<<20 - 1))
	spec := func(layout string, opts map[string]string) *scenario.Spec {
		s := fakeSpec("1,2", scenario.BackendSpec{Name: "fakeroomy", Options: opts})
		s.Workload.Type, s.Repeat = "fakespace", 1
		s.Workload.Params["lays_out"] = layout
		return s
	}
	for _, tc := range []struct {
		spec *scenario.Spec
		want string
	}{
		{spec(tooMuch, nil), "the largest cell, cell 0 (fakeroomy n=1 run 1) needs about"},
		{spec("1MiB", map[string]string{"probe": tooMuch}), "the ceiling probe of backends[0] (fakeroomy) needs about"},
	} {
		_, err := runFake(t, context.Background(), tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "free: make it smaller, or free space") {
			t.Errorf("want %q: %v", tc.want, err)
		}
		if log := takeLedger(); len(log) != 0 {
			t.Errorf("refused, yet it ran: %v", log)
		}
	}
	// With --keep every cell's data stays: two cells of 60% of the free space each are refused,
	// not without it.
	most := param.FormatSize((free * 6 / 10) &^ (1<<20 - 1))
	for _, keep := range []bool{false, true} {
		work := t.TempDir()
		_, err := Run(context.Background(), spec(most, nil), Options{Out: work + "/r.json", WorkDir: work + "/scratch", Keep: keep})
		if keep != (err != nil) || (keep && !strings.Contains(err.Error(), "the cells' data, all kept (--keep) needs about")) {
			t.Errorf("keep %v: %v", keep, err)
		}
	}
	// A backend that keeps the data elsewhere (a user's server) needs no room for it.
	if _, err := runFake(t, context.Background(), spec(tooMuch, map[string]string{"copies": "0"})); err != nil {
		t.Errorf("data kept elsewhere: %v", err)
	}
}
