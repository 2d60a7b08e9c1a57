package counter

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// seed000Run is a seed 000 run with the seed's tables at 2, 4 and 20 VUs and our rows.
func seed000Run(cpuPerRequest string, ours map[string]map[string]float64, fits map[string]float64) *results.Results {
	cols := []string{"vus", "med_ms", "avg_ms", "p90_ms", "max_ms"}
	spec := &scenario.Spec{Name: "cloudrun-sqlite", Seed: "000",
		Workload: scenario.Workload{Type: "counter", Params: map[string]string{"cpu_per_request": cpuPerRequest}},
		Published: []scenario.Published{
			{Backend: "gcsfuse", Columns: cols, Slope: 8, Rows: [][]scenario.Value{{"2", "10", "16", "40", "600"}, {"4", "20", "30", "60", "650"}, {"20", "160", "165", "180", "800"}}},
			{Backend: "litestream", Columns: cols, Slope: 4, Rows: [][]scenario.Value{{"2", "8", "10", "12", "100"}, {"4", "10", "20", "50", "150"}, {"20", "95", "95", "107", "200"}}},
		}}
	r := &results.Results{Schema: results.Schema, Scenario: spec}
	for key, m := range ours {
		b, vus, _ := strings.Cut(key, "@")
		r.Aggregates = append(r.Aggregates, results.Aggregate{Backend: b, Params: map[string]string{"vus": vus}, Median: m})
	}
	for b, k := range fits {
		r.Fits = append(r.Fits, results.Fit{Backend: b, AvgMsPerVU: k})
	}
	return r
}

// Seed 000's headline figures come from the scenario's published tables and our rows; with a
// CPU cost fitted from the seed the absolute slopes are calibration and leave the tally.
func TestSeed000ScoresMarkFittedSlopesAsCalibration(t *testing.T) {
	ours := map[string]map[string]float64{
		"gcsfuse@2":     {"med_ms": 10, "p90_ms": 30, "avg_ms": 15, "rate": 130},
		"gcsfuse@4":     {"med_ms": 20, "p90_ms": 20},
		"gcsfuse@20":    {"max_ms": 790},
		"litestream@4":  {"med_ms": 10, "p90_ms": 10},
		"litestream@20": {"max_ms": 400},
	}
	r := seed000Run("4.7ms", ours, map[string]float64{"gcsfuse": 5.6, "litestream": 4})
	byFigure := map[string]report.Score{}
	for _, s := range report.Scoreboard(r) {
		byFigure[s.Figure] = s
	}
	for figure, want := range map[string]struct {
		seed, ours float64
		judged     string
	}{
		"gcsfuse / Litestream slope of avg latency": {2, 1.4, "miss"},
		"gcsfuse slope (ms per VU)":                 {8, 5.6, "calibration"},
		"Litestream slope (ms per VU)":              {4, 4, "calibration"},
		"gcsfuse p90 / median at 2 VUs":             {4, 3, "within"},
		"gcsfuse p90 / median at 4 VUs":             {3, 1, "miss"},
		"Litestream p90 / median at 4 VUs":          {5, 1, "miss"},
		"gcsfuse max at 20 VUs (ms)":                {800, 790, "calibration"},
		"Litestream max at 20 VUs (ms)":             {200, 400, "calibration"},
		"gcsfuse requests/s at 2 VUs":               {125, 130, "calibration"},
	} {
		s, ok := byFigure[figure]
		if !ok {
			t.Errorf("%s: no score", figure)
			continue
		}
		judged := "miss"
		switch {
		case s.Calibration != "":
			judged = "calibration"
		case s.Within():
			judged = "within"
		}
		if s.Seed != want.seed || s.Ours != want.ours || judged != want.judged || !s.Measured {
			t.Errorf("%s: seed %v ours %v %s (measured %v), want %v %v %s", figure, s.Seed, s.Ours, judged, s.Measured, want.seed, want.ours, want.judged)
		}
	}
	tally := report.Tally(report.Scoreboard(r))
	if tally != (report.ScoreTally{Predictions: 4, Within: 1, Calibration: 5}) || tally.Met() {
		t.Errorf("tally %+v", tally)
	}
	var out bytes.Buffer
	report.WriteScoreboard(&out, r)
	for _, want := range []string{"seed 000: 1 of 4 predictions within 25%, 5 calibration; the lab's fidelity goal (75% of predictions within): not yet met",
		"calibration (gcsfuse slope (ms per VU); Litestream slope (ms per VU); gcsfuse max at 20 VUs (ms); Litestream max at 20 VUs (ms); gcsfuse requests/s at 2 VUs): CPU burnt per request by the Go counter 4.7ms is fitted from seed 000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("want %q in:\n%s", want, out.String())
		}
	}

	// Without the fitted cost (the real app, or --cpu-per-request 0s) every level is a prediction;
	// a row the run lacks is not measured, never a zero.
	delete(ours, "gcsfuse@4")
	r = seed000Run("0s", ours, map[string]float64{"gcsfuse": 5.6, "litestream": 4})
	if tally := report.Tally(report.Scoreboard(r)); tally != (report.ScoreTally{Predictions: 8, Within: 4, Unmeasured: 1}) {
		t.Errorf("without a fitted cost: tally %+v", tally)
	}
}
