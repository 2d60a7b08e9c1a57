package runner

import (
	"fmt"

	"persistlab/backend"
	"persistlab/internal/disk"
	"persistlab/scenario"
	"persistlab/workload"
)

// backendSpace is what a backend entry keeps under the work directory, as its backend says before
// it starts (backend.LocalCopier, backend.ProbeSpacer).
type backendSpace struct {
	copies int   // of what the workload writes on the target
	probe  int64 // the ceiling probe's bytes, if the run probes this entry
}

// spaceOf learns what be, the backend of entry, keeps under the work directory.
func (r *run) spaceOf(entry scenario.BackendSpec, be backend.Backend) backendSpace {
	s := backendSpace{copies: 1}
	if c, ok := be.(backend.LocalCopier); ok {
		s.copies = max(c.LocalCopies(), 0)
	}
	if p, ok := be.(backend.ProbeSpacer); ok && r.probes(entry) {
		s.probe = max(p.CeilingProbeBytes(), 0)
	}
	return s
}

// checkSpace refuses, before anything starts, a run whose work directory's file system lacks room
// for its largest step: a backend's ceiling probe, or a cell's files, as the workload and the
// backend say (every cell's together with --keep, which leaves each cell's data). The steps run
// one after another, each removing its files, so the largest decides.
func (r *run) checkSpace() error {
	var need, kept int64
	what := ""
	for i, entry := range r.spec.Backends {
		if p := r.space[entry.ID()].probe; p > need {
			need, what = p, fmt.Sprintf("the ceiling probe of backends[%d] (%s)", i, entry.ID())
		}
	}
	if sn, ok := r.wl.(workload.SpaceNeeder); ok {
		for _, c := range r.plan.Cells {
			target, cellDir, err := sn.SpaceNeed(c.Resolved)
			if err != nil {
				return r.named(err, c.PointName)
			}
			n := cellDir
			for range r.space[c.Backend].copies {
				n = disk.Sum(n, target)
			}
			kept = disk.Sum(kept, n)
			if n > need {
				need, what = n, fmt.Sprintf("the largest cell, cell %d (%s)", c.Index, scenario.Label(c.Backend, c.PointName, fmt.Sprintf("run %d", c.Repeat)))
			}
		}
	}
	if r.opts.Keep && kept > need {
		need, what = kept, "the cells' data, all kept (--keep)"
	}
	if need == 0 {
		return nil
	}
	if err := disk.Room(r.opts.WorkDir, need, what); err != nil {
		return fmt.Errorf("scenario %q: %w", r.spec.Name, err)
	}
	return nil
}
