package gitcommit

import (
	"os"
	"testing"

	"persistlab/workload"
	"persistlab/workload/conformance"
)

// gitcommit on a local directory: 20 changes to 5 files run to their end, then a run of the
// default 20,000 changes killed after a second, with every commit git made still reachable.
func TestConformance(t *testing.T) {
	newWorkload(t) // skips without git
	conformance.Run(t, Name, conformance.Options{
		Fixed:     map[string]string{"files": "5", "changes": "20", "window": "5"},
		KillFixed: map[string]string{"changes": "20000"},
		Self:      os.Args[0], // TestMain answers `app gitcommit`
		Result: func(t *testing.T, res *workload.Result) {
			m := res.Metrics
			if m["changes"] != 20 || m["ok"]+m["unchanged"] != 20 || m["ok"] < 1 || m["repos"] < 1 {
				t.Errorf("changes %v, commits %v, unchanged %v, repos %v", m["changes"], m["ok"], m["unchanged"], m["repos"])
			}
		},
	})
}
