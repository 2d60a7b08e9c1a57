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

// VolumeModel is what backend entry b's volume model says of it, if b has one in effect.
func VolumeModel(r *results.Results, b string) (lab.VolumeModel, bool) {
	entry, ok := r.Scenario.BackendByID(b)
	if !ok {
		return lab.VolumeModel{}, false
	}
	return backend.VolumeModelOf(entry.Name, entry.Options)
}
