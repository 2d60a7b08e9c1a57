package advise

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Advice is an advise run's answer: the ranking, what is excluded and why, what would change the
// answer and how far to trust it.
type Advice struct {
	Question     string      `json:"question"`
	Requirements []string    `json:"requirements"`
	Answer       string      `json:"answer"`
	Notes        []string    `json:"notes,omitempty"` // what qualifies the answer, said beside it
	Latency      string      `json:"latency_metric"`
	Rate         float64     `json:"rate"`
	Ranked       []Verdict   `json:"ranked"`
	Excluded     []Candidate `json:"excluded,omitempty"`
	Changes      []string    `json:"what_would_change_it,omitempty"`
	Trust        []string    `json:"trust"`
	Plan         string      `json:"plan"`
}

// ExitNoneMeets is the exit status when no candidate meets every requirement, as a crossed
// threshold's: a CI job gates on it.
const ExitNoneMeets = 4

// Met says whether some candidate meets every requirement.
func (a Advice) Met() bool { return len(a.Ranked) > 0 && a.Ranked[0].Meets }

// LatencyMetric is the latency the table shows: the first steady requirement's on a latency, else p95.
func LatencyMetric(reqs []Requirement) string {
	for _, r := range reqs {
		if r.Where == Steady && strings.HasSuffix(r.Metric, "_ms") {
			return r.Metric
		}
	}
	return "p95_ms"
}

// Advise ranks the candidates from their figures and says the answer.
func (p *Plan) Advise(figs map[string]Figures, trust []string) Advice {
	lat := LatencyMetric(p.Requirements)
	a := Advice{
		Question: fmt.Sprintf("where should %s's data live at %s requests/s on %s?", p.App.Name, rateText(p.Rate), p.Platform),
		Latency:  lat, Rate: p.Rate,
		Ranked: Rank(p.Candidates, figs, p.Requirements, lat),
		Trust:  trust,
		Plan: fmt.Sprintf("each candidate: %s of open loop at %s/s and at %s/s over %d connections, then %d crash runs at %s/s",
			p.Duration, rateText(p.Rate), rateText(2*p.Rate), p.Connections, p.Crashes, rateText(p.Rate)),
	}
	for _, r := range p.Requirements {
		a.Requirements = append(a.Requirements, r.Text)
	}
	for _, c := range p.Candidates {
		if c.Excluded != "" {
			a.Excluded = append(a.Excluded, c)
		}
	}
	a.Answer = answer(a)
	if note := sameLatency(a); note != "" {
		a.Notes = append(a.Notes, note)
	}
	a.Changes = changes(a, p)
	return a
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
		return fmt.Sprintf("%s meets every requirement, at %s a month (%s %s%s): %s",
			top.Candidate.Name, usdText(top.Figures), strings.TrimSuffix(a.Latency, "_ms"), latText(top.Figures.AtRate, a.Latency), lossText(top.Figures), others)
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
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("at twice the rate (%s/s), %s has no figure for %s", rateText(2*p.Rate), v.Candidate.Name, r.Text))
			case !r.Holds(x):
				out = append(out, fmt.Sprintf("at twice the rate (%s/s), %s no longer meets %s: %s is %s", rateText(2*p.Rate), v.Candidate.Name, r.Text, r.Metric, formatValue(r.Metric, x)))
			}
		}
		if len(out) == 0 {
			out = append(out, fmt.Sprintf("%s still meets every latency requirement at twice the rate (%s/s)", v.Candidate.Name, rateText(2*p.Rate)))
		}
		break
	}
	return out
}

func usdText(f Figures) string {
	if !f.Priced {
		return "an untold cost"
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
			fails = append(fails, s.Requirement)
		}
	}
	for _, u := range v.Unjudged {
		fails = append(fails, u+" (cannot tell)")
	}
	return strings.Join(fails, "; ")
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
	if !f.Priced {
		return "cannot tell"
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
		return fmt.Sprintf(", no acknowledged write lost in %d crashes", f.Crashes)
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
	lat := strings.ToUpper(strings.TrimSuffix(a.Latency, "_ms"))
	fmt.Fprintf(tw, "RANK\tCANDIDATE\tMEETS\t%s AT %s/s\t%s AT %s/s\tLOST ACKED\tUSD/MONTH\tFRONTIER\tFAILS\n", lat, rateText(a.Rate), lat, rateText(2*a.Rate))
	for i, v := range a.Ranked {
		front := ""
		if v.Frontier {
			front = "*"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, v.Candidate.Name, meetsCell(v), latText(v.Figures.AtRate, a.Latency),
			latText(v.Figures.AtDouble, a.Latency), lostCell(v), usdCell(v.Figures), front, failText(v, false))
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
	for _, v := range a.Ranked {
		for _, e := range v.Figures.Evidence {
			fmt.Fprintf(w, "  %s\n", e)
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
	lat := strings.TrimSuffix(a.Latency, "_ms")
	fmt.Fprintf(w, "| rank | candidate | meets | %s at %s/s | %s at %s/s | lost acked | $/month | fails |\n|---|---|---|---|---|---|---|---|\n",
		lat, rateText(a.Rate), lat, rateText(2*a.Rate))
	for i, v := range a.Ranked {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", i+1, v.Candidate.Name, meetsCell(v), latText(v.Figures.AtRate, a.Latency),
			latText(v.Figures.AtDouble, a.Latency), lostCell(v), usdCell(v.Figures), failText(v, true))
	}
	if len(a.Excluded) > 0 {
		fmt.Fprintf(w, "\nExcluded: ")
		var ex []string
		for _, c := range a.Excluded {
			ex = append(ex, c.Name+" ("+c.Excluded+")")
		}
		fmt.Fprintf(w, "%s.\n", strings.Join(ex, "; "))
	}
	fmt.Fprintf(w, "\nHow far to trust it: %s\n", strings.Join(a.Trust, " "))
	return nil
}
