package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/lab"
	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
)

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
	r.Ceilings = map[string]lab.Ceiling{"a": {ReadMiBs: 500, WriteMiBs: 200, Method: "probe"}}
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
		Ceilings: map[string]lab.Ceiling{"c": {ReadMiBs: 500, WriteMiBs: 200, ReadBytesStat: "bucket_bytes_out"}}}
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
	same := lab.Ceiling{ReadMiBs: 500, WriteMiBs: 200, Method: "probe"}
	r.Ceilings = map[string]lab.Ceiling{"a": same, "b": {ReadMiBs: 90, WriteMiBs: 80, Method: "probe"}, "c": same}
	Summarize(r)
	var out bytes.Buffer
	WriteTables(&out, r)
	text := out.String()
	if strings.Count(text, "own ceiling") != 2 || !strings.Contains(text, "ceiling for backends a, c on this machine: read 500 MiB/s") ||
		!strings.Contains(text, "ceiling for backend b on this machine: read 90 MiB/s") {
		t.Errorf("shared ceilings:\n%s", text)
	}
}
