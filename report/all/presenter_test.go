package all

import (
	"testing"

	"persistlab/report"
	"persistlab/workload"
	_ "persistlab/workload/all"
)

// A presenter is found by its workload's name: one registered under a name no workload has (a
// renamed workload, a typo) would never show, and the workload's runs would get the generic table.
func TestEveryPresenterNamesARegisteredWorkload(t *testing.T) {
	names := report.PresenterWorkloads()
	if len(names) == 0 {
		t.Fatal("no presenter registered: package all links none")
	}
	for _, name := range names {
		if _, err := workload.Lookup(name); err != nil {
			t.Errorf("presenter for workload %q: %v", name, err)
		}
	}
}
