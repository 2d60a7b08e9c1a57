package report

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/measure"
	"persistlab/scenario"
)

func cell(backend string, vus, repeat int, avg, med float64, ok, delta int64) Cell {
	return Cell{Cell: scenario.Cell{Backend: backend, VUs: vus, Repeat: repeat},
		Summary: measure.Summary{Count: ok, AvgMs: avg, MedMs: med}, OK: ok, CountDelta: delta}
}

func TestSummarizeMediansFitsAndLostUpdates(t *testing.T) {
	r := &Results{Schema: Schema, Scenario: &scenario.Spec{Name: "t",
		Backends:  []scenario.BackendSpec{{Name: "b"}, {Name: "a"}},
		Published: []scenario.Published{{Backend: "a", Slope: 2, Source: "seed"}}}}
	r.Cells = []Cell{
		cell("a", 2, 1, 4, 3, 100, 100), cell("a", 2, 2, 5, 1, 100, 97), cell("a", 2, 3, 9, 2, 100, 100),
		cell("a", 4, 1, 8, 8, 50, 50),
		cell("b", 2, 1, 10, 10, 10, 10),
		{Cell: scenario.Cell{Backend: "b", VUs: 4}, Failure: "boom"},
	}
	r.Summarize()
	if len(r.Aggregates) != 3 || r.Aggregates[0].Backend != "b" {
		t.Fatalf("aggregates %+v (want scenario order b, a)", r.Aggregates)
	}
	a2 := r.Aggregates[1]
	if a2.VUs != 2 || a2.Runs != 3 || a2.Median.AvgMs != 5 || a2.Median.MedMs != 2 || a2.LostUpdates != 3 {
		t.Errorf("a@2 %+v", a2)
	}
	// a: points (2,4) (2,5) (2,9) (4,8): Σxy = 8+10+18+32 = 68, Σx² = 4+4+4+16 = 28.
	var fa Fit
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
	for _, want := range []string{"backend a", "backend b", "seed: 2.00", "b / a", "1 cell(s) failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	sw, _ := scenario.ParseIntSweep("2..6/2")
	r := &Results{Schema: Schema, Status: StatusComplete, Scenario: &scenario.Spec{Name: "t", Sweep: scenario.Sweep{VUs: sw}, Duration: scenario.Duration(5e9)},
		Cells: []Cell{cell("a", 2, 1, 4, 3, 10, 10)}}
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Scenario.Sweep.VUs.Text != "2..6/2" || len(back.Scenario.Sweep.VUs.Values) != 3 || back.Scenario.Duration != r.Scenario.Duration || len(back.Cells) != 1 {
		t.Errorf("round trip lost data: %+v", back.Scenario)
	}
	r.Schema = "other/9"
	r.Save(path)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "other/9") {
		t.Errorf("foreign schema: %v", err)
	}
}

func TestCrashResultsChartAndSummarize(t *testing.T) {
	pos := int64(5)
	r := &Results{Schema: Schema, Scenario: &scenario.Spec{Name: "c", Workload: scenario.Workload{Type: "counter"},
		Backends: []scenario.BackendSpec{{Name: "local"}, {Name: "litestream"}}}}
	for i := 1; i <= 3; i++ {
		r.Crashes = append(r.Crashes,
			CrashRun{Cell: scenario.Cell{Backend: "local", VUs: 2, Repeat: i}, MaxAcked: 100, Lost: 100, Integrity: "ok"},
			CrashRun{Cell: scenario.Cell{Backend: "litestream", VUs: 2, Repeat: i}, MaxAcked: 100, Recovered: 90 + int64(i), Lost: 10 - int64(i),
				Position: &pos, Integrity: "ok", LostReachMs: 500, LoadS: 2, OKBeforeKill: 100,
				BackendStats: map[string]float64{"bucket_class_a": 4, "bucket_class_b": 0}})
	}
	r.Summarize()
	if len(r.CrashSummaries) != 2 || r.CrashSummaries[0].LostEverything != 3 || r.CrashSummaries[1].LostMedian != 8 || r.CrashSummaries[1].BelowPosition != 0 {
		t.Fatalf("summaries %+v", r.CrashSummaries)
	}
	ls := r.CrashSummaries[1]
	// 4 class A uploads in 2 s: 2/s, for 30 days at $0.005 per 1,000 = $25.92; and 4 per 100
	// requests is 40,000 per million requests = $0.20.
	if ls.ClassAPerS != 2 || len(ls.Costs) != 2 || math.Abs(ls.Costs[0].USDPerMonth-25.92) > 1e-9 || math.Abs(ls.Costs[0].USDPerMillion-0.2) > 1e-9 {
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
