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

	// Without the fitted cost (the real app, or --cpu-per-request 0s) every level is set by this
	// machine's CPU: shown, judged "reported", kept out of the tally; the scale-free figures stay
	// predictions. A row the run lacks is not measured, never a zero.
	delete(ours, "gcsfuse@4")
	r = seed000Run("0s", ours, map[string]float64{"gcsfuse": 5.6, "litestream": 4})
	scores := report.Scoreboard(r)
	if tally := report.Tally(scores); tally != (report.ScoreTally{Predictions: 3, Within: 1, Reported: 5, Unmeasured: 1}) {
		t.Errorf("without a fitted cost: tally %+v", tally)
	}
	for _, s := range scores {
		level := strings.Contains(s.Figure, "ms per VU") || strings.Contains(s.Figure, "max at") || strings.Contains(s.Figure, "requests/s")
		if s.Measured && (level != (s.Judged() == "reported") || (s.Judged() == "reported") == s.Prediction()) {
			t.Errorf("%s: judged %s, prediction %v", s.Figure, s.Judged(), s.Prediction())
		}
	}
	out.Reset()
	report.WriteScoreboard(&out, r)
	for _, want := range []string{"seed 000: 1 of 3 predictions within 25%, 5 reported, not tallied, 1 not measured by this run",
		"reported, not tallied (gcsfuse slope (ms per VU); Litestream slope (ms per VU); gcsfuse max at 20 VUs (ms); Litestream max at 20 VUs (ms); gcsfuse requests/s at 2 VUs): an absolute level"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("want %q in:\n%s", want, out.String())
		}
	}
}

// Each other pairing of a gcsfuse entry and a Litestream entry scored against the seed's tables
// (named variants: another release, other defaults) gets its slope ratio, judged "reported" and
// out of the tally; a variant the run left out gets none.
func TestSeed000VariantsAreReportedNotTallied(t *testing.T) {
	r := seed000Run("0s", map[string]map[string]float64{"gcsfuse@2": {"med_ms": 10}, "gcsfuse-v2.4@2": {"med_ms": 10, "p90_ms": 25}, "litestream-0.5@4": {"med_ms": 8, "p90_ms": 20}},
		map[string]float64{"gcsfuse": 8, "gcsfuse-v2.4": 6, "litestream": 4, "litestream-0.5": 3})
	gcs, ls := r.Scenario.Published[0], r.Scenario.Published[1]
	for _, v := range []struct{ name, label string }{{"gcsfuse", "gcsfuse-v2.4"}, {"gcsfuse", "gcsfuse-3.11"}, {"litestream", "litestream-0.5"}} {
		r.Scenario.Backends = append(r.Scenario.Backends, scenario.BackendSpec{Name: v.name, Label: v.label})
		p := gcs
		if v.name == "litestream" {
			p = ls
		}
		p.Backend = v.label
		r.Scenario.Published = append(r.Scenario.Published, p)
	}
	r.Scenario.Backends = append([]scenario.BackendSpec{{Name: "gcsfuse"}, {Name: "litestream"}}, r.Scenario.Backends...)
	scores := report.Scoreboard(r)
	got := map[string]report.Score{}
	for _, s := range scores {
		got[s.Figure] = s
	}
	for figure, ours := range map[string]float64{
		"gcsfuse / litestream-0.5 slope of avg latency":      8.0 / 3,
		"gcsfuse-v2.4 / litestream slope of avg latency":     6.0 / 4,
		"gcsfuse-v2.4 / litestream-0.5 slope of avg latency": 6.0 / 3,
	} {
		s, ok := got[figure]
		if !ok || s.Seed != 2 || s.Ours != ours || s.Judged() != "reported" || s.Prediction() {
			t.Errorf("%s: %+v (found %v), want seed 2, ours %v, reported", figure, s, ok, ours)
		}
	}
	// A variant's tails, where the run has its row, beside the seed's own; none where it has not
	// (gcsfuse-v2.4 at 4 VUs).
	for figure, want := range map[string][2]float64{
		"gcsfuse-v2.4 p90 / median at 2 VUs":   {4, 2.5},
		"litestream-0.5 p90 / median at 4 VUs": {5, 2.5},
	} {
		s, ok := got[figure]
		if !ok || s.Seed != want[0] || s.Ours != want[1] || s.Judged() != "reported" || s.Prediction() {
			t.Errorf("%s: %+v (found %v), want seed %v, ours %v, reported", figure, s, ok, want[0], want[1])
		}
	}
	if s, ok := got["gcsfuse-v2.4 p90 / median at 4 VUs"]; ok {
		t.Errorf("a variant's row the run has not: %+v", s)
	}
	for figure := range got {
		if strings.HasPrefix(figure, "gcsfuse-3.11") {
			t.Errorf("%s: a variant with no rows in the run has no figure", figure)
		}
	}
	// The seed's own pairing stays the prediction.
	if s := got["gcsfuse / Litestream slope of avg latency"]; !s.Prediction() || s.Ours != 2 {
		t.Errorf("the seed's pairing: %+v", s)
	}
	var out bytes.Buffer
	report.WriteScoreboard(&out, r)
	if !strings.Contains(out.String(), "reported, not tallied (gcsfuse / litestream-0.5 slope of avg latency; gcsfuse-v2.4 / litestream slope of avg latency; gcsfuse-v2.4 / litestream-0.5 slope of avg latency; gcsfuse-v2.4 p90 / median at 2 VUs; litestream-0.5 p90 / median at 4 VUs): a named variant") {
		t.Errorf("the variants' note:\n%s", out.String())
	}
}
