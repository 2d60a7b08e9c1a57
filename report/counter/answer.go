package counter

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// counterAnswer answers an HTTP load's question: which backend answers faster as load grows (the
// slope of average latency against VUs, seed 000's headline), or at the heaviest load where VUs
// are not swept; what instances sharing a database lost; and whether crashes were measured.
func counterAnswer(r *results.Results, a *report.Answer) {
	mode := report.FixedParams(r)["mode"]
	slopes := slopesByRun(r)
	switch {
	case instancesRun(r):
		a.Question = "What happens when several instances of the app share one database?"
	case len(slopes) > 0:
		a.Question = "Which backend answers the app's requests faster as virtual users are added, and at what cost?"
	case mode == "open":
		a.Question = "How fast does the app answer on each backend at this rate of requests, and at what cost?"
	default:
		a.Question = "How fast does the app answer on each backend, and at what cost?"
	}
	if len(slopes) > 0 {
		a.Findings = append(a.Findings, slopeFindings(slopes)...)
	} else if f := heaviestLoadFinding(r); f != "" {
		a.Findings = append(a.Findings, f)
	}
	a.Findings = append(a.Findings, instancesNotes(r)...)
	if r.Scenario.Seed == "000" && len(r.Cells) > 0 && !instancesRun(r) {
		a.AddClaims("000", seed000Claims(r, slopes)...)
	}
	if len(r.Crashes) == 0 && len(r.Cells) > 0 && !instancesRun(r) {
		switch crash := r.Scenario.Name + "-crash"; {
		case slices.Contains(scenario.Builtins(), crash):
			a.Caveats = append(a.Caveats, "acknowledged writes lost on a crash: not measured by this run; persistlab run "+crash+" measures them")
		case r.WorkloadType() == "http" && (r.Scenario.Workload.Params["ack"] == "" || r.Scenario.Workload.Params["recover"] == ""):
			a.Caveats = append(a.Caveats, "acknowledged writes lost on a crash: not measured (crash runs need the app's ack field and recover path)")
		default:
			a.Caveats = append(a.Caveats, "acknowledged writes lost on a crash: not measured by this run; "+report.RerunCommand(r)+" --crash 5 measures them")
		}
	}
}

// slopesByRun is each backend's slope of avg latency against VUs, one per repeat, in the run's
// backend order; none where VUs were not swept.
func slopesByRun(r *results.Results) []report.Ranked {
	type key struct {
		backend string
		repeat  int
	}
	x, y := map[key][]float64{}, map[key][]float64{}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("count") == 0 {
			continue
		}
		k := key{c.Backend, c.Repeat}
		x[k] = append(x[k], results.ParamNumber(c.Params["vus"]))
		y[k] = append(y[k], c.M("avg_ms"))
	}
	var out []report.Ranked
	for _, f := range r.Fits {
		runs := []float64{}
		for k := range x {
			if k.backend != f.Backend || len(slices.Compact(slices.Sorted(slices.Values(x[k])))) < 2 {
				continue
			}
			if s := measure.SlopeThroughOrigin(x[k], y[k]); !math.IsNaN(s) && !math.IsInf(s, 0) {
				runs = append(runs, s)
			}
		}
		rk := report.Ranked{Backend: f.Backend, Value: f.AvgMsPerVU, Lo: f.AvgMsPerVU, Hi: f.AvgMsPerVU, Runs: 1}
		if len(runs) > 1 {
			rk.Lo, rk.Hi, rk.Runs = slices.Min(runs), slices.Max(runs), len(runs)
		}
		out = append(out, rk)
	}
	return out
}

// slopeFindings say how fast latency grows per VU on each backend, and which backends this run
// can tell apart.
func slopeFindings(slopes []report.Ranked) []string {
	var each []string
	for _, s := range slopes {
		text := fmt.Sprintf("%s %.2f ms", s.Backend, s.Value)
		if s.Runs > 1 {
			text += fmt.Sprintf(" (%.2f-%.2f over %d runs)", s.Lo, s.Hi, s.Runs)
		}
		each = append(each, text)
	}
	out := []string{"average latency grows per added virtual user by: " + strings.Join(each, ", ")}
	if len(slopes) < 2 {
		return out
	}
	tiers := report.Tiers(slopes, true)
	if len(tiers) == 1 {
		return append(out, "this run cannot tell "+report.ListAnd(names(tiers[0]))+" apart")
	}
	best := tiers[0][0].Value
	var parts []string
	for i, tier := range tiers {
		who := report.ListAnd(names(tier))
		if len(tier) > 1 {
			who += " (cannot be told apart)"
		}
		if i == 0 {
			parts = append(parts, who+" answer fastest as load grows")
			if len(tier) == 1 {
				parts[0] = who + " answers fastest as load grows"
			}
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", who, slowerText(tier, best)))
	}
	return append(out, strings.Join(parts, "; "))
}

// slowerText is "1.8x slower per VU", or "1.7-1.8x" over a tier.
func slowerText(tier []report.Ranked, best float64) string {
	lo, hi := math.Inf(1), 0.0
	for _, s := range tier {
		lo, hi = min(lo, s.Value/best), max(hi, s.Value/best)
	}
	if fmt.Sprintf("%.1f", lo) == fmt.Sprintf("%.1f", hi) {
		return fmt.Sprintf("%.1fx slower per VU", lo)
	}
	return fmt.Sprintf("%.1f-%.1fx slower per VU", lo, hi)
}

func names(tier []report.Ranked) []string {
	var out []string
	for _, s := range tier {
		out = append(out, s.Backend)
	}
	return out
}

// heaviestLoadFinding ranks the backends by p95 latency at the run's last sweep point (the
// heaviest load where VUs or the rate grow), where VUs are not swept.
func heaviestLoadFinding(r *results.Results) string {
	var ranked []report.Ranked
	point := ""
	for _, b := range r.BackendOrder() {
		rows := r.AggregatesOf(b)
		if len(rows) == 0 {
			continue
		}
		last := rows[len(rows)-1]
		if _, ok := last.Median["p95_ms"]; !ok {
			continue
		}
		point = last.Point
		rk := report.Ranked{Backend: b, Value: last.Median["p95_ms"], Lo: math.Inf(1), Runs: last.Runs}
		for _, c := range r.Cells {
			if c.Backend == b && c.Failure == "" && r.Key(c.Cell).Point == last.Point {
				rk.Lo, rk.Hi = min(rk.Lo, c.M("p95_ms")), max(rk.Hi, c.M("p95_ms"))
			}
		}
		ranked = append(ranked, rk)
	}
	if len(ranked) == 0 {
		return ""
	}
	var each []string
	for _, s := range ranked {
		each = append(each, fmt.Sprintf("%s %.1f ms", s.Backend, s.Value))
	}
	where := ""
	if point != "" {
		where = " at " + point
	}
	text := "p95 latency" + where + ": " + strings.Join(each, ", ")
	if len(ranked) > 1 {
		tiers := report.Tiers(ranked, true)
		if len(tiers) == 1 {
			text += "; this run cannot tell them apart"
		} else {
			text += "; fastest: " + report.ListAnd(names(tiers[0]))
		}
	}
	return text
}

// instancesRun says whether the run's cells ran several instances on one backend.
func instancesRun(r *results.Results) bool {
	for _, c := range r.Cells {
		if c.M("instances") >= 2 {
			return true
		}
	}
	return false
}

// seed000SlopeRatio is seed 000's headline: gcsfuse's slope of avg latency against VUs over
// Litestream's, 8.19 and 4.77 ms per VU (「係数は、8.19 と 4.77 である。約1.7倍の差がある」).
const seed000SlopeRatio = 8.19 / 4.77

// seed000MinGapMs is how much slower seed 000 found gcsfuse's fastest request than Litestream's
// (「Litestream と Cloud Storage マウントの差は約 2 ms」).
const seed000MinGapMs = 2.0

// seed000Claims judges what seed 000 concludes, on its two configurations (the backends named
// gcsfuse and litestream), in the tables' figures: the slopes, each VU level's avg and min, the
// app's CPU.
func seed000Claims(r *results.Results, slopes []report.Ranked) []report.Claim {
	rowsOf := func(b string) map[string]results.Aggregate {
		out := map[string]results.Aggregate{}
		for _, a := range r.AggregatesOf(b) {
			out[a.Params["vus"]] = a
		}
		return out
	}
	gcs, ls := rowsOf("gcsfuse"), rowsOf("litestream")
	var out []report.Claim
	missing := ""
	switch {
	case len(gcs) == 0 && len(ls) == 0:
		missing = "the run has neither gcsfuse nor litestream"
	case len(gcs) == 0:
		missing = "the run has no gcsfuse"
	case len(ls) == 0:
		missing = "the run has no litestream"
	}
	slope := map[string]report.Ranked{}
	for _, s := range slopes {
		slope[s.Backend] = s
	}
	// 結論: 「書き込み性能においては Litestream が Google Cloud Storage マウント (GCS fuse) を上回る(約1.7倍)」
	const faster = "Litestream answers writes about 1.7x faster than gcsfuse as load grows"
	g, gok := slope["gcsfuse"]
	l, lok := slope["litestream"]
	switch {
	case missing != "":
		out = append(out, report.NotJudged(faster, missing))
	case !gok || !lok || l.Value <= 0:
		out = append(out, report.NotJudged(faster, "VUs were not swept, so there is no slope"))
	default:
		ratio := g.Value / l.Value
		figures := fmt.Sprintf("%.2fx: %.2f vs %.2f ms per VU", ratio, g.Value, l.Value)
		c := report.Ahead(faster, l, g, true, figures)
		if c.Verdict == report.True && !report.About(ratio, seed000SlopeRatio) {
			c = report.Claim{Text: faster, Verdict: report.Partly, Why: figures + ": faster, not by about 1.7x"}
		}
		out = append(out, c)
	}
	// 考察: 「全体的なレイテンシは、Litestream の方が低く」
	const lower = "Litestream's average latency is lower at every load"
	var marks []string
	for _, a := range r.AggregatesOf("gcsfuse") {
		if b, ok := ls[a.Params["vus"]]; ok {
			x, y := report.RankedOf(r, a, "avg_ms"), report.RankedOf(r, b, "avg_ms")
			marks = append(marks, report.Compared(y, x, true, fmt.Sprintf("%s %.2f vs %.2f ms", a.Point, x.Value, y.Value)))
		}
	}
	if missing != "" {
		out = append(out, report.NotJudged(lower, missing))
	} else {
		out = append(out, report.Counted(lower, marks))
	}
	// 考察: 「avg (相加平均)はどちらもほぼ線形に増加している」: through 0, as the seed fitted it, so avg
	// per VU stays within the one-run margin from the fewest VUs to the most.
	const linear = "average latency grows in proportion to VUs on both"
	marks = nil
	for _, b := range []string{"gcsfuse", "litestream"} {
		lo, hi := math.Inf(1), 0.0
		for _, a := range r.AggregatesOf(b) {
			if v := results.ParamNumber(a.Params["vus"]); v > 0 {
				lo, hi = min(lo, a.Median["avg_ms"]/v), max(hi, a.Median["avg_ms"]/v)
			}
		}
		if hi > 0 && len(r.AggregatesOf(b)) > 1 {
			marks = append(marks, report.Mark(hi <= lo*(1+report.OneRunMargin), fmt.Sprintf("%s %.2f-%.2f ms per VU", b, lo, hi)))
		}
	}
	switch {
	case missing != "":
		out = append(out, report.NotJudged(linear, missing))
	case len(marks) == 0:
		out = append(out, report.NotJudged(linear, "VUs were not swept"))
	default:
		out = append(out, report.Counted(linear, marks))
	}
	// 考察: 「min レイテンシを全体的に見たときに、ほぼ変わらない ... 差は約 2 ms」
	const minGap = "gcsfuse's fastest request is about 2 ms slower than Litestream's"
	lowest := func(rows map[string]results.Aggregate) float64 {
		v := math.Inf(1)
		for _, a := range rows {
			v = min(v, a.Median["min_ms"])
		}
		return v
	}
	gm, lm := lowest(gcs), lowest(ls)
	switch {
	case missing != "":
		out = append(out, report.NotJudged(minGap, missing))
	case gm <= 0 || lm <= 0 || math.IsInf(gm, 0) || math.IsInf(lm, 0):
		out = append(out, report.NotJudged(minGap, "no row recorded its fastest request"))
	default:
		gap := gm - lm
		why := fmt.Sprintf("min %.2f vs %.2f ms, %.2f ms apart", gm, lm, gap)
		switch {
		case report.About(gap, seed000MinGapMs):
			out = append(out, report.Claim{Text: minGap, Verdict: report.True, Why: why})
		case gap > 0:
			out = append(out, report.Claim{Text: minGap, Verdict: report.Partly, Why: why + ": slower, not by about 2 ms"})
		default:
			out = append(out, report.Claim{Text: minGap, Verdict: report.False, Why: why})
		}
	}
	// 仕様: 「CPU utilization はほぼ 100 %」 on both; 考察: 「純粋に CPU と書き込みの待ち時間が処理に影響」
	const cpu = "the app's CPU is nearly 100% busy on both"
	marks = nil
	for _, b := range []string{"gcsfuse", "litestream"} {
		lo, hi, n := math.Inf(1), 0.0, 0
		for _, a := range r.AggregatesOf(b) {
			if v, ok := a.Median["app_cpu_util"]; ok {
				lo, hi, n = min(lo, v), max(hi, v), n+1
			}
		}
		if n > 0 {
			marks = append(marks, report.Mark(lo >= 0.9, fmt.Sprintf("%s %.0f-%.0f%%", b, 100*lo, 100*hi)))
		}
	}
	if missing != "" {
		out = append(out, report.NotJudged(cpu, missing))
	} else {
		out = append(out, report.Counted(cpu, marks))
	}
	return out
}
