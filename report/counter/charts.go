package counter

import (
	"fmt"
	"sort"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// counterCharts: latency against VUs (med, avg, p95 per backend, with the seed's as dashed lines),
// requests/s against VUs, and the latency distribution of the busiest cell of each backend.
func counterCharts(r *results.Results) ([]report.Chart, error) {
	latency := report.Chart{ID: "latency", Title: "Latency against virtual users (median over runs)", XLabel: "virtual users", XUnit: report.UnitCount,
		YLabel: "latency", YUnit: report.UnitMs}
	rate := report.Chart{ID: "rate", Title: "Requests per second against virtual users", XLabel: "virtual users", XUnit: report.UnitCount, YLabel: "requests/s"}
	for _, b := range r.BackendOrder() {
		med, avg, p95 := report.Series{Name: b + " med", Group: b, Style: "solid"}, report.Series{Name: b + " avg", Group: b, Style: "thick"}, report.Series{Name: b + " p95", Group: b, Style: "dotted"}
		rps := report.Series{Name: b, Group: b, Style: "thick"}
		for _, a := range r.Aggregates {
			if a.Backend != b {
				continue
			}
			x := a.Param("vus")
			med.Points = append(med.Points, [2]float64{x, a.Median["med_ms"]})
			avg.Points = append(avg.Points, [2]float64{x, a.Median["avg_ms"]})
			p95.Points = append(p95.Points, [2]float64{x, a.Median["p95_ms"]})
			rps.Points = append(rps.Points, [2]float64{x, a.Median["rate"]})
		}
		if len(med.Points) == 0 {
			continue
		}
		latency.Series = append(latency.Series, med, avg, p95)
		rate.Series = append(rate.Series, rps)
		if p := r.Published(b); p != nil {
			latency.Series = append(latency.Series, publishedSeries(p, "avg_ms", "seed "+b+" avg", b)...)
		}
	}
	dist := report.Chart{ID: "distribution", Title: "Latency distribution at the highest VU level (first run)", XLabel: "percentile", YLabel: "latency",
		YUnit: report.UnitMs, LogX: true, XTicks: spectrumTicks}
	for _, b := range r.BackendOrder() {
		cell := busiestCell(r, b)
		if cell == nil || cell.Histograms["latency"] == "" {
			continue
		}
		h, err := measure.DecodeHistogram(cell.Histograms["latency"])
		if err != nil {
			return nil, fmt.Errorf("cell %d: %w", cell.Index, err)
		}
		s := report.Series{Name: fmt.Sprintf("%s, %s VUs", b, cell.Params["vus"]), Group: b, Style: "thick"}
		// Percentile spectrum, as HdrHistogram plots it: x = 1/(1-p), so the tail gets room.
		for _, p := range []float64{0, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99} {
			v := float64(h.ValueAtPercentile(p)) / 1000
			if p == 0 {
				v = cell.M("min_ms")
			}
			s.Points = append(s.Points, [2]float64{1 / (1 - p/100), v})
		}
		s.Points = append(s.Points, [2]float64{spectrumMax, cell.M("max_ms")})
		dist.Series = append(dist.Series, s)
	}
	lost := report.Chart{ID: "crash-lost", Title: "Acknowledged writes lost per crash", XLabel: "crash", XUnit: report.UnitCount, YLabel: "writes lost", YUnit: report.UnitCount}
	reach := report.Chart{ID: "crash-reach", Title: "How far back the loss reaches (first lost acknowledgement before the kill)", XLabel: "crash", XUnit: report.UnitCount,
		YLabel: "reach", YUnit: report.UnitMs}
	for _, b := range r.BackendOrder() {
		sl, sr := report.Series{Name: b, Group: b, Style: "points"}, report.Series{Name: b, Group: b, Style: "points"}
		for _, c := range r.Crashes {
			if c.Backend == b && c.Failure == "" {
				sl.Points = append(sl.Points, [2]float64{float64(c.Repeat), float64(c.Lost)})
				sr.Points = append(sr.Points, [2]float64{float64(c.Repeat), c.LostReachMs})
			}
		}
		if len(sl.Points) > 0 {
			lost.Series, reach.Series = append(lost.Series, sl), append(reach.Series, sr)
		}
	}
	var charts []report.Chart
	for _, c := range []report.Chart{latency, rate, dist, lost, reach} {
		if len(c.Series) > 0 {
			charts = append(charts, c)
		}
	}
	for _, b := range r.BackendOrder() {
		if c, ok := momentsChart(r, b); ok {
			charts = append(charts, c)
		}
	}
	return charts, nil
}

// spectrumMax is where a percentile spectrum draws the maximum: past p99.99 (x = 1e4).
const spectrumMax = 1e5

// spectrumTicks label a percentile spectrum's x = 1/(1-p) as p; its ends are the fastest and the
// slowest answer, not percentiles.
var spectrumTicks = []report.Tick{{V: 1, Label: "min"}, {V: 2, Label: "50%"}, {V: 10, Label: "90%"}, {V: 100, Label: "99%"},
	{V: 1000, Label: "99.9%"}, {V: 1e4, Label: "99.99%"}, {V: spectrumMax, Label: "max"}}

// publishedSeries is a published table's column against its first column, as a dashed line.
func publishedSeries(p *scenario.Published, column, name, group string) []report.Series {
	col := -1
	for i, c := range p.Columns {
		if c == column {
			col = i
		}
	}
	if col < 0 {
		return nil
	}
	s := report.Series{Name: name, Group: group, Style: "dashed"}
	for _, row := range p.Rows {
		x, y := results.ParamNumber(string(row[0])), results.ParamNumber(string(row[col]))
		s.Points = append(s.Points, [2]float64{x, y})
	}
	sort.Slice(s.Points, func(i, j int) bool { return s.Points[i][0] < s.Points[j][0] })
	return []report.Series{s}
}

// busiestCell is backend b's first successful run at its highest VU level.
func busiestCell(r *results.Results, b string) *results.Cell {
	var best *results.Cell
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Backend != b || c.Failure != "" {
			continue
		}
		vus, bestVUs := results.ParamNumber(c.Params["vus"]), 0.0
		if best != nil {
			bestVUs = results.ParamNumber(best.Params["vus"])
		}
		if best == nil || vus > bestVUs || (vus == bestVUs && c.Repeat < best.Repeat) {
			best = c
		}
	}
	return best
}
