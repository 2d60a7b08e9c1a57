package report

import (
	"fmt"

	"persistlab/results"
	"persistlab/scenario"
)

// costCharts are the bucket's cost per month per row, and the writes each backend lost in a crash
// against that cost: drawn where the run priced something, never as a chart of zeros.
func costCharts(r *results.Results) []Chart {
	var out []Chart
	if c, ok := costChart(r); ok {
		out = append(out, c)
	}
	if c, ok := lostAgainstCostChart(r); ok {
		out = append(out, c)
	}
	return out
}

// costChart is a bar per row on a bucket: its requests' cost per month at the row's measured rate
// of operations, at the first price list. Rows too thin to price are named under it, not drawn.
func costChart(r *results.Results) (Chart, bool) {
	prices := priceLists(r)
	c := Chart{ID: "cost", Title: fmt.Sprintf("Bucket requests' cost per month at each row's measured rate (%s list prices)", prices[0].Name),
		XLabel: "USD per month", XUnit: UnitUSD}
	var thin, bucketless []string
	priced := false
	for _, b := range r.BackendOrder() {
		onBucket := false
		for _, a := range r.AggregatesOf(b) {
			u := a.Bucket
			if u == nil {
				continue
			}
			onBucket = true
			month, ok := rowMonth(prices, u)
			if !ok {
				thin = append(thin, scenario.Label(a.Backend, a.Point))
				continue
			}
			c.Bars = append(c.Bars, Bar{Label: scenario.Label(a.Backend, a.Point), Group: a.Backend, Value: month})
			priced = priced || month > 0
		}
		if !onBucket && len(r.AggregatesOf(b)) > 0 {
			bucketless = append(bucketless, b)
		}
	}
	if !priced {
		return Chart{}, false
	}
	c.Note = costNote(thin, bucketless)
	return c, true
}

// rowMonth is a row's bucket cost per month at its measured rate: its price, or where its work was
// too little to price per unit (†), its rate of operations; not ok where it is too thin to price.
func rowMonth(prices []scenario.Price, u *results.BucketUse) (float64, bool) {
	switch {
	case u.TooLittleWork:
		return bucketMonth(prices, u), true
	case u.TooFewToPrice || len(u.Costs) == 0:
		return 0, false
	}
	return u.Costs[0].USDPerMonth, true
}

// costNote names what a cost chart leaves out.
func costNote(thin, bucketless []string) string {
	note := ""
	if len(thin) > 0 {
		note = fmt.Sprintf("Not drawn: %s, too few bucket operations in a run to price (the table's *).", ListAnd(thin))
	}
	if len(bucketless) > 0 {
		if note != "" {
			note += " "
		}
		note += fmt.Sprintf("No bucket, so no request cost: %s.", ListAnd(bucketless))
	}
	return note
}

// lostAgainstCostChart sets each crash row's acknowledged writes lost (median to max over its
// crashes) against its bucket's cost per month: priced from the crash runs' own operations, else
// from the steady runs at the same point; a backend without a bucket at $0.
func lostAgainstCostChart(r *results.Results) (Chart, bool) {
	prices := priceLists(r)
	c := Chart{ID: "lost-against-cost", Title: "Acknowledged writes lost per crash (median to max) against the bucket's cost per month",
		XLabel: fmt.Sprintf("USD per month (%s list prices, at the measured rate)", prices[0].Name), XUnit: UnitUSD, XFromZero: true,
		YLabel: "acknowledged writes lost", YUnit: UnitCount}
	var thin, bucketless []string
	drawn := false
	for _, s := range r.CrashSummaries {
		label := scenario.Label(s.Backend, s.Point)
		month, ok := crashMonth(r, prices, s)
		switch {
		case !ok && hasBucket(r, s):
			thin = append(thin, label)
			continue
		case !ok:
			bucketless = append(bucketless, s.Backend)
		}
		price := formatValue(month, UnitUSD) + "/month"
		if !ok {
			price = "no bucket"
		}
		lost := fmt.Sprintf("%.0f to %d lost", s.LostMedian, s.LostMax)
		if float64(s.LostMax) == s.LostMedian {
			lost = fmt.Sprintf("%d lost", s.LostMax)
		}
		name := fmt.Sprintf("%s: %s, %s", label, lost, price)
		pts := [][2]float64{{month, s.LostMedian}}
		if float64(s.LostMax) != s.LostMedian {
			pts = append(pts, [2]float64{month, float64(s.LostMax)})
		}
		c.Series = append(c.Series, Series{Name: name, Group: s.Backend, Style: "range", Points: pts})
		drawn = drawn || month > 0 || s.LostMax > 0
	}
	if !drawn {
		return Chart{}, false
	}
	c.Note = costNote(thin, bucketless)
	return c, true
}

// crashMonth is a crash row's bucket cost per month: from its crash runs, else from the steady
// rows of its backend and point; not ok where neither is priced.
func crashMonth(r *results.Results, prices []scenario.Price, s results.CrashSummary) (float64, bool) {
	if len(s.Costs) > 0 {
		return s.Costs[0].USDPerMonth, true
	}
	for _, a := range r.AggregatesOf(s.Backend) {
		if a.Point == s.Point && a.Bucket != nil {
			return rowMonth(prices, a.Bucket)
		}
	}
	return 0, false
}

// hasBucket says whether a crash row's backend counted bucket operations, in its crash runs or in
// its steady ones.
func hasBucket(r *results.Results, s results.CrashSummary) bool {
	if s.TooFewToPrice || s.ClassAPerS > 0 || len(s.Costs) > 0 {
		return true
	}
	for _, a := range r.AggregatesOf(s.Backend) {
		if a.Bucket != nil {
			return true
		}
	}
	return false
}
