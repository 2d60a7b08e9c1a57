package results

import (
	"maps"
	"testing"

	"persistlab/scenario"
)

// A cell that recorded the parameters the plan resolved keeps them; one of a file written before
// cells recorded them gets them derived as the plan resolves them (defaults < scenario < entry <
// point), and so does an aggregate; what is filled is not filled again.
func TestFillResolvedDerivesWhatEarlierFilesDidNotRecord(t *testing.T) {
	spec := &scenario.Spec{Workload: scenario.Workload{Type: "counter", Params: map[string]string{"threads": "3", "mode": "closed"}},
		Backends: []scenario.BackendSpec{{Name: "local", Label: "a"}, {Name: "local", Label: "b", Params: map[string]string{"path": "/b", "mode": "open"}}}}
	recorded := map[string]string{"vus": "2", "threads": "9"}
	r := &Results{Schema: Schema, Scenario: spec, Defaults: map[string]string{"threads": "1", "path": "/", "mode": "paced", "seed": "7"},
		Cells: []Cell{
			{Cell: scenario.Cell{Backend: "a", Params: map[string]string{"vus": "2"}, Resolved: recorded}},
			{Cell: scenario.Cell{Backend: "b", Params: map[string]string{"vus": "4", "path": "/point"}}},
		},
		Aggregates: []Aggregate{{Backend: "a", Params: map[string]string{"vus": "8"}}}}
	r.FillResolved()
	if !maps.Equal(r.Cells[0].Resolved, recorded) {
		t.Errorf("recorded cell: %v, want it kept: %v", r.Cells[0].Resolved, recorded)
	}
	want := map[string]string{"threads": "3", "path": "/point", "mode": "open", "seed": "7", "vus": "4"}
	if !maps.Equal(r.Cells[1].Resolved, want) {
		t.Errorf("derived cell: %v, want %v", r.Cells[1].Resolved, want)
	}
	wantRow := map[string]string{"threads": "3", "path": "/", "mode": "closed", "seed": "7", "vus": "8"}
	if !maps.Equal(r.Aggregates[0].Resolved, wantRow) {
		t.Errorf("derived row: %v, want %v", r.Aggregates[0].Resolved, wantRow)
	}
	r.Scenario.Workload.Params["threads"] = "5"
	r.FillResolved()
	if r.Cells[1].Resolved["threads"] != "3" {
		t.Errorf("filled again: %v", r.Cells[1].Resolved)
	}
}
