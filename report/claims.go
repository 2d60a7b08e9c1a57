package report

import (
	"fmt"
	"math"
	"strings"

	"persistlab/results"
)

// The verdicts a seed's claim gets from a run's figures, as seed 002's hypotheses are answered.
const (
	True   = "TRUE"
	False  = "FALSE"
	Partly = "PARTLY"
)

// Claim is one thing a seed's blog concludes, judged from the run's figures: a verdict with the
// figures it rests on, or no verdict and why the run cannot judge it.
type Claim struct {
	Text    string `json:"text"`              // the claim, short, in the blog's sense
	Verdict string `json:"verdict,omitempty"` // True, False, Partly; "" when not judged
	Why     string `json:"why,omitempty"`     // the figures, or why it is not judged
}

// NotJudged is a claim the run cannot judge, and why.
func NotJudged(text, why string) Claim { return Claim{Text: text, Why: why} }

// Counted judges a claim that holds or not case by case, each mark "NOT ..." where it fails and
// "? ..." where the run cannot tell (Compared): TRUE where it holds in every case, FALSE where it
// holds in none it can tell, PARTLY otherwise; not judged where the run can tell no case.
func Counted(text string, marks []string) Claim {
	if len(marks) == 0 {
		return NotJudged(text, "no case of it in this run")
	}
	held, open := 0, 0
	for _, m := range marks {
		switch {
		case strings.HasPrefix(m, openMark):
			open++
		case !strings.HasPrefix(m, "NOT "):
			held++
		}
	}
	failed := len(marks) - held - open
	why := fmt.Sprintf("%d of %d", held, len(marks))
	if open > 0 {
		why += fmt.Sprintf(", %d within the %.0f%% one run cannot tell apart (?)", open, 100*OneRunMargin)
	}
	why += ": " + strings.Join(marks, "; ")
	v := Partly
	switch {
	case held == 0 && failed == 0:
		var each []string
		for _, m := range marks {
			each = append(each, strings.TrimPrefix(m, openMark))
		}
		return NotJudged(text, fmt.Sprintf("every case within the %.0f%% one run cannot tell apart: %s", 100*OneRunMargin, strings.Join(each, "; ")))
	case held == len(marks):
		v = True
	case held == 0:
		v = False
	}
	return Claim{Text: text, Verdict: v, Why: why}
}

// openMark begins the mark of a case the run cannot tell.
const openMark = "? "

// Mark is a case's mark for Counted: its text, "NOT "-prefixed where the claim fails in it.
func Mark(holds bool, text string) string {
	if holds {
		return text
	}
	return "NOT " + text
}

// Compared is the mark of a case where the claim is that a beats b (lower or higher better): it
// holds where the run tells them apart in that order (Apart), fails where apart the other way or
// where several runs each cannot tell them apart, and is open where one run each cannot.
func Compared(a, b Ranked, lowerBetter bool, text string) string {
	if !Apart(a, b) {
		if a.Runs > 1 && b.Runs > 1 {
			return "NOT " + text + " (cannot be told apart)"
		}
		return openMark + text
	}
	better := a.Value > b.Value
	if lowerBetter {
		better = a.Value < b.Value
	}
	return Mark(better, text)
}

// One is a figure of one run, without a spread.
func One(v float64) Ranked { return Ranked{Value: v, Lo: v, Hi: v, Runs: 1} }

// Ahead judges the claim that a is better than b (lower or higher better), figures saying by how
// much: TRUE or FALSE where the run tells them apart (Apart); FALSE where several runs each cannot
// tell them apart; not judged where one run each cannot.
func Ahead(text string, a, b Ranked, lowerBetter bool, figures string) Claim {
	if Apart(a, b) {
		better := a.Value > b.Value
		if lowerBetter {
			better = a.Value < b.Value
		}
		if better {
			return Claim{Text: text, Verdict: True, Why: figures}
		}
		return Claim{Text: text, Verdict: False, Why: figures}
	}
	if a.Runs > 1 && b.Runs > 1 {
		return Claim{Text: text, Verdict: False, Why: fmt.Sprintf("%s: their ranges over %d and %d runs overlap, so they cannot be told apart", figures, a.Runs, b.Runs)}
	}
	return NotJudged(text, fmt.Sprintf("%s, within the %.0f%% one run each cannot tell apart", figures, 100*OneRunMargin))
}

// Finding is the claim as a line of the answer: "seed 004 claims st1 commits slower than gp2:
// TRUE (5.9 vs 72.4 changes/s)"; without a seed, "hypothesis: ...".
func (c Claim) Finding(seed string) string {
	if seed == "" {
		return "hypothesis: " + strings.TrimPrefix(c.Finding("-"), "seed - claims ")
	}
	if c.Verdict == "" {
		return fmt.Sprintf("seed %s claims %s: not judged: %s", seed, c.Text, c.Why)
	}
	if c.Why == "" {
		return fmt.Sprintf("seed %s claims %s: %s", seed, c.Text, c.Verdict)
	}
	return fmt.Sprintf("seed %s claims %s: %s (%s)", seed, c.Text, c.Verdict, c.Why)
}

// ClaimFindings are the claims as lines of the answer; claims in a row that are not judged for
// one reason share a line.
func ClaimFindings(seed string, claims []Claim) []string {
	var out []string
	for i := 0; i < len(claims); i++ {
		c := claims[i]
		j := i + 1
		for c.Verdict == "" && j < len(claims) && claims[j].Verdict == "" && claims[j].Why == c.Why {
			j++
		}
		if j == i+1 {
			out = append(out, c.Finding(seed))
			continue
		}
		var texts []string
		for _, o := range claims[i:j] {
			texts = append(texts, "that "+o.Text)
		}
		out = append(out, fmt.Sprintf("seed %s claims %s: not judged: %s", seed, strings.Join(texts, "; "), c.Why))
		i = j - 1
	}
	return out
}

// About says whether ours is about the seed's figure: within ScoreTolerance of it, as the
// scoreboard judges.
func About(ours, seed float64) bool {
	return seed != 0 && ours/seed >= 1/(1+ScoreTolerance) && ours/seed <= 1+ScoreTolerance
}

// RankedBy is a row's figure: its median, with the range of its runs' values (value gives a
// cell's, false where the cell has none); a row whose runs give no values counts as one run.
func RankedBy(r *results.Results, a results.Aggregate, median float64, value func(c results.Cell) (float64, bool)) Ranked {
	rk := Ranked{Backend: a.Backend, Value: median, Lo: math.Inf(1), Hi: math.Inf(-1)}
	for _, c := range r.Cells {
		if c.Failure != "" || c.Backend != a.Backend || r.Key(c.Cell).Point != a.Point {
			continue
		}
		if v, ok := value(c); ok {
			rk.Lo, rk.Hi, rk.Runs = min(rk.Lo, v), max(rk.Hi, v), rk.Runs+1
		}
	}
	if rk.Runs == 0 {
		rk.Lo, rk.Hi, rk.Runs = median, median, 1
	}
	return rk
}

// RankedOf is a row's figure for a metric the cells carry: its median over runs and their range.
func RankedOf(r *results.Results, a results.Aggregate, metric string) Ranked {
	return RankedBy(r, a, a.Median[metric], func(c results.Cell) (float64, bool) {
		v, ok := c.Metrics[metric]
		return v, ok
	})
}

// RangeText is a figure as text, with its range over runs where it has several: "5.9 (5.1-6.3
// over 3 runs)".
func RangeText(f Ranked, format string) string {
	text := fmt.Sprintf(format, f.Value)
	if f.Runs > 1 && f.Lo < f.Hi {
		text += fmt.Sprintf(" (%s-%s over %d runs)", fmt.Sprintf(format, f.Lo), fmt.Sprintf(format, f.Hi), f.Runs)
	}
	return text
}

// TiersText says the order tiers put figures in, best first, each as label gives it, and which
// figures the run cannot tell apart: "io1 103.8 and gp2 100.7 (cannot be told apart), then st1
// 10.0, then sc1 2.3".
func TiersText(tiers [][]Ranked, label func(Ranked) string) string {
	var parts []string
	for _, tier := range tiers {
		var each []string
		for _, f := range tier {
			each = append(each, label(f))
		}
		part := ListAnd(each)
		if len(tier) > 1 {
			part += " (cannot be told apart)"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", then ")
}
