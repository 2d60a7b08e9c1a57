package report

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/measure"
	"persistlab/scenario"
)

// A cell whose two slow windows line up with a database upload and CPU-limit waits: the slow
// windows are counted by what overlaps them, and the windows with a write are told apart.
func TestMomentsLineSlowWindowsUpWithWrites(t *testing.T) {
	pts := func(vs ...float64) []measure.Point {
		out := make([]measure.Point, len(vs))
		for i, v := range vs {
			out[i] = measure.Point{T: float64(i) * 0.25, V: v}
		}
		return out
	}
	c := Cell{Metrics: map[string]float64{"med_ms": 5, "p99_ms": 40}, Series: map[string][]measure.Point{
		seriesLatencyMax: pts(10, 300, 12, 11, 500, 9, 10, 60),
		seriesRate:       pts(100, 4, 100, 100, 2, 100, 100, 90),
		// the db upload ends inside window 1 (0.25-0.5 s) and lasts 100 ms; one in window 4 started in window 3
		seriesWrite + "counter.db": {{T: 0.40, V: 100}, {T: 1.05, V: 300}},
		// throttled time grows only between 1.75 and 2.0 s (window 7)
		seriesThrottled: {{T: 0, V: 0}, {T: 0.5, V: 0}, {T: 1.0, V: 0}, {T: 1.5, V: 0}, {T: 1.75, V: 0}, {T: 2.0, V: 0.05}},
	}}
	m, ok := momentsOf(c)
	if !ok {
		t.Fatal("no moments")
	}
	// Slow: windows 1, 4 (writes) and 7 (throttled); window 3 overlaps the second write but is fast.
	if m.Windows != 8 || m.Slow != 3 || m.AnyWrite != 2 || m.WithWrite["counter.db"] != 2 || m.Throttled != 1 || m.Neither != 0 {
		t.Errorf("moments %+v", m)
	}
	if m.MaxWithWrite != 300 || m.MaxWithout != 10 { // windows 1, 3, 4 against 0, 2, 5, 6, 7
		t.Errorf("slowest with a write %v, without %v", m.MaxWithWrite, m.MaxWithout)
	}
	delete(c.Series, seriesThrottled)
	if m, _ := momentsOf(c); m.Throttled != -1 || m.Neither != 1 {
		t.Errorf("without a CPU limit: %+v", m)
	}
	r := &Results{Cells: []Cell{c}, Scenario: &scenario.Spec{}}
	r.Cells[0].Backend = "gcsfuse"
	var out bytes.Buffer
	writeMoments(&out, r)
	if !strings.Contains(out.String(), "counter.db 2") {
		t.Errorf("table:\n%s", out.String())
	}
	if ch, ok := momentsChart(r, "gcsfuse"); !ok || len(ch.Series) != 2 {
		t.Errorf("chart %+v", ch)
	}
}

// The paragraph after the seed's numbers states the slope ratio against the seed's, the tail at
// the lowest VU level, the floor, and what the slow windows coincide with, from the run's figures.
func TestDifferencesFromTheSeedCiteTheRun(t *testing.T) {
	pub := scenario.Published{Backend: "gcsfuse", Columns: []string{"vus", "med_ms", "p90_ms", "min_ms"},
		Rows: [][]scenario.Value{{"2", "10", "35", "8"}}, Slope: 8}
	pub2 := scenario.Published{Backend: "litestream", Columns: []string{"vus", "med_ms", "p90_ms", "min_ms"},
		Rows: [][]scenario.Value{{"2", "9", "12", "6"}}, Slope: 4}
	r := &Results{
		Scenario: &scenario.Spec{Workload: scenario.Workload{Type: "counter", Params: map[string]string{"cpus": "1"}},
			Backends: []scenario.BackendSpec{{Name: "gcsfuse"}, {Name: "litestream"}}, Published: []scenario.Published{pub, pub2}},
		Aggregates: []Aggregate{
			{Backend: "gcsfuse", Params: map[string]string{"vus": "2"}, Median: map[string]float64{"med_ms": 10, "p90_ms": 11, "min_ms": 4}},
			{Backend: "litestream", Params: map[string]string{"vus": "2"}, Median: map[string]float64{"med_ms": 9, "p90_ms": 10, "min_ms": 3}},
		},
		Fits: []Fit{{Backend: "gcsfuse", AvgMsPerVU: 6, Published: 8}, {Backend: "litestream", AvgMsPerVU: 5, Published: 4}},
	}
	var out bytes.Buffer
	counterDifferences(&out, r)
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"gcsfuse costs 1.20x litestream's latency per VU where the seed's cost 2.00x",
		"gcsfuse's p90 is 1.10x its median at 2 VUs where the seed's was 3.50x (no model factor",
		"our fastest answers are 0.50-0.50x the seed's",
		"pinned to 1 core(s)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
