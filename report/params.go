package report

import (
	"persistlab/backend"
	"persistlab/lab"
	"persistlab/results"
)

// FixedParams are the parameters every cell of the run shared: the workload's defaults (when the
// results recorded them), overridden by the scenario's fixed values (its top-level instances:
// among them).
func FixedParams(r *results.Results) map[string]string {
	out := map[string]string{}
	for k, v := range r.Defaults {
		out[k] = v
	}
	for k, v := range r.Scenario.FixedParams("") {
		out[k] = v
	}
	return out
}

// RowParams is every parameter a row's cells ran with: as the plan resolved them, or for files
// that did not record them, as ResolvedFor derives them.
func RowParams(r *results.Results, a results.Aggregate) map[string]string {
	if a.Resolved != nil {
		return a.Resolved
	}
	return ResolvedFor(r, a.Backend, a.Params)
}

// CellParams is RowParams for one cell.
func CellParams(r *results.Results, c results.Cell) map[string]string {
	if c.Resolved != nil {
		return c.Resolved
	}
	return ResolvedFor(r, c.Backend, c.Params)
}

// ResolvedFor derives the parameters backend b's cells ran with at a sweep point, for results
// files whose cells did not record them: the defaults, the scenario's, the entry's, the point's.
func ResolvedFor(r *results.Results, b string, point map[string]string) map[string]string {
	p := FixedParams(r)
	if r.Scenario != nil {
		for k, v := range r.Scenario.FixedParams(b) {
			p[k] = v
		}
	}
	for k, v := range point {
		p[k] = v
	}
	return p
}

// VolumeModel is what backend entry b's volume model says of it, if b has one in effect.
func VolumeModel(r *results.Results, b string) (lab.VolumeModel, bool) {
	entry, ok := r.Scenario.BackendByID(b)
	if !ok {
		return lab.VolumeModel{}, false
	}
	return backend.VolumeModelOf(entry.Name, entry.Options)
}
