package report

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/results"
	"persistlab/scenario"
)

// A case holds where the run tells the figures apart in the claim's order, fails where apart the
// other way or where several runs cannot tell them apart, and stays open where one run cannot.
func TestComparedCasesFollowWhatTheRunTellsApart(t *testing.T) {
	ranged := func(v, lo, hi float64) Ranked { return Ranked{Value: v, Lo: lo, Hi: hi, Runs: 3} }
	for _, c := range []struct {
		a, b        Ranked
		lowerBetter bool
		want        string
	}{
		{One(10), One(5), false, "x"},
		{One(5), One(10), false, "NOT x"},
		{One(5), One(10), true, "x"},
		{One(10), One(9), false, "? x"}, // within the one-run margin
		{ranged(10, 9.5, 10.5), ranged(9, 8.5, 9.4), false, "x"},
		{ranged(10, 9, 10.5), ranged(9, 8.5, 9.4), false, "NOT x (cannot be told apart)"},
	} {
		if got := Compared(c.a, c.b, c.lowerBetter, "x"); got != c.want {
			t.Errorf("Compared(%+v, %+v, lower better %v) = %q, want %q", c.a, c.b, c.lowerBetter, got, c.want)
		}
	}
}

// A claim is TRUE where every case holds, FALSE where none it can tell does, PARTLY otherwise,
// and not judged where the run can tell no case.
func TestCountedVerdicts(t *testing.T) {
	for _, c := range []struct {
		marks   []string
		verdict string
		why     string
	}{
		{[]string{"a", "b"}, True, "2 of 2: a; b"},
		{[]string{"a", "NOT b"}, Partly, "1 of 2: a; NOT b"},
		{[]string{"NOT a", "NOT b"}, False, "0 of 2"},
		{[]string{"a", "? b"}, Partly, "1 of 2, 1 within the 25% one run cannot tell apart (?): a; ? b"},
		{[]string{"NOT a", "? b"}, False, "0 of 2, 1 within"},
		{[]string{"? a", "? b"}, "", "every case within the 25% one run cannot tell apart: a; b"},
		{nil, "", "no case of it in this run"},
	} {
		got := Counted("claim", c.marks)
		if got.Verdict != c.verdict || !strings.HasPrefix(got.Why, c.why) {
			t.Errorf("Counted(%q) = %s (%s), want %s (%s...)", c.marks, got.Verdict, got.Why, c.verdict, c.why)
		}
	}
	lines := ClaimFindings("009", []Claim{NotJudged("a", "short"), NotJudged("b", "short"), {Text: "c", Verdict: True, Why: "1 vs 2"}, NotJudged("d", "other")})
	want := []string{"seed 009 claims that a; that b: not judged: short", "seed 009 claims c: TRUE (1 vs 2)", "seed 009 claims d: not judged: other"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("claim lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// genericRun is a run of workload over backends at one point, each backend's metric "ops" its value.
func genericRun(workload string, ops map[string]float64, order ...string) *results.Results {
	spec := &scenario.Spec{Name: "g", Workload: scenario.Workload{Type: workload}, Sweep: scenario.Sweep{{Name: "n", Text: "1", Values: []string{"1"}}}, Repeat: 1}
	r := &results.Results{Schema: results.Schema, Status: results.StatusComplete, Scenario: spec}
	for _, b := range order {
		spec.Backends = append(spec.Backends, scenario.BackendSpec{Name: b})
	}
	for _, c := range spec.Plan() {
		r.Cells = append(r.Cells, results.Cell{Cell: c, Metrics: map[string]float64{"ops": ops[c.Backend], "bytes": 1}})
	}
	Summarize(r)
	return r
}

// A workload without an answer of its own is ranked by the first metric its comparison rates,
// in the generic table's numbers and tiers; without one, the answer says what was measured.
func TestTheGenericAnswerRanksByTheFirstCompareMetric(t *testing.T) {
	RegisterPresenter("answer-test", Presenter{Tables: writeGenericTable, Compare: []CompareMetric{{Name: "ops", HigherBetter: true}}})
	r := genericRun("answer-test", map[string]float64{"a": 100, "b": 90, "c": 300}, "a", "b", "c")
	var out bytes.Buffer
	WriteTables(&out, r)
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"Which backend does best on ops?", "ops at n=1: highest first: c 300, then a 100 and b 90 (cannot be told apart)", "c n=1 1 1 300"} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	plain := AnswerOf(genericRun("answer-test-none", map[string]float64{"a": 1}, "a"))
	if plain.Question != "What did each backend measure?" || !strings.Contains(strings.Join(plain.Findings, "\n"), "1 backend(s) over 1 sweep point(s) measured bytes, ops; this workload names no figure as better") {
		t.Errorf("a workload without a presenter: %q %q", plain.Question, plain.Findings)
	}
}

// A merged run recorded the merge: its rerun is the scenario's run. A run from a scenario file
// is told to set an option in that file.
func TestRerunOfAMergedRunAndOptionsInTheRunsFile(t *testing.T) {
	merged := &results.Results{Scenario: &scenario.Spec{Name: "ebs-git"}, Command: []string{"persistlab", "merge", "a.json", "b.json", "--out", "m.json"}}
	if got := RerunCommand(merged); got != "persistlab run ebs-git" {
		t.Errorf("merged: %s", got)
	}
	file := &results.Results{Scenario: &scenario.Spec{Name: "mine"}, Command: []string{"persistlab", "run", "my app.yaml", "--quick"}}
	if got, want := withOption(file, []string{"st1"}, "credit_scale: \"0.1\""), "add credit_scale: \"0.1\" to st1's options in 'my app.yaml' and persistlab run 'my app.yaml' --backend st1"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// A credit_scale that drains the bucket in half the time the run took to draw what it did, as a
// plain decimal of one digit.
func TestCreditScaleToDrain(t *testing.T) {
	for _, c := range []struct {
		drawn float64
		want  string
	}{{0.35, "0.1"}, {0.00016, "0.00008"}, {0.00014, "0.00007"}, {0.000144, "0.00007"}, {1, "0.5"}} {
		if got := trimScale(creditScaleToDrain(BurstUse{Bucket: 1, Drawn: c.drawn})); got != c.want {
			t.Errorf("drew %v of the bucket: credit_scale %s, want %s", c.drawn, got, c.want)
		}
	}
}
