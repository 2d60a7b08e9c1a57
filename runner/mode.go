package runner

import (
	"fmt"
	"strconv"

	"persistlab/scenario"
	"persistlab/workload"
)

// Mode is how a cell is run: one per cell, on which the checks before the first cell and the run
// loop both key.
type Mode int

const (
	ModeSteady        Mode = iota // one instance on a backend of its own, driven for the duration
	ModeSharedBackend             // as steady, on a backend consecutive cells share (share_backend)
	ModeCrash                     // the instance is killed during load and recovered (crash:)
	ModeInstances                 // several instances share one backend, the load split (instances:)
)

func (m Mode) String() string {
	return [...]string{"steady", "shared backend", "crash", "instances"}[m]
}

// modeOf is the mode cell runs in: crash runs and several instances exclude each other and
// share_backend (the checks refuse the mixtures).
func (r *run) modeOf(cell scenario.Cell) Mode {
	switch {
	case r.spec.Crash != nil:
		return ModeCrash
	case knobsOf(cell.Resolved).Instances > 1:
		return ModeInstances
	case r.spec.ShareBackend:
		return ModeSharedBackend
	}
	return ModeSteady
}

// checkModes refuses, before anything starts, a mode the workload cannot run: crash runs and
// several instances need a workload that can read what its data holds (Inspector), several
// instances one that can split its load (Sharer, with its own check of the split); several
// instances run neither in crash runs nor on a shared backend.
func (r *run) checkModes() error {
	spec, info := r.spec, r.info
	_, inspects := r.wl.(workload.Inspector)
	if spec.Crash != nil && !inspects {
		return r.fail("crash", fmt.Sprint(spec.Crash.Count), "no crash runs: workload "+info.Name+" cannot say what a recovery lost")
	}
	checked := map[string]bool{}
	for _, c := range r.plan.Cells {
		n := knobsOf(c.Resolved).Instances
		if n < 2 {
			continue
		}
		point := c.PointName
		field, value := r.instancesField(point), strconv.Itoa(n)
		switch {
		case spec.Crash != nil:
			return r.fail(field, value, "1 in crash runs: a crash run loses the one instance it starts")
		case spec.ShareBackend:
			return r.fail(field, value, "1 with share_backend: each multi-instance cell mounts its own instances")
		}
		sharer, shares := r.wl.(workload.Sharer)
		if !shares || !inspects {
			return r.fail(field, value, "1: workload "+info.Name+" cannot split its load between instances and read what they left")
		}
		if checked[point+"\x00"+c.Backend] {
			continue
		}
		checked[point+"\x00"+c.Backend] = true
		if err := sharer.CheckShare(c.Resolved, n); err != nil {
			return r.named(err, point)
		}
	}
	return nil
}

// instancesField names where a cell's instances come from: the scenario's top-level field, or
// the parameter.
func (r *run) instancesField(point string) string {
	if r.spec.Instances > 0 {
		return "instances"
	}
	return knobField(InstancesParam, point)
}
