package counter

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/report/reporttest"
	"persistlab/results"
	"persistlab/scenario"
)

// slopeRun is a counter run over backends, each cell's avg latency its backend's slope times vus
// (times 1 + jitter*repeat, so repeats spread), at vus 2 and 4.
func slopeRun(repeats int, jitter float64, slopes map[string]float64, order ...string) *results.Results {
	spec := reporttest.CounterSpec(order...)
	spec.Repeat = repeats
	r := &results.Results{Schema: results.Schema, Status: results.StatusComplete, Scenario: spec, Command: []string{"/x/persistlab", "run", "t", "--quick", "--out", "r.json"}}
	for _, b := range order {
		for rep := 1; rep <= repeats; rep++ {
			for _, vus := range []int{2, 4} {
				avg := slopes[b] * float64(vus) * (1 + jitter*float64(rep))
				r.Cells = append(r.Cells, reporttest.Cell(b, vus, rep, avg, avg, 100, 100))
			}
		}
	}
	report.Summarize(r)
	return r
}

// The answer opens the report, gives every backend's slope as the table below fits it, and ranks
// only what the run can tell apart: one run each, within a quarter is a tie.
func TestTheAnswerRanksWhatOneRunCanTellApart(t *testing.T) {
	r := slopeRun(1, 0, map[string]float64{"gcsfuse": 8, "litestream": 4, "local": 4.4}, "gcsfuse", "litestream", "local")
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := strings.Join(strings.Fields(out.String()), " ") // the answer wraps its lines
	answer, tables, found := strings.Cut(text, "backend gcsfuse")
	if !found || !strings.Contains(answer, "ANSWER") {
		t.Fatalf("the answer does not come before the tables:\n%s", text)
	}
	for _, f := range r.Fits {
		if want := fmt.Sprintf("%s %.2f ms", f.Backend, f.AvgMsPerVU); !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q (the table's slope):\n%s", want, answer)
		}
		if want := fmt.Sprintf("%.2f ms/VU", f.AvgMsPerVU); !strings.Contains(tables, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	for _, want := range []string{"litestream and local (cannot be told apart) answer fastest", "gcsfuse 2.0x slower per VU", "one run per row"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
	}
}

// With repeats, two backends are told apart exactly when their slopes' ranges over the runs do
// not overlap, however close their medians.
func TestRepeatsTellApartByTheirRanges(t *testing.T) {
	apart := report.AnswerOf(slopeRun(3, 0.01, map[string]float64{"a": 4, "b": 4.2}, "a", "b"))
	if text := strings.Join(apart.Findings, "\n"); !strings.Contains(text, "a answers fastest") || !strings.Contains(text, "b 1.1x slower") {
		t.Errorf("ranges 4.04-4.12 and 4.24-4.33 do not overlap: want a ranked first:\n%s", text)
	}
	tied := report.AnswerOf(slopeRun(3, 0.2, map[string]float64{"a": 4, "b": 4.2}, "a", "b"))
	if text := strings.Join(tied.Findings, "\n"); !strings.Contains(text, "cannot tell a and b apart") {
		t.Errorf("ranges 4.8-6.4 and 5.0-6.7 overlap: want a tie:\n%s", text)
	}
}

// A quick run says it cannot settle close calls and gives the command that would, without what
// made it short; the report names the scoreboard the lab's fidelity, not a verdict.
func TestAQuickRunSaysSoWithTheCommandThatSettlesIt(t *testing.T) {
	r := slopeRun(1, 0, map[string]float64{"gcsfuse": 8, "litestream": 4}, "gcsfuse", "litestream")
	r.Scenario.QuickRun = true
	a := report.AnswerOf(r)
	caveats := strings.Join(a.Caveats, "\n")
	if !strings.Contains(caveats, "a quick run") || !strings.Contains(caveats, "the full plan: persistlab run t\n") {
		t.Errorf("caveats lack the quick run and its full command:\n%s", caveats)
	}
	if strings.Contains(caveats, "--quick") || strings.Contains(caveats, "r.json") {
		t.Errorf("the command that settles it keeps what made the run short: %s", caveats)
	}
}

// Crash runs and several instances on one database are answered in the run's own figures.
func TestCrashesAndInstancesAreAnswered(t *testing.T) {
	r := &results.Results{Schema: results.Schema, Scenario: reporttest.CounterSpec("local", "litestream")}
	vus := map[string]string{"vus": "2"}
	for i := 1; i <= 3; i++ {
		r.Crashes = append(r.Crashes,
			results.CrashRun{Cell: scenario.Cell{Backend: "local", Params: vus, Repeat: i}, MaxAcked: 100, Lost: 100},
			results.CrashRun{Cell: scenario.Cell{Backend: "litestream", Params: vus, Repeat: i}, MaxAcked: 100, Lost: 10 - int64(i), LostReachMs: 900})
	}
	report.Summarize(r)
	text := strings.Join(report.AnswerOf(r).Findings, "\n")
	for _, want := range []string{"local lost every acknowledged write in all 3", "litestream lost up to 9 (median 8) in 3 crash(es), written up to 900 ms before the kill"} {
		if !strings.Contains(text, want) {
			t.Errorf("crash answer lacks %q:\n%s", want, text)
		}
	}
	shared := slopeRun(1, 0, map[string]float64{"gcsfuse": 8}, "gcsfuse")
	for i := range shared.Cells {
		shared.Cells[i].Metrics["instances"] = 2
		shared.Cells[i].Metrics["lost_updates"] = 5
	}
	report.Summarize(shared)
	a := report.AnswerOf(shared)
	if !strings.Contains(a.Question, "several instances") || !strings.Contains(strings.Join(a.Findings, "\n"), "gcsfuse shared by 2 instances at once: 2 of 2 runs lost updates") {
		t.Errorf("instances answer: %q\n%s", a.Question, strings.Join(a.Findings, "\n"))
	}
}

// Seed 000's claims are judged from the slopes and rows the tables show, and flip with them: its
// headline is TRUE about 1.7x, PARTLY faster by another factor, FALSE the other way round, and
// not judged within what one run can tell apart; several runs whose ranges overlap make it FALSE.
func TestSeed000ClaimsFlipWithTheFigures(t *testing.T) {
	findings := func(repeats int, jitter float64, slopes map[string]float64) string {
		var order []string
		for _, b := range []string{"gcsfuse", "litestream", "local"} {
			if slopes[b] > 0 {
				order = append(order, b)
			}
		}
		r := slopeRun(repeats, jitter, slopes, order...)
		r.Scenario.Seed = "000"
		report.Summarize(r)
		a := report.AnswerOf(r)
		return strings.Join(append(a.Findings, a.ClaimLines()...), "\n")
	}
	const headline = "seed 000 claims Litestream answers writes about 1.7x faster than gcsfuse as load grows: "
	const lower = "seed 000 claims Litestream's average latency is lower at every load: "
	for _, c := range []struct {
		repeats int
		jitter  float64
		slopes  map[string]float64
		want    []string
	}{
		{1, 0, map[string]float64{"gcsfuse": 8.19, "litestream": 4.77}, []string{headline + "TRUE (1.72x: 8.19 vs 4.77 ms per VU)",
			lower + "TRUE (2 of 2: vus=2 16.38 vs 9.54 ms; vus=4 32.76 vs 19.08 ms)"}},
		{1, 0, map[string]float64{"gcsfuse": 12, "litestream": 4}, []string{headline + "PARTLY (3.00x: 12.00 vs 4.00 ms per VU: faster, not by about 1.7x)"}},
		{1, 0, map[string]float64{"gcsfuse": 4, "litestream": 8}, []string{headline + "FALSE (0.50x", lower + "FALSE (0 of 2"}},
		{1, 0, map[string]float64{"gcsfuse": 5, "litestream": 4.5}, []string{headline + "not judged: 1.11x: 5.00 vs 4.50 ms per VU, within the 25% one run each cannot tell apart",
			lower + "not judged: every case within the 25% one run cannot tell apart"}},
		{3, 0.2, map[string]float64{"gcsfuse": 4.2, "litestream": 4}, []string{headline + "FALSE (1.05x: 5.88 vs 5.60 ms per VU: their ranges over 3 and 3 runs overlap"}},
	} {
		got := findings(c.repeats, c.jitter, c.slopes)
		for _, want := range c.want {
			if !strings.Contains(got, want) {
				t.Errorf("slopes %v over %d run(s): want %q in:\n%s", c.slopes, c.repeats, want, got)
			}
		}
	}
	if got := findings(1, 0, map[string]float64{"gcsfuse": 8, "local": 4}); !strings.Contains(got, "seed 000 claims that Litestream answers writes about 1.7x faster") || !strings.HasSuffix(got, "not judged: the run has no litestream") {
		t.Errorf("a run without Litestream: want its claims not judged:\n%s", got)
	}
}

// The page opens with the run's answer, once: above the charts, and not again among the tables.
func TestThePageOpensWithTheAnswer(t *testing.T) {
	r := slopeRun(1, 0, map[string]float64{"gcsfuse": 8, "litestream": 4}, "gcsfuse", "litestream")
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	question, charts := strings.Index(html, template.HTMLEscapeString(report.AnswerOf(r).Question)), strings.Index(html, `<div id="charts">`)
	if question < 0 || charts < 0 || question > charts {
		t.Errorf("question at %d, charts at %d", question, charts)
	}
	if strings.Count(html, "answer fastest as load grows")+strings.Count(html, "answers fastest as load grows") != 1 || strings.Contains(html, "ANSWER") {
		t.Errorf("the answer is not on the page exactly once")
	}
}

// The answer's bucket figures are the bucket table's pooled ones: the month's price and the bytes
// written per 1,000 requests, for each backend, and a backend too thin to price says so.
func TestTheAnswersCostIsTheTablesPooledCost(t *testing.T) {
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("gcsfuse", "litestream"), Cells: []results.Cell{
		bucketCell("gcsfuse", "2", 5, 500, 0, 0), bucketCell("gcsfuse", "4", 5, 600, 3, 0),
		bucketCell("litestream", "2", 30, 3000, 30, 0), bucketCell("litestream", "4", 5, 400, 4, 0),
	}}
	r.Cells[0].BackendStats["bucket_bytes_in"] = 4 << 20
	r.Cells[2].BackendStats["bucket_bytes_in"] = 34 << 10
	r.Cells[3].BackendStats["bucket_bytes_in"] = 0
	report.Summarize(r)
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := strings.Join(strings.Fields(out.String()), " ")
	answer, tables, _ := strings.Cut(text, "backend gcsfuse")
	// litestream: 34 uploads over 35 s, $12.59 a month; 34 KiB over 3,400 requests, 10 KiB per
	// 1,000; gcsfuse: 4 MiB over 1,100 requests, 3.64 MiB per 1,000.
	for _, want := range []string{"litestream $12.59/month", "gcsfuse: too few bucket operations in this run to price", "gcsfuse 3.64 MiB and litestream 10 KiB"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
	}
	for _, want := range []string{"$12.59/month GCS; 10 KiB up per 1,000 app requests", "too few to price even pooled (under 10); run longer; 3.64 MiB up per 1,000 app requests"} {
		if !strings.Contains(tables, want) {
			t.Errorf("the table lacks %q:\n%s", want, tables)
		}
	}
}

// The brief view gives the seed's claims as their tally; the tables' view gives each claim.
func TestTheBriefViewTalliesTheSeedsClaims(t *testing.T) {
	r := slopeRun(1, 0, map[string]float64{"gcsfuse": 8, "litestream": 4}, "gcsfuse", "litestream")
	r.Scenario.Seed = "000"
	a := report.AnswerOf(r)
	if len(a.Claims) == 0 {
		t.Fatal("seed 000's run judges no claim")
	}
	var brief, tables bytes.Buffer
	report.WriteView(&brief, r, report.ViewBrief)
	report.WriteView(&tables, r, report.ViewTables)
	flat := func(b bytes.Buffer) string { return strings.Join(strings.Fields(b.String()), " ") }
	first := a.ClaimLines()[0]
	if !strings.Contains(flat(brief), fmt.Sprintf("seed 000's %d claims, judged by this run:", len(a.Claims))) || strings.Contains(flat(brief), first) {
		t.Errorf("brief:\n%s", brief.String())
	}
	if !strings.Contains(flat(tables), first) || strings.Contains(flat(tables), "judged by this run:") {
		t.Errorf("tables view lacks the claim %q:\n%s", first, tables.String())
	}
}
