package advise

import (
	"math"
	"strings"
	"testing"
	"time"

	"persistlab/lab"
	"persistlab/lab/volume"
	"persistlab/results"
	"persistlab/scenario"
)

var gitMetrics = map[string]string{"changes_per_s": "changes/s", "change_p95_ms": "ms", "change_p99_ms": "ms", "change_p50_ms": "ms"}

func gitApp() App {
	return App{Name: "git", Kind: KindChanges, Crashable: true, Metrics: gitMetrics,
		Workload: scenario.Workload{Type: "gitcommit", Params: map[string]string{"files": "5000"}}}
}

func c4() Platform { p, _ := ParsePlatform("c4.large", 0, 0); return p }

func byName(cands []Candidate) map[string]Candidate {
	out := map[string]Candidate{}
	for _, c := range cands {
		out[c.Name] = c
	}
	return out
}

// An HDD volume's small writes each cost a unit of 1 MiB of its throughput: st1 at 125 GiB
// sustains 4.9 of them a second, not its 500 IOPS.
func TestSustainedIOPSOfHDDIsItsThroughputInUnits(t *testing.T) {
	s := volume.Spec{Type: "st1", SizeBytes: 125 << 30}
	if got, want := sustainedIOPS(s), volume.ST1BaseMiBpsPerTiB*125/1024; math.Abs(got-want) > 1e-9 {
		t.Fatalf("st1 125 GiB sustains %g units/s, want %g", got, want)
	}
	s.Instance = "c4.large"
	s.SizeBytes = 16 << 40
	if got := sustainedIOPS(s); got > 62.5e6/(1<<20)+1e-9 {
		t.Fatalf("st1 16 TiB on a c4.large sustains %g units/s, above the instance's 62.5 MB/s", got)
	}
	if got := SizeVolume("st1", 1<<30, 1); got.SizeBytes < int64(volume.HDDMinGiB)<<30 {
		t.Fatalf("st1 sized to %d GiB, below its smallest size", got.SizeBytes>>30)
	}
}

func TestGitCandidatesOnC4Large(t *testing.T) {
	cands := Candidates(gitApp(), c4(), 20, 1<<30, 20)
	got := byName(cands)
	if got["local"].Excluded == "" || got["gcsfuse"].Excluded == "" || got["litestream"].Excluded == "" {
		t.Fatalf("local, gcsfuse and litestream should be excluded on a c4.large for git: %+v", cands)
	}
	var runnable, dominated []string
	for _, c := range cands {
		switch {
		case c.runnable():
			runnable = append(runnable, c.Name)
		case c.Dominated != "":
			dominated = append(dominated, c.Name)
		}
	}
	if len(runnable) != 8 || len(dominated) != 4 {
		t.Fatalf("runnable %v, dominated %v: want gp3, io2, st1, sc1 and gp2, io1, each with and without fsync", runnable, dominated)
	}
	for _, c := range cands {
		if c.Backend != "volume" || c.Excluded != "" {
			continue
		}
		credits := c.Volume.Limits().CreditIOs > 0 || c.Volume.Limits().CreditMiB > 0
		if credits != (c.Options["credit_scale"] == DryCreditScale) {
			t.Errorf("%s: credit_scale %q with credits %v: a volume with a burst runs dry", c.Name, c.Options["credit_scale"], credits)
		}
		if (strings.HasSuffix(c.Name, "-fsync")) != (c.Params["fsync"] == "committed" && c.Params["init_fsync"] == "true") {
			t.Errorf("%s: params %v", c.Name, c.Params)
		}
		// On a c4.large no HDD size sustains twice 20 changes/s at 8 MiB units each: the smallest
		// size is measured, saying so.
		if hdd := c.Volume.Limits().HDD; hdd && (c.Sizing == "" || c.Volume.SizeBytes != int64(volume.HDDMinGiB)<<30) {
			t.Errorf("%s: %d GiB, sizing %q: want its smallest size and why", c.Name, c.Volume.SizeBytes>>30, c.Sizing)
		}
		// io2 and io1 sized for fsync's 10 units per change cost $27.25, over the budget of $20.
		if !c.Volume.Limits().HDD && c.Sizing != "" && !(strings.HasSuffix(c.Name, "-fsync") && strings.Contains(c.Sizing, "over the budget")) {
			t.Errorf("%s: sizing note %q on an SSD that sustains the rate within the budget", c.Name, c.Sizing)
		}
	}
	// A budget the sustaining size breaks: the smallest size, saying the price of the other.
	spec, note := sizeGitVolume("io2", "c4.large", 1<<30, 3000, nil, 5)
	if spec.ProvisionedIOPS != volume.IOMinIOPS || !strings.Contains(note, "over the budget") {
		t.Fatalf("io2 at 3,000 units/s under $5: %+v, %q", spec, note)
	}
}

func TestGitPlanRunsCrashesOncePerFsyncSettingFirst(t *testing.T) {
	reqs := []Requirement{mustKeepUp(t, 20), mustRequireGit(t, "lost_acked == 0"), mustRequireGit(t, "usd_per_month < 20")}
	cands := Candidates(gitApp(), c4(), 20, 1<<30, 20)
	p, err := NewPlan(gitApp(), c4(), 20, 1<<30, reqs, 15*time.Minute, DefaultCrashes, 0, cands)
	if err != nil {
		t.Fatal(err)
	}
	var reps []string
	for _, c := range p.CrashRuns() {
		reps = append(reps, c.Name)
	}
	if len(reps) != 2 || !strings.HasPrefix(reps[0], "gp3-") || !strings.HasPrefix(reps[1], "gp3-") {
		t.Fatalf("crash runs on %v: want the two gp3 fsync settings", reps)
	}
	for _, c := range p.Runnable() {
		kinds := p.KindsOf(c)
		if (c.CrashFrom == "") != (len(kinds) == 2 && kinds[0] == "crash") {
			t.Errorf("%s (crash from %q) runs %v", c.Name, c.CrashFrom, kinds)
		}
		if c.CrashFrom != "" && !strings.HasSuffix(c.Name, strings.TrimPrefix(c.CrashFrom, "gp3-10g")) {
			t.Errorf("%s borrows the crash runs of %s, another fsync setting", c.Name, c.CrashFrom)
		}
	}
	if p.Duration > GitCellMax() || p.Duration.Seconds()*20 < MinPaceChanges || p.Estimate() > p.Budget {
		t.Fatalf("cells of %s (max %s), estimate %s of %s", p.Duration, GitCellMax(), p.Estimate(), p.Budget)
	}
	s := p.spec(p.Runnable()[0], "steady")
	if s.Workload.Params["prefill"] != "touched" || s.Workload.Params["time_limit"] != p.Duration.String() || s.Duration != 0 || s.Sweep[0].Text != "20,40" {
		t.Fatalf("steady spec: %+v %+v", s.Workload.Params, s.Sweep)
	}
	c := p.spec(p.Runnable()[0], "crash")
	if c.Crash == nil || c.Workload.Params["prefill"] != "none" || c.Crash.After.To > mustDuration(t, c.Workload.Params["time_limit"]) {
		t.Fatalf("crash spec: %+v %+v", c.Workload.Params, c.Crash)
	}
	// A p95 needs 200 changes, more than a cell shorter than the write-back expiry holds at 5/s.
	slow := []Requirement{mustKeepUp(t, 5), mustRequireGit(t, "change_p95 < 1s")}
	if _, err := NewPlan(gitApp(), c4(), 5, 1<<30, slow, time.Hour, DefaultCrashes, 0, Candidates(gitApp(), c4(), 5, 1<<30, 0)); DirtyExpire() < 45*time.Second && (err == nil || !strings.Contains(err.Error(), "--rate")) {
		t.Fatalf("p95 at 5 changes/s: %v", err)
	}
	// Too small a budget names --time, before anything runs.
	if _, err := NewPlan(gitApp(), c4(), 20, 1<<30, reqs, 2*time.Minute, DefaultCrashes, 0, Candidates(gitApp(), c4(), 20, 1<<30, 20)); err == nil || !strings.Contains(err.Error(), "--time") {
		t.Fatalf("2 minutes for 8 candidates: %v", err)
	}
}

func TestGitFiguresJudgeTheSustainedPace(t *testing.T) {
	reqs := []Requirement{mustKeepUp(t, 20), mustRequireGit(t, "change_p95 < 300ms"), mustRequireGit(t, "lost_acked == 0")}
	p := &Plan{App: gitApp(), Rate: 20, Requirements: reqs, Duration: 20 * time.Second, Crashes: 3}
	// The page cache took the cell at the rate; writing it back was cut off at twice the cell.
	behind := map[string]float64{"changes_per_s": 20, "sustained_per_s": 10, "writeback_s": 40, "change_p95_ms": 40, "changes": 400}
	notes := p.gitFigures(behind, 20)
	if behind[PaceMetric] != 10 || behind["achieved_per_s"] != 20 {
		t.Fatalf("pace %v", behind)
	}
	if _, ok := behind["change_p95_ms"]; ok || len(notes) != 2 || !strings.Contains(notes[0], "upper bound") || !strings.Contains(notes[1], "write-back") {
		t.Fatalf("a latency judged while the page cache absorbed writes: %v %v", behind, notes)
	}
	f := Figures{AtRate: behind, Crash: map[string]float64{MetricLostAcked: 0}, Crashes: 3, Priced: true}
	v := Judge(Candidate{Name: "sc1"}, f, reqs)
	if v.Meets || len(v.Fails) != 1 || v.Fails[0].Requirement != reqs[0].Text || len(v.Unjudged) != 1 {
		t.Fatalf("verdict %+v", v)
	}
	// Too few changes for p95: cannot tell.
	few := map[string]float64{"changes_per_s": 15, "sustained_per_s": 15, "writeback_s": 1, "change_p95_ms": 40, "change_p50_ms": 10, "changes": 150}
	notes = p.gitFigures(few, 20)
	if _, ok := few["change_p95_ms"]; ok || few["change_p50_ms"] != 10 || len(notes) != 1 {
		t.Fatalf("150 changes judged a p95: %v %v", few, notes)
	}
	// A crash requirement failed prunes the steady cells.
	if !p.FailsCrash(Figures{Crash: map[string]float64{MetricLostAcked: 4}, Crashes: 3}) || p.FailsCrash(Figures{Crash: map[string]float64{MetricLostAcked: 0}, Crashes: 3}) {
		t.Fatal("FailsCrash")
	}
}

func TestQuantileOf(t *testing.T) {
	for metric, want := range map[string]float64{"change_p95_ms": 0.95, "change_p99_ms": 0.99, "p99.9_ms": 0.999, "change_p50_ms": 0.5} {
		if got, ok := quantileOf(metric); !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("quantileOf(%s) = %g, %v; want %g", metric, got, ok, want)
		}
	}
	for _, metric := range []string{"changes_per_s", "writeback_s", "p95"} {
		if _, ok := quantileOf(metric); ok {
			t.Errorf("quantileOf(%s) found a quantile", metric)
		}
	}
}

func mustKeepUp(t *testing.T, rate float64) Requirement {
	t.Helper()
	r, err := KeepsUp(rate, gitMetrics)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustRequireGit(t *testing.T, text string) Requirement {
	t.Helper()
	r, err := ParseRequirement(text, gitMetrics)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestGitVolumeNotesSayUnitsAndTheBurstTheRowIsAfter(t *testing.T) {
	p := &Plan{App: gitApp(), Rate: 20, Duration: 20 * time.Second}
	cell := func(name, rate string, units, changes float64) results.Cell {
		c := results.Cell{Metrics: map[string]float64{"changes": changes}, BackendStats: map[string]float64{lab.VolumeWriteUnits: units}}
		c.Backend, c.Resolved = name, map[string]string{"rate": rate}
		return c
	}
	st1 := volume.Spec{Type: "st1", SizeBytes: 125 << 30, Instance: "c4.large"}
	res := &results.Results{Cells: []results.Cell{cell("st1-125g-fsync", "20", 8*400, 400), cell("st1-125g-fsync", "40", 1e6, 10)}}
	notes := p.gitVolumeNotes(Candidate{Name: "st1-125g-fsync", Volume: &st1}, res)
	// 8 units per change at 20/s is 160 MiB/s, held to st1's burst of 30.5 MiB/s at 125 GiB; the
	// bucket of 125 GiB drains at that less the 4.9 MiB/s baseline: 1.4 hours.
	l := st1.Limits()
	hours := l.CreditMiB / (l.BurstMiBps - l.BaseMiBps) / 3600
	if len(notes) != 2 || !strings.Contains(notes[0], "8.0 billed units per change") || !strings.Contains(notes[1], hoursText(hours)) || !strings.Contains(notes[1], "not measured") {
		t.Fatalf("notes %q (want %s)", notes, hoursText(hours))
	}
	gp2 := volume.Spec{Type: "gp2", SizeBytes: 100 << 30}
	res = &results.Results{Cells: []results.Cell{cell("gp2-100g-git", "20", 4*400, 400)}}
	if notes := p.gitVolumeNotes(Candidate{Name: "gp2-100g-git", Volume: &gp2}, res); len(notes) != 2 || !strings.Contains(notes[1], "never drains") {
		t.Fatalf("gp2 at 80 units/s under its 300 IOPS baseline: %q", notes)
	}
}
