package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"persistlab/results"
	"persistlab/scenario"
)

// Answer is what a run found, said before any table: the scenario's question, findings in plain
// words that each follow from a table below, what the run cannot support (with the command that
// would settle it), and the lab's fidelity to the seed it reproduces.
type Answer struct {
	Question string   `json:"question,omitempty"`
	Findings []string `json:"findings"`
	// Seed and Claims are what the seed's blog concludes, each judged from the run's figures.
	Seed     string   `json:"seed,omitempty"`
	Claims   []Claim  `json:"claims,omitempty"`
	Caveats  []string `json:"caveats,omitempty"`
	Fidelity string   `json:"fidelity,omitempty"`
}

// AddClaims records the seed's claims, judged.
func (a *Answer) AddClaims(seed string, claims ...Claim) {
	a.Seed = seed
	a.Claims = append(a.Claims, claims...)
}

// ClaimLines are the claims as lines of the answer.
func (a Answer) ClaimLines() []string { return ClaimFindings(a.Seed, a.Claims) }

// ClaimTally is the claims in one line: "seed 000's claims, judged by this run: 2 TRUE, 1 PARTLY,
// 1 FALSE, 1 not judged".
func (a Answer) ClaimTally() string {
	counts := map[string]int{}
	for _, c := range a.Claims {
		counts[c.Verdict]++
	}
	var parts []string
	for _, v := range []string{True, Partly, False} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	if counts[""] > 0 {
		parts = append(parts, fmt.Sprintf("%d not judged", counts[""]))
	}
	return fmt.Sprintf("seed %s's %d claims, judged by this run: %s", a.Seed, len(a.Claims), strings.Join(parts, ", "))
}

// OneRunMargin is how far apart two figures from one run each must be before the answer ranks
// them: two quick runs of seed 000's demo gave gcsfuse/Litestream 1.21x and 1.10x, so a single
// run's figures within a quarter of each other cannot be told apart. Assumed from that spread.
const OneRunMargin = 0.25

// AnswerOf is the run's answer: the workload's findings (its presenter's, else the generic
// ranking), then what every run says alike: burst buckets, crashes, the bucket's cost, rows that
// failed requests, thresholds, and caveats.
func AnswerOf(r *results.Results) Answer {
	var a Answer
	if r.Scenario == nil {
		return a
	}
	pres := presenterOf(r)
	if pres.Answer != nil {
		pres.Answer(r, &a)
	} else {
		genericAnswer(r, pres.Compare, &a)
	}
	a.Findings = append(a.Findings, burstFindings(r)...)
	a.Findings = append(a.Findings, crashFindings(r)...)
	a.Findings = append(a.Findings, costFindings(r, pres.Work)...)
	for _, row := range errorRateCrossed(r) {
		a.Findings = append(a.Findings, row+": its latency describes failures, not storage")
	}
	a.Findings = append(a.Findings, thresholdFindings(r)...)
	if len(a.Findings)+len(a.Claims) == 0 {
		a.Findings = append(a.Findings, "no cell measured anything: the failures below say why")
	}
	a.Caveats = append(append(genericCaveats(r), burstCaveats(r)...), a.Caveats...)
	if scores := Scoreboard(r); len(scores) > 0 {
		t := Tally(scores)
		if t.Predictions == 0 && t.Verdicts > 0 {
			// Verdicts alone (seed 002): no figure to come within 25% of, so no count against it.
			a.Fidelity = fmt.Sprintf("how closely this lab reproduces seed %s's published verdicts (not a verdict on your storage): %d of its %d claims hold in every case here, as the seed found; it states verdicts, not figures, so none is scored within %.0f%%",
				r.Scenario.Seed, t.Matches, t.Verdicts, 100*ScoreTolerance)
		} else {
			a.Fidelity = fmt.Sprintf("how closely this lab reproduces seed %s's published figures (not a verdict on your storage): %d of %d headline figures within %.0f%%",
				r.Scenario.Seed, t.Within, t.Predictions, 100*ScoreTolerance)
		}
		if t.Calibration > 0 {
			a.Fidelity += fmt.Sprintf(", %d calibration", t.Calibration)
		}
		if t.Reported > 0 {
			a.Fidelity += fmt.Sprintf(", %d reported, not tallied", t.Reported)
		}
		if t.Unmeasured > 0 {
			a.Fidelity += fmt.Sprintf(", %d not measured by this run", t.Unmeasured)
		}
	}
	return a
}

// writeAnswer prints the answer; the brief view gives the seed's claims as their tally.
func writeAnswer(w io.Writer, r *results.Results, view View) {
	a := AnswerOf(r)
	if a.Question == "" && len(a.Findings) == 0 {
		return
	}
	if md, ok := w.(*markdown); ok {
		md.answer(a)
		return
	}
	fmt.Fprintln(w, "ANSWER")
	if a.Question != "" {
		fmt.Fprintln(w, wrapLines(a.Question, "  "))
	}
	for _, f := range a.Findings {
		fmt.Fprintln(w, wrapLines(f, "  - "))
	}
	if len(a.Claims) > 0 {
		if view == ViewBrief {
			fmt.Fprintln(w, wrapLines(a.ClaimTally()+" (each: without --brief)", "  - "))
		} else {
			for _, c := range a.ClaimLines() {
				fmt.Fprintln(w, wrapLines(c, "  - "))
			}
		}
	}
	for _, c := range a.Caveats {
		fmt.Fprintln(w, wrapLines(c, "  ! "))
	}
	if a.Fidelity != "" {
		fmt.Fprintln(w, wrapLines("fidelity: "+a.Fidelity, "  "))
	}
}

// Lines are the answer as the lines of a page: the question, each finding, each caveat marked,
// and the fidelity.
func (a Answer) Lines() []string {
	var out []string
	if a.Question != "" {
		out = append(out, a.Question)
	}
	for _, f := range append(slices.Clone(a.Findings), a.ClaimLines()...) {
		out = append(out, "• "+f)
	}
	for _, c := range a.Caveats {
		out = append(out, "! "+c)
	}
	if a.Fidelity != "" {
		out = append(out, "fidelity: "+a.Fidelity)
	}
	return out
}

// answerWidth is the width the answer's lines wrap at.
const answerWidth = 100

// wrapLines wraps text into lines of at most answerWidth that begin with prefix, the lines after
// the first indented as far.
func wrapLines(text, prefix string) string {
	indent := strings.Repeat(" ", len(prefix))
	var b strings.Builder
	line := prefix
	for i, word := range strings.Fields(text) {
		if i > 0 && len(line)+1+len(word) > answerWidth {
			b.WriteString(line + "\n")
			line = indent + word
			continue
		}
		if i > 0 {
			line += " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}

// genericCaveats are what any run cannot support: a quick or single run's closeness, failed
// cells, an interrupted run, rows bound by this machine or its page-out (host-bound).
func genericCaveats(r *results.Results) []string {
	var out []string
	s := r.Scenario
	rerun := RerunCommand(r)
	switch {
	case s.QuickRun && s.Quick != nil && s.Quick.Derived:
		out = append(out, fmt.Sprintf("a quick run persistlab derived, the scenario defining none (one run per row, each at most %s of load where the scenario sets a duration): figures within %.0f%% of each other cannot be told apart; settle them with the full plan: %s",
			scenario.QuickDuration, 100*OneRunMargin, rerun))
	case s.QuickRun:
		out = append(out, fmt.Sprintf("a quick run (%s): figures within %.0f%% of each other cannot be told apart; settle them with the full plan: %s",
			runsText(s), 100*OneRunMargin, rerun))
	case s.Repeat == 1 && len(r.Cells) > 0:
		out = append(out, fmt.Sprintf("one run per row: no spread over repeats, so figures within %.0f%% of each other cannot be told apart; %s --repeat 3 gives one",
			100*OneRunMargin, rerun))
	}
	if u := s.ProfileUsed; u != nil {
		out = append(out, u.Summary())
	}
	cells, failed := len(r.Cells)+len(r.Crashes), failedCells(r)
	if failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d cells failed (listed below): the findings rest on the others", failed, cells))
	}
	if r.Status != "" && r.Status != results.StatusComplete {
		out = append(out, fmt.Sprintf("the run is %s: it holds %d of its plan's cells", r.Status, cells))
	}
	var bound []string
	for _, a := range r.Aggregates {
		if BoundBy(r, a) != "" {
			bound = append(bound, scenario.Label(a.Backend, a.Point))
		}
	}
	if len(bound) > 0 {
		which, their := fmt.Sprintf("%d of %d rows were", len(bound), len(r.Aggregates)), "their"
		if len(bound) == 1 {
			which, their = bound[0]+" was", "its"
		}
		out = append(out, which+" bound by this machine (its CPU, or the lab's own ceiling), not by the cloud model: read "+their+" figures as this machine's limit")
	}
	if host := hostBoundRows(r); len(host) > 0 {
		which, their := fmt.Sprintf("%d of %d rows were", len(host), len(r.Aggregates)), "their"
		if len(host) == 1 {
			which, their = host[0]+" was", "its"
		}
		out = append(out, fmt.Sprintf("%s host-bound: %.0f%% or more of what %s volume read was page cache this machine took back (its page-out) and read again, where a cloud instance would still hold it: read %s reads, I/O units and credits as this machine's",
			which, 100*HostBoundShare, their, their))
	}
	return out
}

// runsText is "1 run of 5s per row".
func runsText(s *scenario.Spec) string {
	runs := "runs"
	if s.Repeat == 1 {
		runs = "run"
	}
	if s.Duration > 0 {
		return fmt.Sprintf("%d %s of %s per row", s.Repeat, runs, s.Duration)
	}
	return fmt.Sprintf("%d %s per row", s.Repeat, runs)
}

// RerunCommand is the command that ran r, as persistlab, without what made it short (--quick,
// --repeat, --duration) or what a second run would overwrite or need not repeat (its outputs,
// --force, its view). A merged run recorded the merge, not its shards' run: the scenario's run
// by name stands for it.
func RerunCommand(r *results.Results) string {
	args := r.Command
	if len(args) < 2 || args[1] == "merge" {
		return "persistlab run " + r.Scenario.Name
	}
	out := []string{"persistlab"}
	for i := 1; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			out = append(out, ShellWord(args[i]))
			continue
		}
		switch name {
		case "quick", "force", "brief", "detail", "dry-run":
			continue
		case "repeat", "duration", "out", "html", "csv", "format", "samples", "openmetrics", "fio-json", "shard", "shard-by":
			if !hasValue {
				i++
			}
			continue
		}
		out = append(out, ShellWord(args[i]))
	}
	return strings.Join(out, " ")
}

// ShellWord quotes a word a shell would split or expand.
func ShellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// crashFindings say, per backend, what crash runs lost of what was acknowledged.
func crashFindings(r *results.Results) []string {
	if len(r.CrashSummaries) == 0 {
		return nil
	}
	var parts []string
	total := 0
	for _, b := range r.BackendOrder() {
		var runs, everything, integrityFailed, checked int
		var lostMax int64
		var medians []float64
		var reach float64
		for _, s := range r.CrashSummaries {
			if s.Backend != b {
				continue
			}
			runs += s.Runs
			everything += s.LostEverything
			integrityFailed += s.IntegrityFailures
			checked += s.IntegrityChecked
			lostMax = max(lostMax, s.LostMax)
			medians = append(medians, s.LostMedian)
			reach = max(reach, s.ReachMaxMs)
		}
		if runs == 0 {
			continue
		}
		total += runs
		var text string
		switch {
		case everything == runs:
			text = fmt.Sprintf("%s lost every acknowledged write in all %d crash(es)", b, runs)
		case lostMax == 0:
			text = fmt.Sprintf("%s lost none in %d crash(es)", b, runs)
		default:
			text = fmt.Sprintf("%s lost up to %d (median %s) in %d crash(es), written up to %s before the kill", b, lostMax, medianText(medians), runs, msText(reach))
			if everything > 0 {
				text += fmt.Sprintf(", everything in %d", everything)
			}
		}
		if integrityFailed > 0 {
			text += fmt.Sprintf(", and SQLite's integrity_check failed after %d of %d recoveries", integrityFailed, checked)
		}
		parts = append(parts, text)
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{"acknowledged writes lost when the instance died: " + strings.Join(parts, "; ")}
}

func medianText(medians []float64) string {
	if len(medians) == 1 {
		return trimNumber(medians[0])
	}
	lo, hi := slices.Min(medians), slices.Max(medians)
	if lo == hi {
		return trimNumber(lo)
	}
	return trimNumber(lo) + "-" + trimNumber(hi) + " by load"
}

func trimNumber(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func msText(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// costFindings give each bucket backend's cost per month at the run's rate, pooled over its runs,
// or say it could not be priced.
func costFindings(r *results.Results, work WorkUnit) []string {
	var priced, thin, uploads []string
	for _, b := range r.BackendOrder() {
		hasBucket := false
		for _, a := range r.AggregatesOf(b) {
			hasBucket = hasBucket || a.Bucket != nil
		}
		if !hasBucket {
			continue
		}
		p, ok := PooledBucketOf(r, b, work)
		if ok && work.Label != "" {
			uploads = append(uploads, fmt.Sprintf("%s %s", b, sizeText(p.BytesInPerUnit*max(work.Scale, 1))))
		}
		if !ok || len(p.Costs) == 0 {
			thin = append(thin, b)
			continue
		}
		priced = append(priced, fmt.Sprintf("%s $%s/month", b, moneyText(p.Costs[0].USDPerMonth)))
	}
	var out []string
	if len(priced) > 0 {
		prices := priceLists(r)
		hint := ""
		if _, open := r.Defaults["rate"]; open {
			hint = " (another rate costs otherwise: run --rate N prices yours)"
		}
		out = append(out, fmt.Sprintf("bucket requests at this run's rate of work, at %s list prices: %s%s",
			prices[0].Name, ListAnd(priced), hint))
	}
	if len(thin) > 0 {
		out = append(out, ListAnd(thin)+": too few bucket operations in this run to price")
	}
	if len(uploads) > 1 {
		out = append(out, fmt.Sprintf("written to the bucket per %s: %s", work.Label, ListAnd(uploads)))
	}
	return out
}

func moneyText(usd float64) string {
	switch {
	case usd >= 100:
		return fmt.Sprintf("%.0f", usd)
	case usd >= 1:
		return fmt.Sprintf("%.2f", usd)
	}
	return fmt.Sprintf("%.4f", usd)
}

// thresholdFindings say how the scenario's thresholds fared.
func thresholdFindings(r *results.Results) []string {
	js := Judge(r)
	if len(js) == 0 {
		return nil
	}
	var failed []string
	for _, j := range js {
		switch {
		case j.Err != nil:
			failed = append(failed, j.Threshold.Text+" (could not be judged)")
		case len(j.Crossed) > 0:
			failed = append(failed, j.Threshold.Text+" (crossed in "+strings.Join(j.Crossed, ", ")+")")
		case j.Held == 0:
			failed = append(failed, j.Threshold.Text+" (no row measured it)")
		}
	}
	if len(failed) == 0 {
		return []string{fmt.Sprintf("every threshold held (%d)", len(js))}
	}
	return []string{fmt.Sprintf("%d of %d thresholds failed: %s", len(failed), len(js), strings.Join(failed, "; "))}
}

// Ranked is one backend's figure for a ranking, with its spread over repeats (Lo, Hi; equal to
// Value for one run).
type Ranked struct {
	Backend       string
	Value, Lo, Hi float64
	Runs          int
}

// Tiers groups ranked figures, best first, into tiers a run can tell apart: with several runs
// each, two backends are apart when their ranges over the runs do not overlap; with one run, when
// they differ by more than OneRunMargin. A backend joins a tier when it cannot be told apart from
// one of its members, so each tier is told apart from the next.
func Tiers(figures []Ranked, lowerBetter bool) [][]Ranked {
	sorted := slices.Clone(figures)
	slices.SortStableFunc(sorted, func(a, b Ranked) int {
		if lowerBetter {
			return cmpFloat(a.Value, b.Value)
		}
		return cmpFloat(b.Value, a.Value)
	})
	var tiers [][]Ranked
	for _, f := range sorted {
		if n := len(tiers); n > 0 && slices.ContainsFunc(tiers[n-1], func(m Ranked) bool { return !Apart(m, f) }) {
			tiers[n-1] = append(tiers[n-1], f)
			continue
		}
		tiers = append(tiers, []Ranked{f})
	}
	return tiers
}

// Apart says whether two figures can be told apart (Tiers' rule).
func Apart(a, b Ranked) bool {
	if a.Runs > 1 && b.Runs > 1 {
		return a.Hi < b.Lo || b.Hi < a.Lo
	}
	lo, hi := math.Min(a.Value, b.Value), math.Max(a.Value, b.Value)
	if lo == 0 {
		return hi > 0 // nothing against something
	}
	return lo > 0 && hi/lo > 1+OneRunMargin
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
