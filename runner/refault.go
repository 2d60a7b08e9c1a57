package runner

import (
	"os"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/results"
)

// machineVMStat is where the machine's refaults are read; tests stand in another file.
var machineVMStat = cgroup.VMStat

// pageCacheWatch reads a cell's refaults before and after its measured run.
type pageCacheWatch struct {
	source        string
	read          func() (cgroup.PageCache, error)
	before, after cgroup.PageCache
	err           error
}

// watchPageCache starts reading the cell's refaults: in the instance's memory cgroup where the
// backend keeps one, else the whole machine's. Nil for a backend that is not a volume with its
// model in effect: no reads of its own to set them against.
func (l *cellLife) watchPageCache() *pageCacheWatch {
	entry := l.cell.Entry // open refused a cell without one
	if _, modelled := backend.VolumeModelOf(entry.Name, entry.Options); !modelled {
		return nil
	}
	w := &pageCacheWatch{source: results.RefaultsFromMachine,
		read: func() (cgroup.PageCache, error) { return cgroup.MachinePageCache(machineVMStat) }}
	if m, ok := l.be.(backend.InstanceMemory); ok {
		if dir := m.InstanceMemoryCgroup(); dir != "" {
			w.source = results.RefaultsFromInstance
			w.read = func() (cgroup.PageCache, error) { return cgroup.MemoryPageCache(dir) }
		}
	}
	w.before, w.err = w.read()
	return w
}

// stop reads the counters at the end of the measured run.
func (w *pageCacheWatch) stop() {
	if w == nil || w.err != nil {
		return
	}
	w.after, w.err = w.read()
}

// record adds the refaults to a cell's metrics, in bytes as the volume's reads are, and where
// they were read; a cell whose counters could not be read says why instead (not measured, never 0).
func (w *pageCacheWatch) record(out *results.Cell, units map[string]string) {
	if w == nil {
		return
	}
	if out.Facts == nil {
		out.Facts = map[string]string{}
	}
	if w.err != nil {
		out.Facts[results.RefaultSourceFact] = "not measured: " + w.err.Error()
		return
	}
	if out.Metrics == nil {
		out.Metrics = map[string]float64{}
	}
	out.Metrics[results.RefaultBytesMetric] = float64(max(0, w.after.RefaultPages-w.before.RefaultPages)) * float64(os.Getpagesize())
	units[results.RefaultBytesMetric] = runnerUnit(results.RefaultBytesMetric)
	if w.before.HasLimit && w.after.HasLimit {
		out.Metrics[results.MemoryLimitHitsMetric] = float64(max(0, w.after.LimitHits-w.before.LimitHits))
		units[results.MemoryLimitHitsMetric] = runnerUnit(results.MemoryLimitHitsMetric)
	}
	out.Facts[results.RefaultSourceFact] = w.source
}
