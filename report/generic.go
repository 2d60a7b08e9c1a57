package report

import (
	"fmt"
	"sort"
	"strings"

	"persistlab/results"
)

// maxPointFindings bounds the sweep points a generic answer ranks one by one; the table has the
// rest.
const maxPointFindings = 6

// genericAnswer answers a workload whose presenter has no answer of its own: the backends ranked
// at each sweep point by the first metric its comparison rates, in the table's numbers; where it
// names none, what was measured, ranked by nothing.
func genericAnswer(r *results.Results, compare []CompareMetric, a *Answer) {
	if len(r.Aggregates) == 0 {
		return
	}
	if len(compare) == 0 {
		a.Question = "What did each backend measure?"
		a.Findings = append(a.Findings, measuredFinding(r))
		return
	}
	metric := compare[0]
	a.Question = fmt.Sprintf("Which backend does best on %s%s?", metric.Name, unitSuffix(r, metric.Name))
	ranked := RankPoints(r, metric, metric.Name+unitSuffix(r, metric.Name), "%.4g")
	if len(ranked) == 0 {
		ranked = append(ranked, fmt.Sprintf("no row measured %s: ", metric.Name)+measuredFinding(r))
	}
	a.Findings = append(a.Findings, ranked...)
}

// RankPoints ranks the backends at each sweep point by metric (named label, as the table heads
// it), in the tiers the run can tell apart, each figure in format (the table's) with its range
// over runs; at most maxPointFindings points, then a line saying how many more the table has.
func RankPoints(r *results.Results, metric CompareMetric, label, format string) []string {
	var points []string
	byPoint := map[string][]Ranked{}
	for _, agg := range r.Aggregates {
		if _, ok := agg.Median[metric.Name]; !ok {
			continue
		}
		if byPoint[agg.Point] == nil {
			points = append(points, agg.Point)
		}
		byPoint[agg.Point] = append(byPoint[agg.Point], RankedOf(r, agg, metric.Name))
	}
	better := "lowest first"
	if metric.HigherBetter {
		better = "highest first"
	}
	var out []string
	for i, p := range points {
		if i == maxPointFindings {
			out = append(out, fmt.Sprintf("and %d more sweep points: the table below has them", len(points)-i))
			break
		}
		where := label
		if p != "" {
			where += " at " + p
		}
		tiers := Tiers(byPoint[p], !metric.HigherBetter)
		text := TiersText(tiers, func(f Ranked) string { return f.Backend + " " + RangeText(f, format) })
		if len(byPoint[p]) > 1 {
			text = better + ": " + text
		}
		out = append(out, where+": "+text)
	}
	return out
}

// measuredFinding says what the run measured, where nothing says which way is better.
func measuredFinding(r *results.Results) string {
	names := map[string]bool{}
	points := map[string]bool{}
	for _, a := range r.Aggregates {
		points[a.Point] = true
		for m := range a.Median {
			names[m] = true
		}
	}
	var metrics []string
	for m := range names {
		metrics = append(metrics, m)
	}
	sort.Strings(metrics)
	if len(metrics) > 8 {
		metrics = append(metrics[:8], fmt.Sprintf("%d more", len(names)-8))
	}
	return fmt.Sprintf("%d backend(s) over %d sweep point(s) measured %s; this workload names no figure as better, so nothing is ranked: the table below has every median",
		len(r.BackendOrder()), len(points), strings.Join(metrics, ", "))
}
