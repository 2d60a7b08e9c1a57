package gitcommit

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"persistlab/lab"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/report/reporttest"
	"persistlab/results"
	"persistlab/scenario"
)

// pace is a row's changes/s over the run and in its first and last windows.
type pace struct{ all, first, last float64 }

// seed004Run is a gitcommit run of files and changes on seed 004's volumes (and this machine's
// disk, and io1 with one repository for all files), each backend at its pace; each repeat's pace
// is spread by spread times the repeat.
func seed004Run(files, changes, repeats int, spread float64, paces map[string]pace) *results.Results {
	mono := reporttest.Volume("io1-mono", "io1", "500GiB", "iops", "25000")
	mono.Params = map[string]string{"layout": "monolithic"}
	backends := []scenario.BackendSpec{{Name: "local"}, reporttest.Volume("io1", "io1", "500GiB", "iops", "25000"),
		reporttest.Volume("gp2", "gp2", "500GiB"), reporttest.Volume("st1", "st1", "500GiB"), reporttest.Volume("sc1", "sc1", "500GiB"), mono}
	r := reporttest.Gitcommit(files, changes, repeats, backends, func(b string, rep int) map[string]float64 {
		p := paces[b]
		all := p.all * (1 + spread*float64(rep))
		disk := 1100.0
		if b == "io1-mono" {
			disk = 40
		}
		return map[string]float64{"changes_per_s": all, "total_s": float64(changes) / all, "first_window_per_s": p.first, "last_window_per_s": p.last,
			"min_window_per_s": min(p.first, p.last), "disk_mib": disk, "as_files_mib": 72}
	})
	r.Scenario.Seed = "004"
	return r
}

var seed004Paces = map[string]pace{"local": {155.7, 124.5, 174.9}, "io1": {103.8, 80, 180}, "gp2": {100.7, 92.7, 170},
	"st1": {10.0, 63.4, 6.4}, "sc1": {2.3, 54.2, 1.8}, "io1-mono": {45.4, 93.5, 35.1}}

func answerText(r *results.Results) string {
	return strings.Join(strings.Fields(strings.Join(append(append(report.AnswerOf(r).Findings, report.AnswerOf(r).ClaimLines()...), report.AnswerOf(r).Caveats...), "\n")), " ")
}

// The answer gives each volume's changes/s and price as the table prints them, ranks the
// volumes only as far as one run each tells them apart, and names the cheapest of the fastest.
func TestTheAnswerRanksVolumesByPaceWithTheirPrice(t *testing.T) {
	r := seed004Run(5000, 20000, 1, 0, seed004Paces)
	report.Summarize(r)
	var out bytes.Buffer
	report.WriteTables(&out, r)
	answer, tables, ok := strings.Cut(out.String(), "\ngitcommit: ")
	if !ok {
		t.Fatalf("no table after the answer:\n%s", out.String())
	}
	answer = strings.Join(strings.Fields(answer), " ")
	for _, b := range []string{"io1", "gp2", "st1", "sc1"} {
		a := r.AggregatesOf(b)[0]
		m, _ := report.VolumeModel(r, b)
		want := fmt.Sprintf("%s %.1f ($%.2f/month)", b, a.Median["changes_per_s"], m.MonthlyUSD)
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
		for _, cell := range []string{fmt.Sprintf(" %.1f ", a.Median["changes_per_s"]), fmt.Sprintf(" %.2f", m.MonthlyUSD)} {
			if !strings.Contains(tables, b) || !strings.Contains(tables, cell) {
				t.Errorf("the table lacks %s's %q", b, cell)
			}
		}
	}
	for _, want := range []string{
		"fastest first: io1 and gp2 (cannot be told apart), then st1, then sc1",
		"of the fastest, gp2 costs least: $50.00/month against io1's $1687.50",
		"without a volume model, for reference: local 155.7",
		"changes/s with one repository for all files: io1-mono 45.4 ($1687.50/month)",
	} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
	}
}

// With repeats, io1 and gp2 are told apart exactly when their runs' ranges do not overlap.
func TestRepeatsTellVolumesApartByTheirRanges(t *testing.T) {
	paces := map[string]pace{"io1": {103.8, 80, 180}, "gp2": {100.7, 92.7, 170}, "st1": {10, 63, 6}, "sc1": {2.3, 54, 1.8}, "local": {150, 120, 170}, "io1-mono": {45, 93, 35}}
	apart := seed004Run(5000, 20000, 3, 0.005, paces) // io1 104.3-105.4, gp2 101.2-102.2
	report.Summarize(apart)
	if text := answerText(apart); !strings.Contains(text, "fastest first: io1, then gp2, then st1") || !strings.Contains(text, "io1 104.8 (104.3-105.4 over 3 runs)") {
		t.Errorf("ranges that do not overlap: want io1 ranked above gp2, with its range:\n%s", text)
	}
	tied := seed004Run(5000, 20000, 3, 0.05, paces) // io1 109.0-119.4, gp2 105.7-115.8
	report.Summarize(tied)
	if text := answerText(tied); !strings.Contains(text, "fastest first: io1 and gp2 (cannot be told apart)") {
		t.Errorf("overlapping ranges: want a tie:\n%s", text)
	}
}

// Seed 004's claims are judged from the figures, and their verdicts flip when the figures do.
func TestSeed004ClaimsFlipWithTheFigures(t *testing.T) {
	r := seed004Run(5000, 20000, 1, 0, seed004Paces)
	report.Summarize(r)
	text := answerText(r)
	for _, want := range []string{
		"seed 004 claims SSD volumes commit faster as commits grow: TRUE (2 of 2: io1 80.0 to 180.0 changes/s; gp2 92.7 to 170.0",
		"seed 004 claims HDD volumes commit slower as commits grow: TRUE (2 of 2: st1 63.4 to 6.4",
		"seed 004 claims st1 levels off at a floor near 20 commits/s: FALSE (0 of 2: NOT levels off: slowest window 6.4, last 6.4; NOT near 20: 6.4)",
		"seed 004 claims sc1 takes a little under 4x as long as st1: TRUE (4.35x: 8695.7 vs 2000.0 s)",
		"seed 004 claims SSD volumes commit far faster than st1: TRUE (2 of 2: io1 103.8 vs st1 10.0 changes/s; gp2 100.7 vs st1 10.0",
		"seed 004 claims a repository per file commits faster than one for all files: TRUE (io1 103.8 vs io1-mono 45.4 changes/s)",
		"seed 004 claims a repository per file takes more disk than one for all files: TRUE (1 of 1: 1100 vs 40 MiB)",
		"seed 004 claims the changes kept as plain files take less disk than git: PARTLY (1 of 2: 72 MiB of plain files vs 1100 MiB",
		"seed 004 claims the HDD slowdown is not their burst credits running out: not judged: no HDD volume's credit balance was sampled",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	flipped := map[string]pace{"io1": {10, 180, 80}, "gp2": {9, 170, 92}, "st1": {100, 6.4, 63.4}, "sc1": {150, 20, 25}, "local": {150, 120, 170}, "io1-mono": {150, 35, 93}}
	f := seed004Run(5000, 20000, 1, 0, flipped)
	report.Summarize(f)
	text = answerText(f)
	for _, want := range []string{
		"seed 004 claims SSD volumes commit faster as commits grow: FALSE (0 of 2",
		"seed 004 claims HDD volumes commit slower as commits grow: FALSE (0 of 2",
		"seed 004 claims sc1 takes a little under 4x as long as st1: FALSE (0.67x",
		"seed 004 claims SSD volumes commit far faster than st1: FALSE (0 of 2",
		"seed 004 claims a repository per file commits faster than one for all files: FALSE",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("flipped figures: want %q in:\n%s", want, text)
		}
	}
}

// A plan smaller than the seed's leaves the claims of pace unjudged and picks nothing on price
// where an HDD volume ties with SSD, saying which command settles it.
func TestASmallPlanDoesNotRankHDDAsSettled(t *testing.T) {
	quick := map[string]pace{"local": {150, 120, 170}, "io1": {79, 70, 80}, "gp2": {76, 72, 79}, "st1": {72, 70, 74}, "sc1": {34, 48, 7}, "io1-mono": {60, 70, 50}}
	r := seed004Run(500, 2000, 1, 0, quick)
	r.Scenario.QuickRun = true
	r.Command = []string{"persistlab", "run", "ebs-git", "--quick"}
	report.Summarize(r)
	text := answerText(r)
	for _, want := range []string{
		"fastest first: io1, gp2 and st1 (cannot be told apart), then sc1; st1 among the fastest only in a plan this short",
		"that HDD volumes commit slower as commits grow;",
		"not judged: 2000 changes on 500 files, under the seed's 20000 on 5000",
		"the full plan settles it: persistlab run ebs-git",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "costs least") {
		t.Errorf("a short plan picks a volume on price:\n%s", text)
	}
}

// withCredits gives backend b's cells a sampled credit balance, from its bucket, and billed units
// at unitsPerS over seconds.
func withCredits(r *results.Results, b string, seconds, unitsPerS float64, balance func(bucket float64) []measure.Point) {
	m, _ := report.VolumeModel(r, b)
	key, bucket := lab.VolumeCreditMiB, m.CreditMiB
	if m.CreditIOs > 0 {
		key, bucket = lab.VolumeCreditIOs, m.CreditIOs
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Backend != b {
			continue
		}
		c.Series = map[string][]measure.Point{
			lab.StatsSeries(key):                  balance(bucket),
			lab.StatsSeries(lab.VolumeReadUnits):  reporttest.Line(0, 0, seconds, 20),
			lab.StatsSeries(lab.VolumeWriteUnits): reporttest.Line(0, unitsPerS*seconds, seconds, 20),
		}
	}
}

// spending is a balance spent evenly from full to left (a share of the bucket) over seconds.
func spending(left, seconds float64) func(float64) []measure.Point {
	return func(bucket float64) []measure.Point { return reporttest.Line(bucket, left*bucket, seconds, 20) }
}

// A run too short to drain a burst bucket says so beside the verdicts that rest on it, with how
// much slower the volume is drained and how to measure it; a run that drained it does not.
func TestTheBurstCaveatComesOnlyWhereTheBucketLasted(t *testing.T) {
	short := seed004Run(5000, 20000, 1, 0, seed004Paces)
	short.Scenario.Name, short.Command = "ebs-git", []string{"persistlab", "run", "ebs-git"}
	withCredits(short, "st1", 2000, 108, spending(0.65, 2000)) // 35% of its bucket: 4.6x what its 19.5 MiB/s baseline gives in the run
	withCredits(short, "gp2", 200, 400, spending(0.9999, 200)) // 540 I/O credits: under 1% of its baseline's 300,000 in the run
	report.Summarize(short)
	text := answerText(short)
	for _, want := range []string{
		"st1 never used up its burst credits (at most 35% of its bucket drawn, in a run of 33 min; a full bucket lasts 95 min at that pace): its figures are its burst's; drained, it is held to its 19.5 MiB/s baseline, which this run passed at times",
		"to measure st1 drained: persistlab scenarios show ebs-git > ebs-git.yaml, then add credit_scale: \"0.1\" to st1's options in ebs-git.yaml and persistlab run ebs-git.yaml --backend st1",
		"fastest first: io1 and gp2 (cannot be told apart), then st1, then sc1; of the fastest, gp2 costs least: $50.00/month against io1's $1687.50; st1 on burst credits throughout: see below",
		"SSD volumes commit far faster than st1: TRUE (2 of 2: io1 103.8 vs st1 10.0 changes/s; gp2 100.7 vs st1 10.0 changes/s; st1 on burst credits throughout: see below)",
		"the HDD slowdown is not their burst credits running out: TRUE (1 of 1: st1 kept 65% of its credits)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	var out bytes.Buffer
	report.WriteTables(&out, short)
	if table := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(table, "st1 5.12e+05 MiB 19.5 MiB/s 1 0 65% 35% 33 min 108.0 95 min") {
		t.Errorf("the burst table lacks the caveat's figures:\n%s", out.String())
	}
	if strings.Contains(text, "gp2 never used up") {
		t.Errorf("gp2 spent under its baseline, yet its burst is a caveat:\n%s", text)
	}
	long := seed004Run(5000, 20000, 1, 0, seed004Paces)
	withCredits(long, "st1", 2000, 108, func(bucket float64) []measure.Point { // dry from 1000 s on
		return append(reporttest.Line(bucket, 0, 1000, 10), measure.Point{T: 2000, V: 0})
	})
	report.Summarize(long)
	text = answerText(long)
	if strings.Contains(text, "st1 never used up") || strings.Contains(text, "credit_scale") || strings.Contains(text, "on burst credits throughout") {
		t.Errorf("a run that drained st1's bucket still says it lasted:\n%s", text)
	}
	for _, want := range []string{"st1 ran out of burst credits 1000 s into a run of 2000 s", "the HDD slowdown is not their burst credits running out: FALSE (0 of 1: NOT st1 ran dry 1000 s into 2000 s)"} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
}
