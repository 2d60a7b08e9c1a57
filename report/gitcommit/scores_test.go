package gitcommit

import (
	"math"
	"testing"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// Seed 004's figures: the st1 floor is our slowest window beside the seed's floor, sizes in MiB
// from the seed's MB.
func TestSeed004ScoresCompareLikeWithLike(t *testing.T) {
	var backends []scenario.BackendSpec
	for _, typ := range []string{"gp2", "st1", "sc1"} {
		backends = append(backends, scenario.BackendSpec{Name: "volume", Label: typ, Options: map[string]string{"type": typ, "size": "500GiB"}})
	}
	r := &results.Results{Schema: results.Schema, Scenario: &scenario.Spec{Name: "ebs-git", Seed: "004", Workload: scenario.Workload{Type: "gitcommit", Params: map[string]string{"layout": "distributed"}},
		Backends: backends}}
	for typ, m := range map[string]map[string]float64{
		"gp2": {"total_s": 100, "last_window_per_s": 170, "min_window_per_s": 150, "git_mib": 1000, "worktree_mib": 49, "as_files_mib": 75},
		"st1": {"total_s": 400, "last_window_per_s": 25, "min_window_per_s": 21},
		"sc1": {"total_s": 1600, "last_window_per_s": 8, "min_window_per_s": 5},
	} {
		r.Aggregates = append(r.Aggregates, results.Aggregate{Backend: typ, Median: m})
	}
	// st1 spends a tenth of its bucket in half an hour: 20% an hour, the seed's pace.
	st1, _ := report.VolumeModel(r, "st1")
	full := st1.CreditMiB
	r.Cells = append(r.Cells, results.Cell{Cell: scenario.Cell{Backend: "st1", Repeat: 1},
		Series: map[string][]measure.Point{"backend.volume_credit_mib": {{T: 0, V: full}, {T: 900, V: 0.95 * full}, {T: 1800, V: 0.9 * full}}}})
	got := map[string]report.Score{}
	for _, s := range report.Scoreboard(r) {
		got[s.Figure] = s
	}
	if s := got["sc1 / st1 total time"]; s.Ours != 4 || !s.Within() {
		t.Errorf("sc1/st1: %+v", s)
	}
	if s := got["st1 floor: slowest window (changes/s)"]; s.Ours != 21 || s.Seed != 20 {
		t.Errorf("st1 floor: %+v", s)
	}
	if s := got["distributed repositories on disk (MiB)"]; s.Ours != 1049 || !s.Within() {
		t.Errorf("distributed size: %+v (seed 1.1 GB is %.0f MiB)", s, seed004MiB(1100))
	}
	if s := got["st1 burst credits spent per hour (% of the bucket)"]; math.Abs(s.Ours-20) > 1e-9 || !s.Within() {
		t.Errorf("st1 credits: %+v", s)
	}
	if s := got["sc1 burst credits spent per hour (% of the bucket)"]; s.Measured {
		t.Errorf("sc1 has no sampled credits here: %+v", s)
	}
	if s := got["io1 pace in the last window (changes/s)"]; s.Measured {
		t.Errorf("io1 was not run: %+v", s)
	}
}
