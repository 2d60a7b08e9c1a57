package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"persistlab/measure"
)

// Comparison marks: a change under SameWithin is shown as no change.
const SameWithin = 0.02

// CompareRow is one metric of one backend at one VU level in two results files.
type CompareRow struct {
	Backend string  `json:"backend"`
	VUs     int     `json:"vus"`
	Metric  string  `json:"metric"`
	A       float64 `json:"a"` // median over A's runs
	B       float64 `json:"b"`
	Ratio   float64 `json:"ratio"` // B / A
	Mark    string  `json:"mark"`  // better, worse, same (for B against A)
	// Verdict is given only where the runs' spread allows: both sides need two or more runs, and
	// the ranges of their runs must not overlap.
	Verdict string `json:"verdict"`
}

type metric struct {
	name         string
	higherBetter bool
	get          func(Cell) float64
}

var compareMetrics = []metric{
	{"med_ms", false, func(c Cell) float64 { return c.Summary.MedMs }},
	{"avg_ms", false, func(c Cell) float64 { return c.Summary.AvgMs }},
	{"p95_ms", false, func(c Cell) float64 { return c.Summary.P95Ms }},
	{"p99_ms", false, func(c Cell) float64 { return c.Summary.P99Ms }},
	{"rate", true, func(c Cell) float64 { return c.Summary.Rate }},
}

// Compare lines up a and b cell by cell (backend and VU level) and rates each metric's change.
// Only-in-one cells are returned as missing.
func Compare(a, b *Results) (rows []CompareRow, missing []string) {
	group := func(r *Results) (map[cellKey][]Cell, []cellKey) {
		return groupByBackendVUs(r, r.Cells, func(c Cell) (cellKey, bool) { return cellKey{c.Backend, c.VUs}, c.Failure == "" })
	}
	ga, order := group(a)
	gb, orderB := group(b)
	for _, k := range order {
		cb, ok := gb[k]
		if !ok {
			missing = append(missing, fmt.Sprintf("%s at %d VUs only in A", k.backend, k.vus))
			continue
		}
		for _, m := range compareMetrics {
			va, vb := values(ga[k], m.get), values(cb, m.get)
			row := CompareRow{Backend: k.backend, VUs: k.vus, Metric: m.name, A: measure.Median(va), B: measure.Median(vb)}
			row.Ratio = row.B / row.A
			improved := (row.B < row.A) != m.higherBetter
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
			missing = append(missing, fmt.Sprintf("%s at %d VUs only in B", k.backend, k.vus))
		}
	}
	return rows, missing
}

func values(cells []Cell, get func(Cell) float64) []float64 {
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
func WriteComparison(w io.Writer, aName, bName string, a, b *Results) {
	rows, missing := Compare(a, b)
	fmt.Fprintf(w, "A: %s (%s, %s)\nB: %s (%s, %s)\n", aName, a.Scenario.Name, a.Started.Format("2006-01-02 15:04"),
		bName, b.Scenario.Name, b.Started.Format("2006-01-02 15:04"))
	fmt.Fprintf(w, "B/A per metric, medians over runs; latency lower is better, rate higher; changes under %.0f%% are \"same\"\n\n", SameWithin*100)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\tvus\tmetric\tA\tB\tB/A\tmark\tverdict")
	for _, r := range rows {
		sign := map[string]string{"better": "+ better", "worse": "- worse", "same": "= same"}[r.Mark]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.3f\t%.3f\t%.2fx\t%s\t%s\n", r.Backend, r.VUs, r.Metric, r.A, r.B, r.Ratio, sign, r.Verdict)
	}
	tw.Flush()
	for _, m := range missing {
		fmt.Fprintln(w, m)
	}
}
