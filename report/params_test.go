package report

import (
	"testing"

	"persistlab/report/reporttest"
	"persistlab/results"
)

// A row reads the parameters its cells recorded as the plan resolved them; a file whose cells
// recorded none gets them derived the same way: defaults, scenario, backend entry, point.
func TestRowParamsReadWhatTheCellsRecorded(t *testing.T) {
	spec := reporttest.CounterSpec("a", "b")
	spec.Workload.Params = map[string]string{"threads": "3"}
	spec.Backends[1].Params = map[string]string{"path": "/b"}
	r := &results.Results{Schema: results.Schema, Scenario: spec, Defaults: map[string]string{"threads": "1", "path": "/", "mode": "closed"}}
	plan := []results.Cell{reporttest.Cell("a", 2, 1, 4, 3, 10, 10), reporttest.Cell("b", 2, 1, 4, 3, 10, 10)}
	recorded := map[string]string{"vus": "2", "threads": "3", "path": "/", "mode": "open"}
	plan[0].Resolved = recorded
	r.Cells = plan
	Summarize(r)
	if len(r.Aggregates) != 2 {
		t.Fatalf("aggregates %+v", r.Aggregates)
	}
	if got := RowParams(r, r.Aggregates[0]); got["mode"] != "open" || len(got) != len(recorded) {
		t.Errorf("recorded row: %v, want %v", got, recorded)
	}
	derived := RowParams(r, r.Aggregates[1])
	for k, v := range map[string]string{"vus": "2", "threads": "3", "path": "/b", "mode": "closed"} {
		if derived[k] != v {
			t.Errorf("derived row: %s = %q, want %q (%v)", k, derived[k], v, derived)
		}
	}
	if CellParams(r, r.Cells[0])["mode"] != "open" || CellParams(r, r.Cells[1])["path"] != "/b" {
		t.Errorf("cells: %v, %v", CellParams(r, r.Cells[0]), CellParams(r, r.Cells[1]))
	}
}
