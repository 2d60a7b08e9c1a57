package counter

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"persistlab/report"
	"persistlab/results"
)

// ratioText is x/y as "1.23x", or "-" where y gives no ratio (a slope of 0).
func ratioText(x, y float64) string {
	if y <= 0 || math.IsNaN(x) || math.IsNaN(y) {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x/y)
}

// slopesBeside sets seed 000's slopes of A, B and the seed side by side, per backend and for
// each pair of backends: whether one app stands in for another where the seed is the judge.
func slopesBeside(w io.Writer, a, b *results.Results) {
	if len(a.Fits) == 0 || len(b.Fits) == 0 {
		return
	}
	fitOf := func(r *results.Results, backend string) (results.Fit, bool) {
		for _, f := range r.Fits {
			if f.Backend == backend {
				return f, true
			}
		}
		return results.Fit{}, false
	}
	var both []string
	for _, f := range a.Fits {
		if _, ok := fitOf(b, f.Backend); ok {
			both = append(both, f.Backend)
		}
	}
	if len(both) == 0 {
		return
	}
	fmt.Fprintf(w, "\nslope of avg latency against VUs, ms per VU (least squares through 0, every run)\n")
	tw := report.NewTable(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\tA\tB\tseed\tB/A\t")
	seedOf := func(fa, fb results.Fit) float64 { return max(fa.Published, fb.Published) }
	for _, name := range both {
		fa, _ := fitOf(a, name)
		fb, _ := fitOf(b, name)
		seed := "-"
		if p := seedOf(fa, fb); p > 0 {
			seed = fmt.Sprintf("%.2f", p)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\t%s\t\n", name, fa.AvgMsPerVU, fb.AvgMsPerVU, seed, ratioText(fb.AvgMsPerVU, fa.AvgMsPerVU))
	}
	for i := 0; i < len(both); i++ {
		for j := i + 1; j < len(both); j++ {
			a1, _ := fitOf(a, both[i])
			a2, _ := fitOf(a, both[j])
			b1, _ := fitOf(b, both[i])
			b2, _ := fitOf(b, both[j])
			seed := "-"
			if p1, p2 := seedOf(a1, b1), seedOf(a2, b2); p1 > 0 && p2 > 0 {
				seed = fmt.Sprintf("%.2fx", p1/p2)
			}
			fmt.Fprintf(tw, "%s / %s\t%s\t%s\t%s\t\t\n", both[i], both[j], ratioText(a1.AvgMsPerVU, a2.AvgMsPerVU), ratioText(b1.AvgMsPerVU, b2.AvgMsPerVU), seed)
		}
	}
	tw.Flush()
}
