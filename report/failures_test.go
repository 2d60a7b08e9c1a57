package report

import (
	"strings"
	"testing"

	"persistlab/results"
	"persistlab/scenario"
)

// A failed cell is named by its backend, sweep point and repeat, one space apart: a plan that
// sweeps nothing has no point to name.
func TestFailedCellsAreLabelledWithOneSpace(t *testing.T) {
	for _, tc := range []struct {
		sweep  scenario.Sweep
		params map[string]string
		want   string
	}{
		{nil, nil, "  cell 0 (local run 1): boom\n"},
		{scenario.Sweep{{Name: "vus", Text: "2", Values: []string{"2"}}}, map[string]string{"vus": "2"}, "  cell 0 (local vus=2 run 1): boom\n"},
	} {
		r := &results.Results{Schema: results.Schema, Scenario: &scenario.Spec{Name: "s", Sweep: tc.sweep},
			Cells: []results.Cell{{Cell: scenario.Cell{Backend: "local", Params: tc.params, Repeat: 1}, Failure: "boom"}}}
		var b strings.Builder
		writeFailures(&b, r)
		if !strings.HasSuffix(b.String(), tc.want) {
			t.Errorf("%q, want it to end with %q", b.String(), tc.want)
		}
	}
}
