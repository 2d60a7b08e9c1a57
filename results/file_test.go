package results

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/lab"
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
		Ceilings: map[string]lab.Ceiling{"gcsfuse": {ReadMiBs: math.Inf(1)}}}
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

// recorded is a real run's file of the first format; Load converts it into every kind of field.
const recorded = "../report/testdata/cloudrun-sqlite-quick.json"

// rich is a recorded run, converted, with every list and map a file can hold filled.
func rich(t *testing.T) *Results {
	t.Helper()
	r, err := Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	r.Notes = []string{"a note <with> what HTML escapes & more"}
	r.Ceilings = map[string]lab.Ceiling{"gcsfuse": {ReadMiBs: 100, Method: "fake"}}
	r.Crashes = []CrashRun{{Cell: scenario.Cell{Index: 0, Backend: "gcsfuse"}, Lost: 3, BackendStats: map[string]float64{"bucket_class_a": 2}}}
	r.Merged = []MergedShard{}
	return r
}

// A file is what json.Marshal writes, compact, though it is written a cell at a time.
func TestSaveWritesWhatMarshalWrites(t *testing.T) {
	dir := t.TempDir()
	for name, edit := range map[string]func(*Results){
		"every field":     func(*Results) {},
		"no cells (null)": func(r *Results) { r.Cells = nil },
		"no cells ([])":   func(r *Results) { r.Cells = []Cell{} },
		"no scenario":     func(r *Results) { r.Scenario = nil },
	} {
		r := rich(t)
		edit(r)
		path := filepath.Join(dir, "r.json")
		if err := r.Save(path, nil); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("%s: saved %d bytes, json.Marshal %d; first difference at %d", name, len(got), len(want)+1, firstDifference(got, want))
		}
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
