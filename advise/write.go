package advise

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// Advice is an advise run's answer: the ranking, what is excluded and why, what would change the
// answer and how far to trust it.
type Advice struct {
	Question     string   `json:"question"`
	Requirements []string `json:"requirements"`
	Answer       string   `json:"answer"`
	Notes        []string `json:"notes,omitempty"` // what qualifies the answer, said beside it
	Latency      string   `json:"latency_metric"`
	// Pace is the metric of what a candidate sustains, shown beside its latency ("" for an app
	// serving requests, whose pace is the open loop's rate); Unit what the rate counts.
	Pace      string      `json:"pace_metric,omitempty"`
	Unit      string      `json:"unit"`
	Rate      float64     `json:"rate"`
	Ranked    []Verdict   `json:"ranked"`
	Excluded  []Candidate `json:"excluded,omitempty"`
	Dominated []Candidate `json:"dominated,omitempty"` // not run unless named: another does as much for less
	Changes   []string    `json:"what_would_change_it,omitempty"`
	// Twice is the answer at twice the rate, judged from the runs there (nil where none ran).
	Twice *TwiceAnswer `json:"at_twice_the_rate,omitempty"`
	Trust []string     `json:"trust"`
	Plan  string       `json:"plan"`
}

// TwiceAnswer is the ranking's top at twice the rate, every candidate judged by its runs there
// (Figures.AtTwice).
type TwiceAnswer struct {
	Rate  float64 `json:"rate"`
	Top   string  `json:"top"`
	Meets bool    `json:"meets"` // whether Top meets every requirement there
	// FlipsAt is where the answer changes on price alone (the top at the rate still meets every
	// requirement at twice it, and Top did at the rate too): the rate at which the two bills
	// cross, each joined by a straight line between its two measured rates; 0 otherwise.
	FlipsAt float64 `json:"flips_at,omitempty"`
}

// ExitNoneMeets is the exit status when no candidate meets every requirement, as a crossed
// threshold's: a CI job gates on it.
const ExitNoneMeets = 4

// Met says whether some candidate meets every requirement.
func (a Advice) Met() bool { return len(a.Ranked) > 0 && a.Ranked[0].Meets }

// LatencyMetric is the latency the table shows: the first steady requirement's on a latency, else p95.
func LatencyMetric(reqs []Requirement) string { return latencyMetric(reqs, "p95_ms") }

func latencyMetric(reqs []Requirement, fallback string) string {
	for _, r := range reqs {
		if r.Where == Steady && strings.HasSuffix(r.Metric, "_ms") {
			return r.Metric
		}
	}
	return fallback
}

// Advise ranks the candidates from their figures and says the answer.
func (p *Plan) Advise(figs map[string]Figures, trust []string) Advice {
	lat := LatencyMetric(p.Requirements)
	a := Advice{
		Question: fmt.Sprintf("where should %s's data live at %s requests/s on %s?", p.App.Name, rateText(p.Rate), p.Platform),
		Latency:  lat, Rate: p.Rate, Unit: "requests",
		Ranked: Rank(p.Candidates, figs, p.Requirements, lat),
		Trust:  trust,
		Plan: fmt.Sprintf("each candidate: %s of open loop at %s/s and at %s/s over %d connections, then %d crash runs at %s/s",
			p.Duration, rateText(p.Rate), rateText(2*p.Rate), p.Connections, p.Crashes, rateText(p.Rate)),
	}
	if p.App.perIteration() {
		script := filepath.Base(p.App.K6Script)
		a.Question = fmt.Sprintf("where should %s's data live at %s iterations/s of its k6 script %s on %s?", p.App.Name, rateText(p.Rate), script, p.Platform)
		a.Unit = "iterations"
		a.Plan = fmt.Sprintf("each candidate: %s of open loop, the k6 script %s's iterations started at %s/s and at %s/s over %d VUs, then %d crash runs at %s requests/s from persistlab's driver (%s), which reads every acknowledgement",
			p.Duration, script, rateText(p.Rate), rateText(2*p.Rate), p.Connections, p.Crashes, rateText(p.Rate), p.App.CrashRequest())
	}
	if p.App.Kind == KindChanges {
		lat = latencyMetric(p.Requirements, GitLatencyMetric)
		a.Latency, a.Pace, a.Unit = lat, PaceMetric, "changes"
		a.Ranked = Rank(p.Candidates, figs, p.Requirements, lat)
		a.Question = fmt.Sprintf("where should %s's repositories live at %s changes/s on %s?", p.App.Name, rateText(p.Rate), p.Platform)
		a.Plan = fmt.Sprintf("%d crash runs at %s/s on the first volume of each fsync setting, then on each candidate its crash runs do not rule out: a prefill of what the cell touches, %s paced at %s/s and at %s/s, and the write-back after it timed",
			p.Crashes, rateText(p.Rate), p.Duration, rateText(p.Rate), rateText(2*p.Rate))
	}
	for _, r := range p.Requirements {
		a.Requirements = append(a.Requirements, r.Text)
	}
	for _, c := range p.Candidates {
		switch {
		case c.Excluded != "":
			a.Excluded = append(a.Excluded, c)
		case c.Dominated != "":
			a.Dominated = append(a.Dominated, c)
		}
	}
	a.Answer = answer(a)
	if note := sameLatency(a); note != "" {
		a.Notes = append(a.Notes, note)
	}
	a.Twice = twiceAnswer(a, p)
	a.Changes = changes(a, p)
	return a
}

// twiceAnswer ranks the candidates again by their runs at twice the rate; nil where none has a
// figure there.
func twiceAnswer(a Advice, p *Plan) *TwiceAnswer {
	figs := map[string]Figures{}
	cands := make([]Candidate, 0, len(a.Ranked))
	ran := false
	for _, v := range a.Ranked {
		figs[v.Candidate.Name] = v.Figures.AtTwice(a.Pace)
		cands = append(cands, v.Candidate)
		ran = ran || len(v.Figures.AtDouble) > 0
	}
	if !ran {
		return nil
	}
	twice := Rank(cands, figs, p.Requirements, a.Latency)
	t := &TwiceAnswer{Rate: 2 * p.Rate, Top: twice[0].Candidate.Name, Meets: twice[0].Meets}
	was := a.Ranked[0]
	if !was.Meets || !t.Meets || t.Top == was.Candidate.Name {
		return t
	}
	var now, wasThere Verdict
	for _, v := range a.Ranked {
		if v.Candidate.Name == t.Top {
			now = v
		}
	}
	for _, v := range twice {
		if v.Candidate.Name == was.Candidate.Name {
			wasThere = v
		}
	}
	if !now.Meets || !wasThere.Meets {
		return t
	}
	t.FlipsAt = crossing(p.Rate, was.Figures, now.Figures)
	return t
}

// crossing is the rate between r and 2r at which b's bill falls to a's, each bill joined by a
// straight line between its figures at the two rates; 0 where they do not cross there, or where
// either end of either is unpriced or a bound.
func crossing(r float64, a, b Figures) float64 {
	exact := func(f Figures) bool {
		return f.Priced && f.AtMostUSD == 0 && f.DoublePriced && f.DoubleAtMostUSD == 0 && len(f.DoubleBill) > 0
	}
	if !exact(a) || !exact(b) {
		return 0
	}
	a1, a2, b1, b2 := a.USD(), a.AtTwice("").USD(), b.USD(), b.AtTwice("").USD()
	gap, closing := b1-a1, (a2-a1)-(b2-b1)
	if gap < 0 || closing <= 0 || gap > closing {
		return 0
	}
	return r * (1 + gap/closing)
}

// answer is the ranking in one sentence.
func answer(a Advice) string {
	if len(a.Ranked) == 0 {
		return "no candidate ran"
	}
	meets := 0
	for _, v := range a.Ranked {
		if v.Meets {
			meets++
		}
	}
	top := a.Ranked[0]
	if top.Meets {
		others := fmt.Sprintf("the only one of %d candidates that does", len(a.Ranked))
		if meets > 1 {
			others = fmt.Sprintf("the cheapest of the %d of %d candidates that do", meets, len(a.Ranked))
		}
		figures := paceText(a, top.Figures)
		if _, ok := top.Figures.AtRate[a.Latency]; ok || a.Pace == "" {
			figures += fmt.Sprintf(", %s %s", strings.TrimSuffix(a.Latency, "_ms"), latText(top.Figures.AtRate, a.Latency))
		}
		price := "at " + usdText(top.Figures)
		if top.Figures.AtMostUSD > 0 {
			price = "for " + usdText(top.Figures)
		}
		return fmt.Sprintf("%s meets every requirement, %s a month (%s%s): %s",
			top.Candidate.Name, price, strings.TrimPrefix(figures, ", "), lossText(top.Figures), others)
	}
	why := make([]string, 0, len(top.Fails)+len(top.Unjudged))
	for _, s := range top.Fails {
		why = append(why, s.Text)
	}
	for _, u := range top.Unjudged {
		why = append(why, u+" cannot be told from its runs")
	}
	return fmt.Sprintf("no candidate meets every requirement; the closest is %s: %s", top.Candidate.Name, strings.Join(why, "; "))
}

// SameLatencyShare is how close every candidate's latency must be for the storage to make no
// difference to it: 10%, below which a run of a few hundred requests does not tell two apart.
const SameLatencyShare = 0.10

// sameLatency says when every candidate's latency at the rate is within SameLatencyShare of the
// others': then the app, not its storage, sets it.
func sameLatency(a Advice) string {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, v := range a.Ranked {
		if x, ok := v.Figures.AtRate[a.Latency]; ok {
			lo, hi, n = min(lo, x), max(hi, x), n+1
		}
	}
	if n < 2 || lo <= 0 || hi > lo*(1+SameLatencyShare) {
		return ""
	}
	return fmt.Sprintf("every candidate's %s at the rate is within %.0f%% of the others' (%s to %s): at this rate the app, not its storage, sets its latency",
		a.Latency, 100*SameLatencyShare, fmtMs(lo), fmtMs(hi))
}

// changes says what would change the answer: headroom at twice the rate.
func changes(a Advice, p *Plan) []string {
	var out []string
	for _, v := range a.Ranked {
		if !v.Meets {
			continue
		}
		for _, r := range p.Requirements {
			if r.Where != Steady {
				continue
			}
			x, ok := v.Figures.AtDouble[r.Metric]
			if r.Metric == a.Pace && a.Pace != "" {
				x /= 2 // keeping up with twice the rate is twice the pace
			}
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("at twice the rate (%s/s), %s has no figure for %s", rateText(2*p.Rate), v.Candidate.Name, r.Text))
			case r.Metric == a.Pace && a.Pace != "" && !r.Holds(x):
				out = append(out, fmt.Sprintf("at twice the rate (%s/s), %s does not keep up: it sustains %.1f %s/s", rateText(2*p.Rate), v.Candidate.Name, 2*x, a.Unit))
			case !r.Holds(x):
				out = append(out, fmt.Sprintf("at twice the rate (%s/s), %s no longer meets %s: %s is %s", rateText(2*p.Rate), v.Candidate.Name, r.Text, r.Metric, formatValue(r.Metric, x)))
			}
		}
		if len(out) == 0 {
			what := "every latency requirement"
			if a.Pace != "" {
				what = "every requirement on its pace and latency"
			}
			out = append(out, fmt.Sprintf("%s still meets %s at twice the rate (%s/s)", v.Candidate.Name, what, rateText(2*p.Rate)))
		}
		break
	}
	if t := a.Twice; t != nil && a.Met() {
		out = append(out, twiceText(a, t))
	}
	return out
}

// twiceText says the answer at twice the rate, and where between the two it changes when it is
// the price that changes it.
func twiceText(a Advice, t *TwiceAnswer) string {
	top := a.Ranked[0].Candidate.Name
	head := fmt.Sprintf("ranked by the runs at twice the rate (%s/s), ", rateText(t.Rate))
	switch {
	case !t.Meets:
		return head + fmt.Sprintf("no candidate meets every requirement; the closest is %s", t.Top)
	case t.Top == top:
		return head + fmt.Sprintf("the answer is still %s", top)
	case t.FlipsAt > 0:
		return head + fmt.Sprintf("the answer becomes %s: its bill falls below %s's at about %s/s (each bill a straight line between its two measured rates)", t.Top, top, rateText(math.Round(10*t.FlipsAt)/10))
	}
	return head + fmt.Sprintf("the answer becomes %s", t.Top)
}

func crashesText(n int) string {
	if n == 1 {
		return "1 crash"
	}
	return fmt.Sprintf("%d crashes", n)
}

// paceText is what a candidate sustains at the rate, for the answer ("" for an app serving requests).
func paceText(a Advice, f Figures) string {
	if a.Pace == "" {
		return ""
	}
	return fmt.Sprintf("sustains %s %s/s", paceCell(f.AtRate, a.Pace), a.Unit)
}

func paceCell(m map[string]float64, metric string) string {
	if x, ok := m[metric]; ok {
		return fmt.Sprintf("%.1f", x)
	}
	return "-"
}

func usdText(f Figures) string {
	switch {
	case !f.Priced:
		return "an untold cost"
	case f.AtMostUSD > 0:
		return fmt.Sprintf("at most $%.2f", f.USD())
	}
	return fmt.Sprintf("$%.2f", f.USD())
}

// failText lists what a candidate fails, by requirement (or in words), and what it cannot tell.
func failText(v Verdict, words bool) string {
	var fails []string
	for _, s := range v.Fails {
		if words {
			fails = append(fails, s.Text)
		} else {
			fails = append(fails, s.Requirement+": "+s.figure())
		}
	}
	for _, u := range v.Unjudged {
		fails = append(fails, u+" (cannot tell)")
	}
	return strings.Join(fails, "; ")
}

// columns are the ranking's column heads, upper case for a terminal: the pace at the rate and at
// twice it where the app has one, the latency at both otherwise.
func (a Advice) columns(upper bool) []string {
	word := func(w string) string {
		if upper {
			return strings.ToUpper(w)
		}
		return w
	}
	lat, at := word(strings.TrimSuffix(a.Latency, "_ms")), word("at")
	cols := []string{word("rank"), word("candidate"), word("meets")}
	if a.Pace != "" {
		unit := word(a.Unit)
		cols = append(cols, fmt.Sprintf("%s/s %s %s/s", unit, at, rateText(a.Rate)), fmt.Sprintf("%s/s %s %s/s", unit, at, rateText(2*a.Rate)),
			fmt.Sprintf("%s %s %s/s", lat, at, rateText(a.Rate)))
	} else {
		cols = append(cols, fmt.Sprintf("%s %s %s/s", lat, at, rateText(a.Rate)), fmt.Sprintf("%s %s %s/s", lat, at, rateText(2*a.Rate)))
	}
	usd := "$/month"
	if upper {
		usd = "USD/MONTH"
	}
	return append(cols, word("lost acked"), usd, word("frontier"), word("fails"))
}

// figureCells are a verdict's cells under columns' figure heads.
func (a Advice) figureCells(v Verdict) []string {
	if a.Pace != "" {
		return []string{paceCell(v.Figures.AtRate, a.Pace), paceCell(v.Figures.AtDouble, a.Pace), latText(v.Figures.AtRate, a.Latency)}
	}
	return []string{latText(v.Figures.AtRate, a.Latency), latText(v.Figures.AtDouble, a.Latency)}
}

// meetsCell says in a table's cell whether the candidate meets every requirement.
func meetsCell(v Verdict) string {
	if v.Meets {
		return "yes"
	}
	return "no"
}

// lostCell is the most acknowledged writes a crash lost, and over how many crashes.
func lostCell(v Verdict) string {
	if v.Figures.Crashes == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f (%d crashes)", v.Figures.Crash[MetricLostAcked], v.Figures.Crashes)
}

// usdCell is the bill in a table's cell.
func usdCell(f Figures) string {
	switch {
	case !f.Priced:
		return "cannot tell"
	case f.AtMostUSD > 0:
		return fmt.Sprintf("<= %.2f", f.USD())
	}
	return fmt.Sprintf("%.2f", f.USD())
}

func latText(m map[string]float64, metric string) string {
	if x, ok := m[metric]; ok {
		return fmtMs(x)
	}
	return "-"
}

func lossText(f Figures) string {
	if f.Crashes == 0 {
		return ""
	}
	lost := f.Crash[MetricLostAcked]
	if lost == 0 {
		return fmt.Sprintf(", no acknowledged write lost in %s", crashesText(f.Crashes))
	}
	if lost == 1 {
		return ", up to 1 acknowledged write lost in a crash"
	}
	return fmt.Sprintf(", up to %.0f acknowledged writes lost in a crash", lost)
}

// WriteText writes the advice for a terminal: the answer first, then the ranking and the rest.
func (a Advice) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "persistlab advise: %s\nrequirements: %s\n\nanswer: %s.\n", a.Question, strings.Join(a.Requirements, "; "), a.Answer)
	for _, n := range a.Notes {
		fmt.Fprintf(w, "  ! %s\n", n)
	}
	fmt.Fprintln(w)
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(a.columns(true), "\t"))
	for i, v := range a.Ranked {
		front := ""
		if v.Frontier {
			front = "*"
		}
		cells := append([]string{fmt.Sprint(i + 1), v.Candidate.Name, meetsCell(v)}, a.figureCells(v)...)
		fmt.Fprintln(tw, strings.Join(append(cells, lostCell(v), usdCell(v.Figures), front, failText(v, false)), "\t"))
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(line, " \n"), strings.Repeat("\n", strings.Count(line, "\n")))
	}
	fmt.Fprintln(w, "\n* frontier: no other candidate is at least as good on latency, lost writes and cost, and better on one")
	if len(a.Changes) > 0 {
		fmt.Fprintf(w, "\nwhat would change the answer:\n")
		for _, c := range a.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
	if len(a.Excluded) > 0 {
		fmt.Fprintf(w, "\nexcluded:\n")
		for _, c := range a.Excluded {
			fmt.Fprintf(w, "  %s: %s\n", c.Name, c.Excluded)
		}
	}
	if len(a.Dominated) > 0 {
		fmt.Fprintf(w, "\nnot run (name one in --candidates to run it):\n")
		for _, c := range a.Dominated {
			fmt.Fprintf(w, "  %s: %s\n", c.Name, c.Dominated)
		}
	}
	fmt.Fprintf(w, "\nthe candidates:\n")
	for _, v := range a.Ranked {
		fmt.Fprintf(w, "  %s: %s\n", v.Candidate.Name, v.Candidate.What)
		for _, l := range v.Figures.Bill {
			fmt.Fprintf(w, "    %s: $%.2f a month (%s)\n", l.Item, l.USDPerMonth, l.How)
		}
		for _, n := range v.Figures.Notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
	}
	fmt.Fprintf(w, "\nhow far to trust it:\n")
	for _, t := range a.Trust {
		fmt.Fprintf(w, "  %s\n", t)
	}
	fmt.Fprintf(w, "\nwhat ran: %s\nevidence:\n", a.Plan)
	seen := map[string]bool{}
	for _, v := range a.Ranked {
		for _, e := range v.Figures.Evidence {
			if !seen[e] { // a crash row several candidates borrow is one piece of evidence
				seen[e] = true
				fmt.Fprintf(w, "  %s\n", e)
			}
		}
	}
	return nil
}

// WriteJSON writes the advice as JSON, for scripts.
func (a Advice) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}

// WriteMarkdown writes the advice for a pull request's comment.
func (a Advice) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "**%s**\n\nRequirements: %s\n\n**Answer:** %s.\n\n", a.Question, "`"+strings.Join(a.Requirements, "`, `")+"`", a.Answer)
	for _, n := range a.Notes {
		fmt.Fprintf(w, "> %s\n\n", n)
	}
	cols := a.columns(false)
	cols = append(cols[:len(cols)-2], cols[len(cols)-1]) // no frontier column
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for i, v := range a.Ranked {
		cells := append([]string{fmt.Sprint(i + 1), v.Candidate.Name, meetsCell(v)}, a.figureCells(v)...)
		fmt.Fprintf(w, "| %s |\n", strings.Join(append(cells, lostCell(v), usdCell(v.Figures), failText(v, true)), " | "))
	}
	if len(a.Excluded) > 0 {
		fmt.Fprintf(w, "\nExcluded: ")
		var ex []string
		for _, c := range a.Excluded {
			ex = append(ex, c.Name+" ("+c.Excluded+")")
		}
		fmt.Fprintf(w, "%s.\n", strings.Join(ex, "; "))
	}
	if len(a.Dominated) > 0 {
		var not []string
		for _, c := range a.Dominated {
			not = append(not, c.Name+" ("+c.Dominated+")")
		}
		fmt.Fprintf(w, "\nNot run (name one in `--candidates` to run it): %s.\n", strings.Join(not, "; "))
	}
	if len(a.Changes) > 0 {
		fmt.Fprintf(w, "\nWhat would change the answer: %s.\n", strings.Join(a.Changes, "; "))
	}
	fmt.Fprintf(w, "\nHow far to trust it: %s\n", strings.Join(a.Trust, " "))
	return nil
}
