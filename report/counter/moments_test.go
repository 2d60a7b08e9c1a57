package counter

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/measure"
	"persistlab/results"
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
	c := results.Cell{Metrics: map[string]float64{"med_ms": 5, "p99_ms": 40}, Series: map[string][]measure.Point{
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
	if m.Windows != 8 || m.Written != 3 || m.Slow != 3 || m.AnyWrite != 2 || m.WithWrite["counter.db"] != 2 || m.Throttled != 1 || m.Neither != 0 {
		t.Errorf("moments %+v", m)
	}
	if m.MaxWithWrite != 300 || m.MaxWithout != 10 { // windows 1, 3, 4 against 0, 2, 5, 6, 7
		t.Errorf("slowest with a write %v, without %v", m.MaxWithWrite, m.MaxWithout)
	}
	delete(c.Series, seriesThrottled)
	if m, _ := momentsOf(c); m.Throttled != -1 || m.Neither != 1 {
		t.Errorf("without a CPU limit: %+v", m)
	}
	r := &results.Results{Cells: []results.Cell{c}, Scenario: &scenario.Spec{}}
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
	r := &results.Results{
		Scenario: &scenario.Spec{Workload: scenario.Workload{Type: "counter", Params: map[string]string{"cpus": "1"}},
			Backends: []scenario.BackendSpec{{Name: "gcsfuse"}, {Name: "litestream"}}, Published: []scenario.Published{pub, pub2}},
		Aggregates: []results.Aggregate{
			{Backend: "gcsfuse", Params: map[string]string{"vus": "2"}, Median: map[string]float64{"med_ms": 10, "p90_ms": 11, "min_ms": 4}},
			{Backend: "litestream", Params: map[string]string{"vus": "2"}, Median: map[string]float64{"med_ms": 9, "p90_ms": 10, "min_ms": 3}},
		},
		Fits: []results.Fit{{Backend: "gcsfuse", AvgMsPerVU: 6, Published: 8}, {Backend: "litestream", AvgMsPerVU: 5, Published: 4}},
	}
	var out bytes.Buffer
	counterDifferences(&out, r)
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"gcsfuse costs 1.20x litestream's latency per VU where the seed's cost 2.00x",
		"gcsfuse's p90 is 1.10x its median at 2 VUs where the seed's was 3.50x (no model factor",
		"our fastest answers (min, in every row beside the seed) are 0.50-0.50x the seed's",
		"pinned to 1 core(s)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}

// quarterPoints are values at windows of 0.25 s.
func quarterPoints(vs ...float64) []measure.Point {
	out := make([]measure.Point, len(vs))
	for i, v := range vs {
		out[i] = measure.Point{T: float64(i) * 0.25, V: v}
	}
	return out
}

// timelineCell is a cell of the first run at vus whose windows' slowest answers are maxMs, with
// the writes to the bucket given as (end, ms it took) points.
func timelineCell(backend, vus string, p99 float64, maxMs []float64, writes ...measure.Point) results.Cell {
	rate := make([]float64, len(maxMs))
	for i := range rate {
		rate[i] = 100
	}
	return results.Cell{Cell: scenario.Cell{Backend: backend, Params: map[string]string{"vus": vus}, Repeat: 1},
		Metrics: map[string]float64{"p99_ms": p99, "med_ms": 10}, Series: map[string][]measure.Point{
			seriesLatencyMax: quarterPoints(maxMs...), seriesRate: quarterPoints(rate...), seriesWrite + "db": writes}}
}

// The row: no slow window has a write, but a fast one does. The medians sit beside the
// count of the windows they are taken over, so "with a write" is never 0 beside a median of them.
func TestSlowMomentsColumnsCountTheWindowsTheirMediansCover(t *testing.T) {
	r := &results.Results{Scenario: &scenario.Spec{Sweep: scenario.Sweep{{Name: "vus", Values: []string{"2", "8", "20"}}}}, Cells: []results.Cell{
		// the write (0.1-0.2 s) overlaps window 0 (10 ms); the slow window 2 (200 ms) has none
		timelineCell("gcsfuse", "2", 60, []float64{10, 12, 200, 11}, measure.Point{T: 0.2, V: 100}),
		// no write at all
		timelineCell("gcsfuse", "8", 60, []float64{10, 12, 200, 11}),
		// a write over every window
		timelineCell("gcsfuse", "20", 60, []float64{40, 40, 300, 40}, measure.Point{T: 1, V: 1000}),
	}}
	m, _ := momentsOf(r.Cells[0])
	if m.Windows != 4 || m.Written != 1 || m.Slow != 1 || m.AnyWrite != 0 || m.MaxWithWrite != 10 || m.MaxWithout != 12 {
		t.Errorf("moments %+v", m)
	}
	var out bytes.Buffer
	writeMoments(&out, r)
	got := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "gcsfuse" {
			got[f[1]] = strings.Join(f[2:], " ")
		}
	}
	// windows, with a write, median slowest with a write, without; slow, of them with a write,
	// throttled, neither; by what was written
	for point, want := range map[string]string{
		"vus=2":  "4 1 10.0 12.0 1 0 - 1 db 0",
		"vus=8":  "4 0 - 11.5 1 0 - 1 db 0",
		"vus=20": "4 4 40.0 - 1 1 - 0 db 1",
	} {
		if got[point] != want {
			t.Errorf("%s: %q, want %q\n%s", point, got[point], want, out.String())
		}
	}
	if !strings.Contains(out.String(), "windows  with a write  median slowest, write  median slowest, none  slow  slow, write") {
		t.Errorf("header:\n%s", out.String())
	}
}

// The paragraph compares slowest answers with and without a write over the same cells: a cell
// with a write in every window has no "without" and is left out of both, and named.
func TestDifferencesCompareSlowWindowsOverTheSameCells(t *testing.T) {
	spec := &scenario.Spec{Sweep: scenario.Sweep{{Name: "vus", Values: []string{"2", "8"}}},
		Backends: []scenario.BackendSpec{{Name: "gcsfuse"}}}
	r := &results.Results{Scenario: spec, Cells: []results.Cell{
		// the write (0.7-0.8 s) overlaps windows 2 and 3 (11 and 100 ms): medians 55.5 with, 10 without
		timelineCell("gcsfuse", "2", 60, []float64{10, 12, 11, 100, 10, 50, 10, 10}, measure.Point{T: 0.8, V: 100}),
		// a write over every window: 40 with, none without
		timelineCell("gcsfuse", "8", 100, []float64{40, 40, 40, 300, 40, 40, 40, 40}, measure.Point{T: 2, V: 2000}),
	}}
	text := strings.Join(strings.Fields(tailsOf(r, "gcsfuse")), " ")
	want := "2 of gcsfuse's 2 slow windows coincide with a bucket write (slowest answer in windows with one 56 ms, without 10 ms: " +
		"the medians over its cells at vus=2 only (the others had a write in every window or in none)"
	if !strings.HasPrefix(text, want) {
		t.Errorf("got  %q\nwant %q", text, want)
	}
}

// Both backends' tails are told at the same VU level: the first the seed published and this run
// measured for both (here 4 VUs: litestream's seed row at 2 VUs has no p90).
func TestDifferencesTellTailsAtOneVULevel(t *testing.T) {
	cols := []string{"vus", "med_ms", "p90_ms"}
	spec := &scenario.Spec{Workload: scenario.Workload{Type: "counter"}, Sweep: scenario.Sweep{{Name: "vus", Values: []string{"2", "4"}}},
		Backends: []scenario.BackendSpec{{Name: "gcsfuse"}, {Name: "litestream"}},
		Published: []scenario.Published{
			{Backend: "gcsfuse", Columns: cols, Rows: [][]scenario.Value{{"2", "10", "35"}, {"4", "20", "60"}}},
			{Backend: "litestream", Columns: cols, Rows: [][]scenario.Value{{"2", "9", "-"}, {"4", "10", "40"}}},
		}}
	agg := func(b, vus string, med, p90 float64) results.Aggregate {
		return results.Aggregate{Backend: b, Point: "vus=" + vus, Params: map[string]string{"vus": vus}, Median: map[string]float64{"med_ms": med, "p90_ms": p90}}
	}
	r := &results.Results{Scenario: spec, Aggregates: []results.Aggregate{
		agg("gcsfuse", "2", 10, 11), agg("gcsfuse", "4", 20, 30), agg("litestream", "2", 9, 10), agg("litestream", "4", 10, 20)}}
	var out bytes.Buffer
	counterDifferences(&out, r)
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"gcsfuse's p90 is 1.50x its median at 4 VUs where the seed's was 3.00x",
		"litestream's p90 is 2.00x its median at 4 VUs where the seed's was 4.00x",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
