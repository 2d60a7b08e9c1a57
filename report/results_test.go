package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
)

func cell(backend string, vus, repeat int, avg, med float64, ok, delta int64) results.Cell {
	m := map[string]float64{}
	measure.Summary{Count: ok, AvgMs: avg, MedMs: med}.Metrics("", m)
	m["ok"], m["count_delta"], m["lost_updates"] = float64(ok), float64(delta), float64(max(0, ok-delta))
	return results.Cell{Cell: scenario.Cell{Backend: backend, Params: map[string]string{"vus": strconv.Itoa(vus)}, Repeat: repeat}, Metrics: m}
}

// counterSpec is a counter scenario over the given backends, sweeping vus.
func counterSpec(backends ...string) *scenario.Spec {
	s := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: "counter"}, Sweep: scenario.Sweep{{Name: "vus", Text: "2,4", Values: []string{"2", "4"}}}, Repeat: 1}
	for _, b := range backends {
		s.Backends = append(s.Backends, scenario.BackendSpec{Name: b})
	}
	return s
}

func TestSummarizeMediansFitsAndLostUpdates(t *testing.T) {
	spec := counterSpec("b", "a")
	spec.Published = []scenario.Published{{Backend: "a", Slope: 2, Source: "seed", Columns: []string{"vus", "avg_ms"},
		Rows: [][]scenario.Value{{"2", "10"}}}}
	r := &results.Results{Schema: results.Schema, Scenario: spec}
	r.Cells = []results.Cell{
		cell("a", 2, 1, 4, 3, 100, 100), cell("a", 2, 2, 5, 1, 100, 97), cell("a", 2, 3, 9, 2, 100, 100),
		cell("a", 4, 1, 8, 8, 50, 50),
		cell("b", 2, 1, 10, 10, 10, 10),
		{Cell: scenario.Cell{Backend: "b", Params: map[string]string{"vus": "4"}}, Failure: "boom"},
	}
	Summarize(r)
	if len(r.Aggregates) != 3 || r.Aggregates[0].Backend != "b" {
		t.Fatalf("aggregates %+v (want scenario order b, a)", r.Aggregates)
	}
	a2 := r.Aggregates[1]
	if a2.Point != "vus=2" || a2.Runs != 3 || a2.Median["avg_ms"] != 5 || a2.Median["med_ms"] != 2 || a2.Total["lost_updates"] != 3 {
		t.Errorf("a@2 %+v", a2)
	}
	// a: points (2,4) (2,5) (2,9) (4,8): Σxy = 8+10+18+32 = 68, Σx² = 4+4+4+16 = 28.
	var fa results.Fit
	for _, f := range r.Fits {
		if f.Backend == "a" {
			fa = f
		}
	}
	if math.Abs(fa.AvgMsPerVU-68.0/28) > 1e-12 || fa.Points != 4 || fa.Published != 2 {
		t.Errorf("fit %+v", fa)
	}
	var out bytes.Buffer
	WriteTables(&out, r)
	// The seed's avg at 2 VUs is 10; ours is 5 (median of 4, 5, 9): ratio 0.50.
	for _, want := range []string{"backend a", "backend b", "seed: 2.00", "b / a", "1 cell(s) failed", "boom", "a beside the seed", "5.00  10.00  0.50x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	spec := counterSpec("a")
	spec.Sweep[0].Text = "2..6/2"
	spec.Duration = scenario.Duration(5e9)
	r := &results.Results{Schema: results.Schema, Status: results.StatusComplete, Scenario: spec, Cells: []results.Cell{cell("a", 2, 1, 4, 3, 10, 10)}}
	r.Cells[0].Series = map[string][]measure.Point{"iops": {{T: 1, V: 100}, {T: 2, V: 120}}}
	r.Cells[0].Counters = map[string]int64{"http_500": 3}
	r.Cells[0].Facts = map[string]string{"integrity": "ok"}
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	if err := r.Save(path, Summarize); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b any) bool { x, _ := json.Marshal(a); y, _ := json.Marshal(b); return bytes.Equal(x, y) }
	if !same(back.Scenario, r.Scenario) || !same(back.Cells, r.Cells) || back.Cells[0].Series["iops"][1].V != 120 {
		t.Errorf("round trip lost data:\n%+v\n%+v\n%+v\n%+v", back.Scenario, r.Scenario, back.Cells, r.Cells)
	}
	r.Schema = "other/9"
	r.Save(path, Summarize)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "other/9") {
		t.Errorf("foreign schema: %v", err)
	}
}

func TestCrashResultsChartAndSummarize(t *testing.T) {
	pos := int64(5)
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("local", "litestream")}
	vus := map[string]string{"vus": "2"}
	for i := 1; i <= 3; i++ {
		r.Crashes = append(r.Crashes,
			results.CrashRun{Cell: scenario.Cell{Backend: "local", Params: vus, Repeat: i}, MaxAcked: 100, Lost: 100, Integrity: "ok"},
			results.CrashRun{Cell: scenario.Cell{Backend: "litestream", Params: vus, Repeat: i}, MaxAcked: 100, Recovered: 90 + int64(i), Lost: 10 - int64(i),
				Position: &pos, Integrity: "ok", LostReachMs: 500, LoadS: 2, OKBeforeKill: 100,
				BackendStats: map[string]float64{"bucket_class_a": 40, "bucket_class_b": 0}})
	}
	Summarize(r)
	if len(r.CrashSummaries) != 2 || r.CrashSummaries[0].LostEverything != 3 || r.CrashSummaries[1].LostMedian != 8 || r.CrashSummaries[1].BelowPosition != 0 {
		t.Fatalf("summaries %+v", r.CrashSummaries)
	}
	ls := r.CrashSummaries[1]
	if ls.AckedPerS != 50 || r.CrashSummaries[0].AckedPerS != 0 {
		t.Errorf("acknowledged per second of load: %v and %v, want 50 (100 in 2 s) and 0 (no load time)", ls.AckedPerS, r.CrashSummaries[0].AckedPerS)
	}
	// 40 class A uploads in 2 s: 20/s, for 30 days at $0.005 per 1,000 = $259.20; and 40 per 100
	// requests is 400,000 per million requests = $2.00.
	if ls.ClassAPerS != 20 || ls.TooFewToPrice || len(ls.Costs) != 2 || math.Abs(ls.Costs[0].USDPerMonth-259.2) > 1e-9 || math.Abs(ls.Costs[0].USDPerUnit*1e6-2) > 1e-9 {
		t.Errorf("litestream cost %+v %+v", ls.ClassAPerS, ls.Costs)
	}
	charts, err := ChartsFor(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 2 || charts[0].ID != "crash-lost" || len(charts[0].Series) != 2 || len(charts[0].Series[0].Points) != 3 {
		t.Errorf("crash charts %+v", charts)
	}
	var out bytes.Buffer
	WriteTables(&out, r)
	if !strings.Contains(out.String(), "local lost every acknowledged write in every crash") {
		t.Errorf("table:\n%s", out.String())
	}
}

// A results file of the first format (a real run of cloudrun-sqlite --quick, before workloads
// were plug-ins) loads as generic cells with the same numbers.
func TestFirstFormatLoads(t *testing.T) {
	r, err := Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Cells []struct {
			VUs     int             `json:"vus"`
			OK      int64           `json:"ok"`
			Summary measure.Summary `json:"summary"`
		} `json:"cells"`
	}
	data, _ := os.ReadFile(recorded)
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if r.Schema != results.Schema || len(r.Cells) != len(raw.Cells) || len(raw.Cells) == 0 {
		t.Fatalf("schema %s, %d cells of %d", r.Schema, len(r.Cells), len(raw.Cells))
	}
	for i, c := range r.Cells {
		old := raw.Cells[i]
		if c.Params["vus"] != strconv.Itoa(old.VUs) || c.M("ok") != float64(old.OK) || c.Summary() != old.Summary || c.Histograms["latency"] == "" {
			t.Errorf("cell %d: %+v from %+v", i, c, old)
		}
	}
	if v, _ := r.Scenario.Workload.Param("cpus"); v != "1" || r.Scenario.Workload.Sections["app"] != nil {
		t.Errorf("app section not flattened: %+v", r.Scenario.Workload)
	}
	if len(r.Fits) != 3 || len(r.Aggregates) == 0 {
		t.Errorf("fits %d aggregates %d", len(r.Fits), len(r.Aggregates))
	}
}

func TestRowsBoundByThisMachineAreFlagged(t *testing.T) {
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("a")}
	busy, idle := cell("a", 2, 1, 4, 3, 100, 100), cell("a", 4, 1, 8, 8, 100, 100)
	busy.Metrics["machine_cpu_util"], idle.Metrics["machine_cpu_util"] = 0.97, 0.40
	r.Cells = []results.Cell{busy, idle}
	Summarize(r)
	var out bytes.Buffer
	WriteTables(&out, r)
	text := out.String()
	if !strings.Contains(text, "bound by this machine") || !strings.Contains(text, "a vus=2 (97%") || strings.Contains(text, "a vus=4 (") {
		t.Errorf("machine-bound rows:\n%s", text)
	}
}

func TestRowsNearTheLabsCeilingAreFlagged(t *testing.T) {
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("a")}
	near, far := cell("a", 2, 1, 4, 3, 100, 100), cell("a", 4, 1, 8, 8, 100, 100)
	near.Metrics["read_mib_s"], far.Metrics["read_mib_s"] = 450, 300
	near.Metrics["write_mib_s"], far.Metrics["write_mib_s"] = 10, 190
	r.Ceilings = map[string]backend.Ceiling{"a": {ReadMiBs: 500, WriteMiBs: 200, Method: "probe"}}
	r.Cells = []results.Cell{near, far}
	Summarize(r)
	var out bytes.Buffer
	WriteTables(&out, r)
	text := out.String()
	for _, want := range []string{"ceiling for backend a on this machine: read 500 MiB/s, write 200 MiB/s (probe)",
		"a vus=2 (read 450 MiB/s, 90% of the lab's read ceiling 500 MiB/s)", "a vus=4 (write 190 MiB/s, 95% of the lab's write ceiling 200 MiB/s)"} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	r.Notes = []string{"backend b: the probe failed"}
	out.Reset()
	WriteTables(&out, r)
	if !strings.Contains(out.String(), "note: backend b: the probe failed") {
		t.Errorf("notes are not printed:\n%s", out.String())
	}
	// With the backend's own counters named, a row is judged by what the lab moved: reads a cache
	// served fast without the lab are not bound by it.
	cached, busy := cell("c", 2, 1, 4, 3, 100, 100), cell("c", 4, 1, 8, 8, 100, 100)
	cached.Metrics["read_mib_s"], busy.Metrics["read_mib_s"] = 900, 450
	cached.ElapsedS, busy.ElapsedS = 10, 10
	cached.BackendStats = map[string]float64{"bucket_bytes_out": 10 << 20}
	busy.BackendStats = map[string]float64{"bucket_bytes_out": 4500 << 20}
	lab := &results.Results{Schema: results.Schema, Scenario: counterSpec("c"), Cells: []results.Cell{cached, busy},
		Ceilings: map[string]backend.Ceiling{"c": {ReadMiBs: 500, WriteMiBs: 200, ReadBytesStat: "bucket_bytes_out"}}}
	Summarize(lab)
	out.Reset()
	WriteTables(&out, lab)
	if text := out.String(); strings.Contains(text, "c vus=2 (") || !strings.Contains(text, "c vus=4 (read 450 MiB/s, 90% of the lab's read ceiling") {
		t.Errorf("judged by the lab's own counters:\n%s", text)
	}
	// The ceiling survives a save and a load.
	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.Save(path, Summarize); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || back.Ceilings["a"] != r.Ceilings["a"] {
		t.Errorf("loaded ceilings %v, %v", back.Ceilings, err)
	}
}

// Backends that share one lab part share its measured ceiling: it is said once, naming them all.
func TestASharedCeilingIsSaidOnce(t *testing.T) {
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("a", "b", "c")}
	for _, b := range []string{"a", "b", "c"} {
		r.Cells = append(r.Cells, cell(b, 2, 1, 4, 3, 100, 100))
	}
	same := backend.Ceiling{ReadMiBs: 500, WriteMiBs: 200, Method: "probe"}
	r.Ceilings = map[string]backend.Ceiling{"a": same, "b": {ReadMiBs: 90, WriteMiBs: 80, Method: "probe"}, "c": same}
	Summarize(r)
	var out bytes.Buffer
	WriteTables(&out, r)
	text := out.String()
	if strings.Count(text, "own ceiling") != 2 || !strings.Contains(text, "ceiling for backends a, c on this machine: read 500 MiB/s") ||
		!strings.Contains(text, "ceiling for backend b on this machine: read 90 MiB/s") {
		t.Errorf("shared ceilings:\n%s", text)
	}
}
