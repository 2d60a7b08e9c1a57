package counter

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"persistlab/lab"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// counterDifferences says, after the seed's numbers beside ours, which differences remain
// and what in this run explains each, in one paragraph whose every figure the tables above hold.
func counterDifferences(w io.Writer, r *results.Results) {
	if r.Scenario == nil || len(r.Scenario.Published) == 0 {
		return // nothing published to differ from
	}
	fixed := report.FixedParams(r)
	var parts []string
	var slopes []results.Fit
	for _, f := range r.Fits {
		if f.Published > 0 {
			slopes = append(slopes, f)
		}
	}
	if len(slopes) == 2 {
		a, b := slopes[0], slopes[1]
		parts = append(parts, fmt.Sprintf("%s costs %.2fx %s's latency per VU where the seed's cost %.2fx (slopes %.2f and %.2f ms/VU; seed %.2f and %.2f)",
			a.Backend, a.AvgMsPerVU/b.AvgMsPerVU, b.Backend, a.Published/b.Published, a.AvgMsPerVU, b.AvgMsPerVU, a.Published, b.Published))
	}
	var floors []float64
	at := commonTailPoint(r)
	for _, b := range r.BackendOrder() {
		p := r.Published(b)
		if p == nil {
			continue
		}
		for _, sr := range report.SeedRows(r, p) {
			if seed, ok := sr.Seed(p, "min_ms"); ok && seed > 0 {
				floors = append(floors, sr.Ours.Median["min_ms"]/seed)
			}
		}
		if s := tailRatio(r, b, p, at); s != "" {
			parts = append(parts, s)
		}
	}
	if len(floors) > 0 {
		lo, hi := minMax(floors)
		rtt := fixed["network_rtt"]
		why := "the seed's client reached Cloud Run across the internet through its front end, a path this run does not model (network_rtt 0; no published figure), a constant that shifts both backends alike"
		if d, err := time.ParseDuration(rtt); err == nil && d > 0 {
			why = fmt.Sprintf("this run adds a network round trip of %s to every request (network_rtt)", rtt)
		}
		parts = append(parts, fmt.Sprintf("our fastest answers (min, in every row beside the seed) are %.2f-%.2fx the seed's: %s", lo, hi, why))
	}
	for _, b := range r.BackendOrder() {
		if s := tailsOf(r, b); s != "" {
			parts = append(parts, s)
		}
	}
	if quota := fixed["cpu_quota"]; quota != "0" && quota != "" {
		var shares []float64
		for _, c := range r.Cells {
			if v, ok := c.Metrics["cpu_throttled_share"]; ok && c.Failure == "" {
				shares = append(shares, v)
			}
		}
		if len(shares) > 0 {
			lo, hi := minMax(shares)
			parts = append(parts, fmt.Sprintf("the instance's CPU limit (cpu_quota %s, app and %s together) ran out in %.0f-%.0f%% of its periods; each time every thread waits for the next period, which lengthens the tails of both backends",
				quota, strings.Join(r.BackendOrder(), " or "), 100*lo, 100*hi))
		}
	} else if cpus := fixed["cpus"]; cpus != "" && cpus != "0" && r.WorkloadType() == "counter" {
		parts = append(parts, fmt.Sprintf("the app is pinned to %s core(s) (cpus) for the seed's 1 vCPU; a CPU quota instead (cpu_quota) was tried and moves nothing toward the seed (docs/design.md)", cpus))
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(w, "\nwhat still differs from the seed, and why (every figure is in the tables above):\n  %s.\n", report.WrapText(strings.Join(parts, "; "), 100))
}

// tailRows are the rows of backend b's published table where its tail (p90 over the median) is
// both published and measured, in the table's order.
func tailRows(r *results.Results, p *scenario.Published) []report.SeedRow {
	var out []report.SeedRow
	for _, sr := range report.SeedRows(r, p) {
		p90, ok1 := sr.Seed(p, "p90_ms")
		med, ok2 := sr.Seed(p, "med_ms")
		if ok1 && ok2 && med > 0 && p90 > 0 && sr.Ours.Median["med_ms"] > 0 {
			out = append(out, sr)
		}
	}
	return out
}

// commonTailPoint is the first point of the seed's tables (seed 000's lowest VU level) at which
// every backend with a published table has its tail, so the backends' tails are told at one
// point; "" if they share none.
func commonTailPoint(r *results.Results) string {
	var lists [][]string
	for _, b := range r.BackendOrder() {
		if p := r.Published(b); p != nil {
			var points []string
			for _, sr := range tailRows(r, p) {
				points = append(points, sr.Ours.Point)
			}
			lists = append(lists, points)
		}
	}
	if len(lists) == 0 {
		return ""
	}
	for _, point := range lists[0] {
		shared := true
		for _, l := range lists[1:] {
			shared = shared && slices.Contains(l, point)
		}
		if shared {
			return point
		}
	}
	return ""
}

// tailRatio compares the tail the seed shows first, p90 over the median, ours and the seed's from
// the same row: the one at point (shared by every backend), else the first of its table we measured.
func tailRatio(r *results.Results, b string, p *scenario.Published, point string) string {
	for _, sr := range tailRows(r, p) {
		if point != "" && sr.Ours.Point != point {
			continue
		}
		p90, _ := sr.Seed(p, "p90_ms")
		med, _ := sr.Seed(p, "med_ms")
		a := sr.Ours
		ours, seed := a.Median["p90_ms"]/a.Median["med_ms"], p90/med
		s := fmt.Sprintf("%s's p90 is %.2fx its median at %s where the seed's was %.2fx", b, ours, vusText(a), seed)
		if ours-1 < (seed-1)/2 {
			s += " (no model factor tried brings that tail back: docs/design.md lists them)"
		}
		return s
	}
	return ""
}

// vusText names a row's point: "2 VUs" where the sweep is over VUs alone, else the point.
func vusText(a *results.Aggregate) string {
	if v := a.Params["vus"]; v != "" && (a.Point == "" || a.Point == "vus="+v) {
		return v + " VUs"
	}
	return a.Point
}

// tailsOf explains a bucket backend's slowest answers from the slow-moments table: how many of
// its slow windows a bucket write overlaps, the slowest answer in windows with a write and without
// (both from the same cells: those that had windows of each kind), and the per-object limit's
// 429s, which gcsfuse retries after a randomized backoff.
func tailsOf(r *results.Results, b string) string {
	var slow, withWrite, cells int
	var maxWith, maxWithout []float64
	var points []string // the cells both medians come from
	writes := false     // a backend without a bucket (local disk) has nothing to line up
	for _, c := range r.Cells {
		if c.Backend != b || c.Failure != "" || c.Repeat > 1 {
			continue
		}
		if m, ok := momentsOf(c); ok {
			cells++
			slow, withWrite, writes = slow+m.Slow, withWrite+m.AnyWrite, writes || len(m.WriteKinds) > 0
			// A cell with a write in every window, or in none, has only one of the two medians:
			// left out of both, so that they compare the same cells (the same VU levels).
			if m.Written > 0 && m.Windows > m.Written {
				maxWith = append(maxWith, m.MaxWithWrite)
				maxWithout = append(maxWithout, m.MaxWithout)
				points = append(points, c.Point(r.Scenario.Sweep))
			}
		}
	}
	if slow == 0 || !writes {
		return ""
	}
	s := fmt.Sprintf("%d of %s's %d slow windows coincide with a bucket write", withWrite, b, slow)
	if len(points) > 0 {
		which := "its cells"
		if len(points) < cells {
			which = fmt.Sprintf("its cells at %s only (the others had a write in every window or in none)", report.ListAnd(points))
		} else if len(points) <= 3 {
			which = "its cells at " + report.ListAnd(points)
		}
		s += fmt.Sprintf(" (slowest answer in windows with one %.0f ms, without %.0f ms: the medians over %s of each cell's median over its windows)",
			measure.Median(maxWith), measure.Median(maxWithout), which)
	}
	var throttled []float64
	for _, c := range r.Cells {
		if c.Backend == b && c.Failure == "" {
			throttled = append(throttled, c.BackendStats[lab.BucketThrottled])
		}
	}
	if n := measure.Median(throttled); n > 0 {
		s += fmt.Sprintf(", and the bucket's per-object limit (one write per second per object, as GCS publishes it; the burst of 3 is an assumption) answered a median %.0f 429s per run, which %s retries after a randomized backoff (about a second, then two)", n, b)
	}
	return s
}

// minMax is the smallest and largest of v (not empty).
func minMax(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
