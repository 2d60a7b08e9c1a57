package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/lab"
	"persistlab/results"
	"persistlab/scenario"
)

// fakeCached is a volume whose instance has a memory cgroup (a stand-in directory): each Stats
// call finds 256 more pages read again there, the first of them just after the cell's counters
// are first read, so a measured run refaults 256 pages and never reaches its memory limit.
type fakeCached struct {
	fakeBackend
	refaults int
}

func (b *fakeCached) InstanceMemoryCgroup() string { return b.env.WorkDir }

func (b *fakeCached) Start(ctx context.Context) (backend.Target, error) {
	b.writeStat()
	return b.fakeBackend.Start(ctx)
}

func (b *fakeCached) Stats() backend.Stats {
	b.refaults += 256
	b.writeStat()
	return backend.Stats{lab.VolumeReadBytes: 1 << 30}
}

func (b *fakeCached) writeStat() {
	os.WriteFile(filepath.Join(b.env.WorkDir, "memory.stat"), fmt.Appendf(nil, "cache 1\nworkingset_refault_file 7\ntotal_workingset_refault_file %d\n", 1000+b.refaults), 0o644)
	os.WriteFile(filepath.Join(b.env.WorkDir, "memory.failcnt"), []byte("5\n"), 0o644)
}

func init() {
	backend.RegisterInfo(backend.Info{Name: "fakecached", New: func(env backend.Env) (backend.Backend, error) {
		return &fakeCached{fakeBackend: fakeBackend{env: env}}, nil
	}, VolumeModel: func(map[string]string) (lab.VolumeModel, bool) { return lab.VolumeModel{Type: "fake"}, true }})
}

// A cell on a volume with its model in effect records what it read again while measured, in
// bytes, from the instance's memory cgroup where it has one (with its memory limit's hits), else
// from the machine's counters, and says which; a backend that is no volume records none.
func TestCellsOnVolumesRecordThePageCacheTheyReadAgain(t *testing.T) {
	vmstat := filepath.Join(t.TempDir(), "vmstat")
	if err := os.WriteFile(vmstat, []byte("nr_free_pages 10\nworkingset_refault_anon 3\nworkingset_refault_file 4000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	machineVMStat = vmstat
	defer func() { machineVMStat = cgroup.VMStat }()
	res, err := runFake(t, context.Background(), fakeSpec("1", scenario.BackendSpec{Name: "fakecached", Label: "cached"},
		scenario.BackendSpec{Name: "fakemodelled", Label: "machine"}, scenario.BackendSpec{Name: "fakedisk", Label: "disk"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cells {
		refaults, measured := c.Metrics[results.RefaultBytesMetric]
		hits, counted := c.Metrics[results.MemoryLimitHitsMetric]
		from := c.Facts[results.RefaultSourceFact]
		switch c.Backend {
		case "cached":
			if !measured || refaults != float64(256*os.Getpagesize()) || !counted || hits != 0 || from != results.RefaultsFromInstance {
				t.Errorf("cell %d on cached: refaults %v (%v), limit hits %v (%v), from %q; want 256 pages, 0 hits, the instance's cgroup", c.Index, refaults, measured, hits, counted, from)
			}
		case "machine":
			if !measured || refaults != 0 || counted || from != results.RefaultsFromMachine {
				t.Errorf("cell %d on machine: refaults %v (%v), limit hits counted %v, from %q; want 0 from the machine's counters, no hits", c.Index, refaults, measured, counted, from)
			}
		default:
			if measured || counted || from != "" {
				t.Errorf("cell %d on %s, no volume, records refaults: %v", c.Index, c.Backend, c.Metrics)
			}
		}
	}
	if res.Units[results.RefaultBytesMetric] != "bytes" {
		t.Errorf("unit of %s: %q", results.RefaultBytesMetric, res.Units[results.RefaultBytesMetric])
	}
}

// Counters that cannot be read leave the cell's refaults not measured, saying why: never 0.
func TestRefaultsThatCannotBeReadAreNotMeasured(t *testing.T) {
	machineVMStat = filepath.Join(t.TempDir(), "absent")
	defer func() { machineVMStat = cgroup.VMStat }()
	res, err := runFake(t, context.Background(), fakeSpec("1", scenario.BackendSpec{Name: "fakemodelled", Label: "machine"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cells {
		if _, measured := c.Metrics[results.RefaultBytesMetric]; measured || !strings.HasPrefix(c.Facts[results.RefaultSourceFact], "not measured: ") {
			t.Errorf("cell %d: refaults %v, from %q; want not measured, and why", c.Index, c.Metrics, c.Facts[results.RefaultSourceFact])
		}
	}
}
