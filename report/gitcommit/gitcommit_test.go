package gitcommit

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// Seed 004's comparisons come from the measurements: the HDD types' total times against each other
// and against SSD, each type's pace, the layouts' disk use, and the volume's list price.
func TestGitcommitReportSetsTheSeedsRatiosBesideOurs(t *testing.T) {
	vol := func(label, typ string, params map[string]string) scenario.BackendSpec {
		return scenario.BackendSpec{Name: "volume", Label: label, Options: map[string]string{"type": typ, "size": "500GiB"}, Params: params}
	}
	io1 := vol("io1", "io1", nil)
	io1.Options["iops"] = "25000"
	mono := vol("io1-mono", "io1", map[string]string{"layout": "monolithic"})
	mono.Options["iops"] = "25000"
	spec := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: "gitcommit", Params: map[string]string{"files": "5000", "changes": "20000"}},
		Backends: []scenario.BackendSpec{{Name: "local"}, io1, vol("st1", "st1", nil), vol("sc1", "sc1", nil), mono}, Repeat: 1}
	r := &results.Results{Schema: results.Schema, Scenario: spec, Defaults: map[string]string{"layout": "distributed"}}
	total := map[string]float64{"local": 100, "io1": 110, "st1": 400, "sc1": 1400, "io1-mono": 300}
	for _, c := range spec.Plan() {
		s := total[c.Backend]
		m := map[string]float64{"total_s": s, "changes_per_s": 20000 / s, "first_window_per_s": 150, "last_window_per_s": 20000 / s,
			"min_window_per_s": 20000 / s, "git_mib": 1000, "worktree_mib": 40, "as_files_mib": 72}
		if c.Backend == "io1-mono" {
			m["git_mib"] = 400
		}
		r.Cells = append(r.Cells, results.Cell{Cell: c, Metrics: m, Series: map[string][]measure.Point{
			"changes_per_s": {{T: s / 2, V: 150}, {T: s, V: 20000 / s}}, "changes": {{T: s / 2, V: 10000}, {T: s, V: 20000}}}})
	}
	report.Summarize(r)
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	for _, want := range []string{
		"sc1 / st1 total time        3.50x   seed: about 3.8x",
		"st1 / io1 total time        3.64x",
		"st1  pace falling, first 150.0, last 50.0",
		"io1  pace rising, first 150.0, last 181.8",
		"disk use: distributed 1040 MiB, monolithic 440 MiB, as plain files 72 MiB",
		"io1-mono   monolithic       66.7",
		"1687.50", // io1: 500 GiB x $0.125 + 25,000 IOPS x $0.065
		"st1              $    22.50",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	charts, err := report.ChartsFor(r)
	if err != nil || len(charts) == 0 || charts[0].ID != "gitcommit-pace" || len(charts[0].Series) != 5 {
		t.Fatalf("charts %v %+v", err, charts)
	}
	if p := charts[0].Series[0].Points; len(p) != 2 || p[1] != [2]float64{20000, 200} {
		t.Errorf("local's pace against changes done: %v", p)
	}
}

// Units per change come from the sampled counters between the windows' ends: read and write
// apart, interpolated where a window ends between two samples.
func TestVolumeUnitsPerChangeByWindow(t *testing.T) {
	spec := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: "gitcommit", Params: map[string]string{"files": "5", "changes": "300"}},
		Backends: []scenario.BackendSpec{{Name: "volume", Label: "st1", Options: map[string]string{"type": "st1", "size": "500GiB"}}}, Repeat: 1}
	r := &results.Results{Schema: results.Schema, Scenario: spec, Defaults: map[string]string{"layout": "distributed"}}
	for _, c := range spec.Plan() {
		r.Cells = append(r.Cells, results.Cell{Cell: c, Metrics: map[string]float64{"total_s": 30, "changes_per_s": 10},
			Series: map[string][]measure.Point{
				"changes": {{T: 10, V: 100}, {T: 20, V: 200}, {T: 30, V: 300}},
				// reads 0 until 20 s, then 5 a second; writes 2 per change throughout, sampled every 4 s
				"backend.volume_read_units":  {{T: 0, V: 7}, {T: 20, V: 7}, {T: 24, V: 27}, {T: 28, V: 47}, {T: 32, V: 67}},
				"backend.volume_write_units": {{T: 0, V: 0}, {T: 8, V: 160}, {T: 16, V: 320}, {T: 24, V: 480}, {T: 32, V: 640}},
			}})
	}
	report.Summarize(r)
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	// first window: 0 read, 200 write over 100 changes; last: 50 read, 200 write; run: 50, 600 over 300
	found := false
	for _, line := range strings.Split(text, "\n") {
		found = found || strings.Join(strings.Fields(line), " ") == "st1 st1 0.00 2.00 0.50 2.00 0.17 2.00"
	}
	if !found {
		t.Errorf("want the units per change row in:\n%s", text)
	}
}

// git's automatic gc is shown where a run counted it: detached beside inline, how long the
// detached one ran on, and disk use at the last change beside after the gc; a file without the
// count (from before it) shows no such table.
func TestGitGCTableShowsDetachedBesideInline(t *testing.T) {
	mono := func(label, detach string) scenario.BackendSpec {
		return scenario.BackendSpec{Name: "volume", Label: label, Options: map[string]string{"type": "io1", "size": "500GiB", "iops": "25000"},
			Params: map[string]string{"layout": "monolithic", "gc_auto_detach": detach}}
	}
	spec := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: "gitcommit", Params: map[string]string{"files": "5000", "changes": "20000"}},
		Backends: []scenario.BackendSpec{mono("detached", "true"), mono("inline", "false")}, Repeat: 1}
	build := func(counted bool) string {
		r := &results.Results{Schema: results.Schema, Scenario: spec, Defaults: map[string]string{"layout": "distributed", "gc_auto_detach": "false"}}
		for _, c := range spec.Plan() {
			m := map[string]float64{"total_s": 200, "changes_per_s": 100, "disk_mib": 40}
			if counted {
				m["auto_gcs"] = 9
				if c.Backend == "detached" {
					m["gc_after_s"], m["disk_at_end_mib"], m["auto_gcs"] = 12.5, 210, 8
				}
			}
			r.Cells = append(r.Cells, results.Cell{Cell: c, Metrics: m})
		}
		report.Summarize(r)
		var out bytes.Buffer
		report.WriteTables(&out, r)
		return out.String()
	}
	text := build(true)
	for _, want := range []string{"git's automatic gc", "detached  monolithic  detached           8                        12.5                        210.0                   40.0",
		"inline  monolithic    inline           9                           -                            -                   40.0"} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	if text := build(false); strings.Contains(text, "git's automatic gc") {
		t.Errorf("a file without auto_gcs shows a gc table:\n%s", text)
	}
}
