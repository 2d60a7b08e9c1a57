package results

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/scenario"
)

func TestLoadRefusesIncompleteFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.json": "", "null.json": `{"schema":"persistlab.results/2","scenario":null}`,
		"other.json": `{"schema":"x/1"}`, "garbage.json": "not json"} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A value JSON cannot hold (NaN, +Inf) never costs a run its results: it is left out, and said so.
func TestSaveNeverFailsOverAValue(t *testing.T) {
	r := &Results{Schema: Schema, Status: StatusComplete, Scenario: &scenario.Spec{Name: "t"},
		Cells: []Cell{{Metrics: map[string]float64{"ok": 10, "bad": math.Inf(1)}, BackendStats: map[string]float64{"nan": math.NaN()}}}}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || back.Cells[0].Metrics["ok"] != 10 || len(back.Notes) != 2 || !strings.Contains(strings.Join(back.Notes, " "), "+Inf") {
		t.Errorf("saved %+v, %v", back, err)
	}
}

// Crash runs, ceilings and the like hold numbers too: none of them can fail a save.
func TestSaveScrubsEveryFigure(t *testing.T) {
	r := &Results{Schema: Schema, Status: StatusComplete, Scenario: &scenario.Spec{Name: "t"},
		Crashes:  []CrashRun{{BackendStats: map[string]float64{"x": math.NaN()}, RecoveryMs: math.Inf(-1)}},
		Ceilings: map[string]backend.Ceiling{"gcsfuse": {ReadMiBs: math.Inf(1)}}}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || !strings.Contains(strings.Join(back.Notes, " "), "3 further figure(s)") {
		t.Fatalf("%v, notes %v", err, back.Notes)
	}
}

// Derived figures are made from cells that hold only numbers: a save cleans the cells before it
// derives, so one bad value cannot turn a median into NaN.
func TestSaveDerivesFromCleanedCells(t *testing.T) {
	r := &Results{Schema: Schema, Status: StatusComplete, Scenario: &scenario.Spec{Name: "t"},
		Cells: []Cell{{Metrics: map[string]float64{"ok": 10, "bad": math.NaN()}}, {Metrics: map[string]float64{"ok": 12}}}}
	derived := 0
	derive := func(r *Results) {
		derived++
		for _, c := range r.Cells {
			for k, v := range c.Metrics {
				if math.IsNaN(v) {
					t.Errorf("derive saw %s = NaN", k)
				}
			}
		}
		r.Aggregates = []Aggregate{{Backend: "a", Median: map[string]float64{"ok": 11, "inf": math.Inf(1)}}}
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.Save(path, derive); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || derived != 1 || len(back.Aggregates) != 1 || back.Aggregates[0].Median["ok"] != 11 {
		t.Fatalf("derived %d times; back %+v, %v", derived, back, err)
	}
	if _, kept := back.Aggregates[0].Median["inf"]; kept || len(back.Notes) != 1 {
		t.Errorf("a derived Inf is dropped without a note of its own: %v, notes %v", back.Aggregates[0].Median, back.Notes)
	}
}
