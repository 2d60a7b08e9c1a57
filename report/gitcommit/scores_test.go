package gitcommit

import (
	"math"
	"strings"
	"testing"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// planned is what the plan resolved for the rows and cells of these tests, as a run records it.
var planned = map[string]string{"layout": "distributed"}

// seed004Volumes is a run of seed 004's layout on 500 GiB volumes of the types named, a row each
// with the metrics given.
func seed004Volumes(rows map[string]map[string]float64, types ...string) *results.Results {
	var backends []scenario.BackendSpec
	for _, typ := range types {
		b := scenario.BackendSpec{Name: "volume", Label: typ, Options: map[string]string{"type": typ, "size": "500GiB"}}
		if typ == "io1" {
			b.Options["iops"] = "25000" // the seed's
		}
		backends = append(backends, b)
	}
	r := &results.Results{Schema: results.Schema, Scenario: &scenario.Spec{Name: "ebs-git", Seed: "004", Workload: scenario.Workload{Type: "gitcommit", Params: map[string]string{"layout": "distributed"}},
		Backends: backends}}
	for _, typ := range types {
		r.Aggregates = append(r.Aggregates, results.Aggregate{Backend: typ, Resolved: planned, Median: rows[typ]})
	}
	return r
}

// withCreditsSpent gives backend b a cell whose credit balance falls by pctPerHour of its bucket
// an hour, sampled over half an hour.
func withCreditsSpent(t *testing.T, r *results.Results, b string, pctPerHour float64) {
	t.Helper()
	m, ok := report.VolumeModel(r, b)
	if !ok || m.CreditMiB <= 0 {
		t.Fatalf("%s has no credit bucket", b)
	}
	spent := m.CreditMiB * pctPerHour / 100 / 2
	r.Cells = append(r.Cells, results.Cell{Cell: scenario.Cell{Backend: b, Repeat: 1, Resolved: planned},
		Series: map[string][]measure.Point{"backend.volume_credit_mib": {{T: 0, V: m.CreditMiB}, {T: 900, V: m.CreditMiB - spent/2}, {T: 1800, V: m.CreditMiB - spent}}}})
}

// withWindows gives backend b a cell whose windows ran at the paces given, in order.
func withWindows(r *results.Results, b string, paces ...float64) {
	var series []measure.Point
	for i, v := range paces {
		series = append(series, measure.Point{T: float64(i + 1), V: v})
	}
	r.Cells = append(r.Cells, results.Cell{Cell: scenario.Cell{Backend: b, Repeat: 1, Resolved: planned}, Series: map[string][]measure.Point{"changes_per_s": series}})
}

func scoresByFigure(r *results.Results) map[string]report.Score {
	got := map[string]report.Score{}
	for _, s := range report.Scoreboard(r) {
		got[s.Figure] = s
	}
	return got
}

// Seed 004's figures: the st1 floor is our slowest window beside the seed's floor, sizes in MiB
// from the seed's MB.
func TestSeed004ScoresCompareLikeWithLike(t *testing.T) {
	r := seed004Volumes(map[string]map[string]float64{
		"gp2": {"total_s": 100, "last_window_per_s": 170, "min_window_per_s": 150, "git_mib": 1000, "worktree_mib": 49, "as_files_mib": 75},
		"st1": {"total_s": 400, "last_window_per_s": 25, "min_window_per_s": 21},
		"sc1": {"total_s": 1600, "last_window_per_s": 8, "min_window_per_s": 5},
	}, "gp2", "st1", "sc1")
	got := scoresByFigure(r)
	if s := got["sc1 / st1 total time"]; s.Ours != 4 || !s.Within() {
		t.Errorf("sc1/st1: %+v", s)
	}
	if s := got["st1 floor: slowest window (changes/s)"]; s.Ours != 21 || s.Seed != 20 {
		t.Errorf("st1 floor: %+v", s)
	}
	if s := got["distributed repositories on disk (MiB)"]; s.Ours != 1049 || !s.Within() {
		t.Errorf("distributed size: %+v (seed 1.1 GB is %.0f MiB)", s, seed004MiB(1100))
	}
	if s := got["sc1 burst credits spent per hour (% of the bucket)"]; s.Measured {
		t.Errorf("sc1 has no sampled credits here: %+v", s)
	}
	if s := got[ssdEndPaceFigure]; s.Measured {
		t.Errorf("no window was sampled: %+v", s)
	}
}

var ssdEndPaceFigure = "SSD end pace: median of io1's and gp2's last 5 windows (changes/s)"

// Each figure of the seed's text is scored once: "about 20% an hour" against sc1, whose bucket it
// fits, and "around 180 commits/s" once for both SSD types.
func TestSeed004ScoresEachSeedFigureOnce(t *testing.T) {
	rows := map[string]map[string]float64{}
	for _, typ := range []string{"io1", "gp2", "st1", "sc1"} {
		rows[typ] = map[string]float64{"total_s": 100, "last_window_per_s": 175, "min_window_per_s": 20}
	}
	r := seed004Volumes(rows, "io1", "gp2", "st1", "sc1")
	withCreditsSpent(t, r, "st1", 72)
	withCreditsSpent(t, r, "sc1", 21)
	withWindows(r, "io1", 150, 170, 180, 175, 185)
	withWindows(r, "gp2", 150, 165, 178, 172, 181)
	var credits, ends []report.Score
	for _, s := range report.Scoreboard(r) {
		switch {
		case strings.Contains(s.Figure, "credits"):
			credits = append(credits, s)
		case s.Seed == seed004SSDLastWindow:
			ends = append(ends, s)
		}
	}
	if len(credits) != 1 || credits[0].Figure != "sc1 burst credits spent per hour (% of the bucket)" ||
		math.Abs(credits[0].Ours-21) > 1e-9 || !credits[0].Within() {
		t.Errorf("the credits' 20%% an hour: want sc1's 21%% alone, got %+v", credits)
	}
	if len(ends) != 1 || ends[0].Figure != ssdEndPaceFigure || !ends[0].Within() {
		t.Errorf("the SSDs' 180/s: want one score, got %+v", ends)
	}
	if tally := report.Tally(report.Scoreboard(r)); tally.Predictions != 4 {
		t.Errorf("four figures measured here (sc1/st1, SSD end pace, st1 floor, sc1 credits): %+v", tally)
	}
}

// The SSDs' end pace is the median of their last five windows, pooled: one window that falls on a
// writeback dip does not set it, and neither do windows before the last five.
func TestSeed004EndPaceIsTheMedianOfTheLastFiveWindows(t *testing.T) {
	rows := map[string]map[string]float64{"io1": {"total_s": 190, "last_window_per_s": 92}, "gp2": {"total_s": 200, "last_window_per_s": 79}}
	io1Last := []float64{126, 137, 127, 138, 92}
	r := seed004Volumes(rows, "io1")
	withWindows(r, "io1", append([]float64{10, 20, 30}, io1Last...)...)
	s := scoresByFigure(r)[ssdEndPaceFigure]
	if !s.Measured || s.Ours != measure.Median(io1Last) {
		t.Errorf("io1 alone: want the median of %v, got %+v", io1Last, s)
	}
	dipped := seed004Volumes(rows, "io1")
	withWindows(dipped, "io1", 10, 20, 30, 126, 137, 127, 138, 5)
	if d := scoresByFigure(dipped)[ssdEndPaceFigure]; d.Ours != s.Ours {
		t.Errorf("a deeper dip in the last window moved the end pace from %.1f to %.1f", s.Ours, d.Ours)
	}
	gp2Last := []float64{80, 75, 101, 79, 79}
	both := seed004Volumes(rows, "io1", "gp2")
	withWindows(both, "io1", io1Last...)
	withWindows(both, "gp2", append([]float64{200}, gp2Last...)...)
	pooled := scoresByFigure(both)[ssdEndPaceFigure]
	if want := measure.Median(append(append([]float64(nil), io1Last...), gp2Last...)); pooled.Ours != want {
		t.Errorf("io1 and gp2: want the median of their last five windows together, %.1f, got %+v", want, pooled)
	}
}

// The seed's 460 MB is scored against a monolithic row run as the seed ran git, its gc detached,
// at the volume's use as the last change ended; a run whose gc ran inline is reported beside it,
// not tallied.
func TestSeed004MonolithicSizeIsScoredWithGitsDefaultsAlone(t *testing.T) {
	monolithic := func(rows ...map[string]string) *results.Results {
		r := &results.Results{Schema: results.Schema, Scenario: &scenario.Spec{Name: "ebs-git-gc", Seed: "004", Workload: scenario.Workload{Type: "gitcommit", Params: map[string]string{"layout": "monolithic"}}}}
		for i, resolved := range rows {
			label := []string{"first", "second"}[i]
			r.Scenario.Backends = append(r.Scenario.Backends, scenario.BackendSpec{Name: "volume", Label: label, Options: map[string]string{"type": "io1", "size": "500GiB", "iops": "25000"}})
			r.Aggregates = append(r.Aggregates, results.Aggregate{Backend: label, Resolved: resolved, Median: map[string]float64{"disk_mib": 37.6 + float64(i), "disk_at_end_mib": 400 + float64(i)}})
		}
		return r
	}
	inline := map[string]string{"layout": "monolithic", "gc_auto_detach": "false"}
	detached := map[string]string{"layout": "monolithic", "gc_auto_detach": "true"}
	var mono report.Score
	for _, s := range report.Scoreboard(monolithic(inline, detached)) {
		if strings.HasPrefix(s.Figure, "monolithic") {
			mono = s
		}
	}
	if mono.Ours != 401 || !mono.Prediction() || !mono.Within() || !strings.Contains(mono.Figure, "detached") || !strings.Contains(mono.Note, "second's repository settled to 38.6 MiB") {
		t.Errorf("with a detached row: %+v; want the second row's 401 MiB at the end, tallied", mono)
	}
	for _, s := range report.Scoreboard(monolithic(inline)) {
		if strings.HasPrefix(s.Figure, "monolithic") && (s.Ours != 37.6 || s.Prediction() || !strings.Contains(s.Reported, "gc ran inline") || s.Judged() != "reported") {
			t.Errorf("inline alone: %+v; want its 37.6 MiB reported, not tallied", s)
		}
	}
}
