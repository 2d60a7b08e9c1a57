package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"persistlab/measure"
	"persistlab/results"
)

// Comparison marks: a change under SameWithin is shown as no change.
const SameWithin = 0.02

// CompareRow is one metric of one backend at one sweep point in two results files.
type CompareRow struct {
	Backend string  `json:"backend"`
	Point   string  `json:"point"`
	Metric  string  `json:"metric"`
	A       float64 `json:"a"` // median over A's runs
	B       float64 `json:"b"`
	Ratio   float64 `json:"ratio"` // B / A
	Mark    string  `json:"mark"`  // better, worse, same (for B against A)
	// Verdict is given only where the runs' spread allows: both sides need two or more runs, and
	// the ranges of their runs must not overlap.
	Verdict string `json:"verdict"`
}

// compareMetrics is what compare rates for r's workload: its presenter's list, else every metric
// the cells carry (lower taken as better, since no direction is known).
func compareMetrics(r *results.Results) []CompareMetric {
	if m := presenterOf(r).Compare; len(m) > 0 {
		return m
	}
	names := map[string]bool{}
	for _, c := range r.Cells {
		for k := range c.Metrics {
			names[k] = true
		}
	}
	var out []CompareMetric
	for k := range names {
		out = append(out, CompareMetric{Name: k})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Compare lines up a and b cell by cell (backend and sweep point) and rates each metric's change.
// Only-in-one cells are returned as missing; warnings say where the two runs differ in kind.
func Compare(a, b *results.Results) (rows []CompareRow, missing []string) {
	group := func(r *results.Results) (map[results.PointKey][]results.Cell, []results.PointKey) {
		return results.GroupByPoint(r, r.Cells, func(c results.Cell) (results.PointKey, bool) { return r.Key(c.Cell), c.Failure == "" })
	}
	ga, order := group(a)
	gb, orderB := group(b)
	for _, k := range order {
		cb, ok := gb[k]
		if !ok {
			missing = append(missing, fmt.Sprintf("%s at %s only in A", k.Backend, k.Point))
			continue
		}
		for _, m := range compareMetrics(a) {
			get := func(c results.Cell) float64 { return c.M(m.Name) }
			va, vb := values(ga[k], get), values(cb, get)
			row := CompareRow{Backend: k.Backend, Point: k.Point, Metric: m.Name, A: measure.Median(va), B: measure.Median(vb)}
			row.Ratio = row.B / row.A
			improved := (row.B < row.A) != m.HigherBetter
			switch {
			case math.IsNaN(row.Ratio) || math.Abs(row.Ratio-1) < SameWithin:
				row.Mark = "same"
			case improved:
				row.Mark = "better"
			default:
				row.Mark = "worse"
			}
			switch {
			case len(va) < 2 || len(vb) < 2:
				row.Verdict = "no verdict: fewer than 2 runs"
			case maxOf(va) < minOf(vb) || maxOf(vb) < minOf(va):
				row.Verdict = row.Mark + " beyond the runs' spread"
			default:
				row.Verdict = "within the runs' spread"
			}
			rows = append(rows, row)
		}
	}
	for _, k := range orderB {
		if _, ok := ga[k]; !ok {
			missing = append(missing, fmt.Sprintf("%s at %s only in B", k.Backend, k.Point))
		}
	}
	return rows, missing
}

// differences lists what makes a and b different experiments, beyond the measured values.
func differences(a, b *results.Results) []string {
	var out []string
	if a.WorkloadType() != b.WorkloadType() {
		out = append(out, fmt.Sprintf("workload %q against %q", a.WorkloadType(), b.WorkloadType()))
	}
	pa, pb := FixedParams(a), FixedParams(b)
	keys := map[string]bool{}
	for k := range pa {
		keys[k] = true
	}
	for k := range pb {
		keys[k] = true
	}
	var diff []string
	for k := range keys {
		if a.Scenario.Sweep.Has(k) || b.Scenario.Sweep.Has(k) {
			continue // a swept parameter is compared point by point
		}
		if unknownTo(a, pa, k) || unknownTo(b, pb, k) {
			continue // a file of another version or workload, which had no such parameter
		}
		if pa[k] != pb[k] {
			diff = append(diff, fmt.Sprintf("%s: %q against %q", k, pa[k], pb[k]))
		}
	}
	sort.Strings(diff)
	out = append(out, diff...)
	if a.Scenario.Duration != b.Scenario.Duration {
		out = append(out, fmt.Sprintf("duration %s against %s", a.Scenario.Duration, b.Scenario.Duration))
	}
	return out
}

// unknownTo says whether r's run had no parameter k: its file records its parameters' defaults,
// and k is neither among them nor fixed (a parameter a later version added).
func unknownTo(r *results.Results, fixed map[string]string, k string) bool {
	_, known := fixed[k]
	return len(r.Defaults) > 0 && !known
}

func values(cells []results.Cell, get func(results.Cell) float64) []float64 {
	out := make([]float64, len(cells))
	for i, c := range cells {
		out[i] = get(c)
	}
	return out
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// WriteComparison prints the comparison of a (the baseline) and b.
func WriteComparison(w io.Writer, aName, bName string, a, b *results.Results) {
	fmt.Fprintf(w, "A: %s (%s, %s)\nB: %s (%s, %s)\n", aName, a.Scenario.Name, a.Started.Format("2006-01-02 15:04"),
		bName, b.Scenario.Name, b.Started.Format("2006-01-02 15:04"))
	if !comparable(a, b) {
		fmt.Fprintf(w, "nothing to compare: A ran workload %q and B workload %q, whose cells measure different things\n", a.WorkloadType(), b.WorkloadType())
		return
	}
	rows, missing := Compare(a, b)
	fmt.Fprintf(w, "B/A per metric, medians over runs; latency lower is better, rate higher; changes under %.0f%% are \"same\"\n\n", SameWithin*100)
	if diff := differences(a, b); len(diff) > 0 {
		fmt.Fprintf(w, "warning: A and B are different experiments, so their ratios mix the storage with the set-up:\n  %s\n\n", strings.Join(diff, "\n  "))
	}
	tw := NewTable(w, 0)
	fmt.Fprintln(tw, "backend\tpoint\tmetric\tA\tB\tB/A\tmark\tverdict")
	for _, r := range rows {
		sign := map[string]string{"better": "+ better", "worse": "- worse", "same": "= same"}[r.Mark]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f\t%.2fx\t%s\t%s\n", r.Backend, r.Point, r.Metric, r.A, r.B, r.Ratio, sign, r.Verdict)
	}
	tw.Flush()
	for _, m := range missing {
		fmt.Fprintln(w, m)
	}
	if p := presenterOf(a); p.Beside != nil {
		p.Beside(w, a, b)
	}
}

// comparable says whether a's and b's cells measure the same things: one workload, or two of one
// family (seed 000's Go counter and a real app under the same HTTP load).
func comparable(a, b *results.Results) bool { return Comparable(a.WorkloadType(), b.WorkloadType()) }
