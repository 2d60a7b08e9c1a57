package counter

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

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
	report.Summarize(r)
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
	report.WriteTables(&out, r)
	// The seed's avg at 2 VUs is 10; ours is 5 (median of 4, 5, 9): ratio 0.50.
	for _, want := range []string{"backend a", "backend b", "seed: 2.00", "b / a", "1 cell(s) failed", "boom", "a beside the seed", "5.00  10.00  0.50x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
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
	report.Summarize(r)
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
	charts, err := report.ChartsFor(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 3 || charts[0].ID != "crash-lost" || len(charts[0].Series) != 2 || len(charts[0].Series[0].Points) != 3 {
		t.Fatalf("crash charts %+v", charts)
	}
	// Lost writes against cost: local (no bucket) at $0 losing all 100 in every crash; litestream
	// at its crash runs' $259.20 a month, from its median 8 to its max 9 lost.
	if c := charts[2]; c.ID != "lost-against-cost" || len(c.Series) != 2 ||
		c.Series[0].Group != "local" || len(c.Series[0].Points) != 1 || c.Series[0].Points[0] != [2]float64{0, 100} ||
		c.Series[1].Group != "litestream" || len(c.Series[1].Points) != 2 || c.Series[1].Points[0][1] != 8 || c.Series[1].Points[1][1] != 9 ||
		math.Abs(c.Series[1].Points[0][0]-259.2) > 1e-9 || c.Series[1].Points[1][0] != c.Series[1].Points[0][0] || !strings.Contains(c.Note, "local") {
		t.Errorf("lost against cost %+v", c)
	}
	var out bytes.Buffer
	report.WriteTables(&out, r)
	if !strings.Contains(out.String(), "local lost every acknowledged write in every crash") {
		t.Errorf("table:\n%s", out.String())
	}
}

// A results file of the first format (a real run of cloudrun-sqlite --quick, before workloads
// were plug-ins) loads as generic cells with the same numbers.
func TestFirstFormatLoads(t *testing.T) {
	r, err := report.Load(recorded)
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
