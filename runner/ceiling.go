package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"persistlab/backend"
	"persistlab/internal/mounts"
	"persistlab/lab"
	"persistlab/scenario"
)

// LabBoundShare is the share of the lab's own ceiling at which a volume's published limit is
// flagged before the first cell: a cell that reaches the limit would measure this machine.
const LabBoundShare = 0.8

// probeCeilings measures, once per backend entry of the plan whose lab part runs on this machine,
// what that part moves with the model off: for every entry when the workload moves bulk data
// (the report flags rows near it), and for every entry with a volume model in effect, whose
// published limits are flagged before the first cell when the lab cannot reach them. A probe that
// fails is a note, not a failed run: the cells say for themselves whether the backend works.
func (r *run) probeCeilings(ctx context.Context) error {
	probed := false
	for i, entry := range r.spec.Backends {
		model, modelled := backend.VolumeModelOf(entry.Name, entry.Options)
		if !r.probes(entry) {
			continue
		}
		dir := filepath.Join(r.opts.WorkDir, fmt.Sprintf("ceiling-%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		be, err := backend.New(entry.Name, backend.Env{WorkDir: dir, CPUs: r.res.Placement.AppCPUs, Options: entry.Options, Needs: r.info.Needs, Warn: r.progress.warner()})
		prober, ok := be.(backend.CeilingProber)
		if err != nil || !ok {
			os.RemoveAll(dir)
			continue
		}
		r.progress.say(fmt.Sprintf("measuring the lab's own ceiling for backend %s (model off)", entry.ID()))
		probed = true
		c, ok, err := prober.ProbeCeiling(ctx)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("backend %s: the lab's ceiling could not be measured: %v", entry.ID(), err))
		case ok:
			if r.res.Ceilings == nil {
				r.res.Ceilings = map[string]lab.Ceiling{}
			}
			r.res.Ceilings[entry.ID()] = c
			if modelled {
				r.flagLabBound(entry, model, c)
			}
		}
		if len(mounts.Under(dir)) == 0 { // a mount still attached is never removed under it
			os.RemoveAll(dir)
		}
	}
	if !probed {
		return nil
	}
	return r.res.Save(r.opts.Out, r.opts.Derive) // what was measured, before the first cell
}

// probes says whether the run measures entry's ceiling: when the workload moves bulk data (the
// report flags rows near it), or the entry models a volume (its published limits are flagged).
func (r *run) probes(entry scenario.BackendSpec) bool {
	_, modelled := backend.VolumeModelOf(entry.Name, entry.Options)
	return r.inPlan(entry.ID()) && (r.info.MovesBulk() || modelled)
}

// inPlan says whether any cell of the plan (a shard's share) runs on backend entry id.
func (r *run) inPlan(id string) bool { return planHas(r.plan.Cells, id) }

// planHas says whether any of cells runs on backend entry id.
func planHas(cells []scenario.Cell, id string) bool {
	for _, c := range cells {
		if c.Backend == id {
			return true
		}
	}
	return false
}

// flagLabBound notes, and says on the terminal, each published write limit of a volume that
// reaches LabBoundShare of what the emulator moved here with the model off: a cell near that
// limit is bound by this machine, so its figures say nothing of the volume.
func (r *run) flagLabBound(entry scenario.BackendSpec, m lab.VolumeModel, c lab.Ceiling) {
	if note := LabBound(entry.ID(), m, c); note != "" {
		r.res.Notes = append(r.res.Notes, note)
		r.progress.warn(note)
	}
}

// LabBound is the note for a volume entry whose peak writes (published, within its instance's
// caps: lab.VolumeModel) reach LabBoundShare of the lab's ceiling c; "" when the lab can
// emulate them. IOPS are compared at 4 KiB, one billing unit each.
func LabBound(id string, m lab.VolumeModel, c lab.Ceiling) string {
	var over []string
	if c.WriteIOPS > 0 && m.WriteIOPS >= LabBoundShare*c.WriteIOPS {
		over = append(over, fmt.Sprintf("%.0f write IOPS against the emulator's %.0f at 4 KiB", m.WriteIOPS, c.WriteIOPS))
	}
	if c.WriteMiBs > 0 && m.WriteMiBps >= LabBoundShare*c.WriteMiBs {
		over = append(over, fmt.Sprintf("%.0f MiB/s against its %.0f", m.WriteMiBps, c.WriteMiBs))
	}
	switch len(over) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("backend %s is lab-bound: its peak %s on this machine (model off); cells near that limit measure this machine, not the volume", id, over[0])
	}
	return fmt.Sprintf("backend %s is lab-bound: its peak %s, and %s, on this machine (model off); cells near those limits measure this machine, not the volume", id, over[0], over[1])
}

// flagPageOut notes, and says on the terminal, a machine that pages out idle memory
// (sysinfo.PageOutPolicies) when the plan runs a volume with its model in effect.
func (r *run) flagPageOut() {
	var volumes []string
	for _, entry := range r.spec.Backends {
		if _, modelled := backend.VolumeModelOf(entry.Name, entry.Options); modelled && r.inPlan(entry.ID()) {
			volumes = append(volumes, entry.ID())
		}
	}
	if note := PageOutNote(r.res.Machine.PageOut, volumes); note != "" {
		r.res.Notes = append(r.res.Notes, note)
		r.progress.warn(note)
	}
}

// PageOutNote is the note for volumes run on a machine with page-out policies: an emulated
// instance there reads from its volume, and pays in I/O units and credits, what a cloud instance
// of the same memory would keep in its page cache. "" when either list is empty.
func PageOutNote(policies, volumes []string) string {
	if len(policies) == 0 || len(volumes) == 0 {
		return ""
	}
	return fmt.Sprintf("this machine pages out idle memory (%s): on %s, page cache idle that long is read again from the volume, "+
		"where a cloud instance of the same memory would still hold it; reads, I/O units and credits that rest on the page cache are this machine's",
		strings.Join(policies, "; "), strings.Join(volumes, ", "))
}
