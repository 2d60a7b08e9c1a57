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
