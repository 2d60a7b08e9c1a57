package report

import (
	"testing"

	"persistlab/measure"
	"persistlab/report/reporttest"
	"persistlab/scenario"
)

// A backend's sampled counters get a chart each, a line per cell.
func TestBackendSeriesAreCharted(t *testing.T) {
	r := reporttest.Fio([]scenario.BackendSpec{{Name: "volume", Label: "gp2"}}, scenario.Sweep{{Name: "rw", Values: []string{"read", "write"}}},
		func(string, map[string]string) float64 { return 1 })
	Summarize(r)
	for i := range r.Cells {
		r.Cells[i].Series = map[string][]measure.Point{"backend.volume_credit_ios": {{T: 0, V: 100}, {T: 1, V: 40}}, "latency": {{T: 0, V: 1}}}
	}
	charts, err := ChartsFor(r)
	if err != nil {
		t.Fatal(err)
	}
	var credit *Chart
	for i := range charts {
		if charts[i].YLabel == "volume_credit_ios" {
			credit = &charts[i]
		}
	}
	if credit == nil || len(credit.Series) != 2 || credit.Series[1].Name != "gp2 rw=write" || credit.Series[0].Points[1] != [2]float64{1, 40} {
		t.Errorf("charts %+v", charts)
	}
}
