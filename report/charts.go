package report

import (
	"fmt"
	"sort"
	"strings"

	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
)

// Chart is one line chart of a report page.
type Chart struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	XLabel string   `json:"x_label"`
	YLabel string   `json:"y_label"`
	LogX   bool     `json:"log_x,omitempty"`
	Series []Series `json:"series"`
}

// Series is one line. Series of one Group (a backend) share a colour; Style tells them apart:
// "solid", "thick", "dotted", "dashed" for published (seed) numbers drawn beside ours, or
// "points" for independent runs that no line should join.
type Series struct {
	Name   string       `json:"name"`
	Group  string       `json:"group"`
	Style  string       `json:"style"`
	Points [][2]float64 `json:"points"`
}

// ChartsFor returns the charts of r's workload, drawn by its presenter, then the backends'
// counters sampled over the cells (a volume's burst credits draining).
func ChartsFor(r *results.Results) ([]Chart, error) {
	var charts []Chart
	if p := presenterOf(r); p.Charts != nil {
		c, err := p.Charts(r)
		if err != nil {
			return nil, err
		}
		charts = c
	}
	return append(charts, backendSeriesCharts(r)...), nil
}

// backendSeriesCharts draws each sampled backend counter (series "backend.KEY") against the
// cell's time: a line per cell of the first repeat, in plan order.
func backendSeriesCharts(r *results.Results) []Chart {
	byKey := map[string]*Chart{}
	var keys []string
	for _, c := range r.Cells {
		if c.Failure != "" || c.Repeat > 1 {
			continue
		}
		names := make([]string, 0, len(c.Series))
		for name := range c.Series {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			key, ok := strings.CutPrefix(name, "backend.")
			if !ok {
				continue
			}
			ch := byKey[key]
			if ch == nil {
				ch = &Chart{ID: "backend-" + strings.ReplaceAll(key, "_", "-"), Title: key + " over each cell", XLabel: "seconds into the cell", YLabel: key}
				byKey[key] = ch
				keys = append(keys, key)
			}
			s := Series{Name: strings.TrimSpace(c.Backend + " " + c.Point(r.Scenario.Sweep)), Group: c.Backend, Style: "solid"}
			for _, p := range c.Series[name] {
				s.Points = append(s.Points, [2]float64{p.T, p.V})
			}
			ch.Series = append(ch.Series, s)
		}
	}
	out := make([]Chart, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// genericCharts draws nothing: a workload without a presenter has tables only.
func genericCharts(*results.Results) ([]Chart, error) { return nil, nil }

// counterCharts: latency against VUs (med, avg, p95 per backend, with the seed's as dashed lines),
// requests/s against VUs, and the latency distribution of the busiest cell of each backend.
func counterCharts(r *results.Results) ([]Chart, error) {
	latency := Chart{ID: "latency", Title: "Latency against virtual users (median over runs)", XLabel: "virtual users", YLabel: "ms"}
	rate := Chart{ID: "rate", Title: "Requests per second against virtual users", XLabel: "virtual users", YLabel: "requests/s"}
	for _, b := range r.BackendOrder() {
		med, avg, p95 := Series{Name: b + " med", Group: b, Style: "solid"}, Series{Name: b + " avg", Group: b, Style: "thick"}, Series{Name: b + " p95", Group: b, Style: "dotted"}
		rps := Series{Name: b, Group: b, Style: "thick"}
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
	dist := Chart{ID: "distribution", Title: "Latency distribution at the highest VU level (first run)", XLabel: "percentile", YLabel: "ms", LogX: true}
	for _, b := range r.BackendOrder() {
		cell := busiestCell(r, b)
		if cell == nil || cell.Histograms["latency"] == "" {
			continue
		}
		h, err := measure.DecodeHistogram(cell.Histograms["latency"])
		if err != nil {
			return nil, fmt.Errorf("cell %d: %w", cell.Index, err)
		}
		s := Series{Name: fmt.Sprintf("%s, %s VUs", b, cell.Params["vus"]), Group: b, Style: "thick"}
		// Percentile spectrum, as HdrHistogram plots it: x = 1/(1-p), so the tail gets room.
		for _, p := range []float64{0, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99} {
			v := float64(h.ValueAtPercentile(p)) / 1000
			if p == 0 {
				v = cell.M("min_ms")
			}
			s.Points = append(s.Points, [2]float64{1 / (1 - p/100), v})
		}
		s.Points = append(s.Points, [2]float64{1e5, cell.M("max_ms")})
		dist.Series = append(dist.Series, s)
	}
	lost := Chart{ID: "crash-lost", Title: "Acknowledged writes lost per crash", XLabel: "crash", YLabel: "writes lost"}
	reach := Chart{ID: "crash-reach", Title: "How far back the loss reaches (first lost acknowledgement before the kill)", XLabel: "crash", YLabel: "ms"}
	for _, b := range r.BackendOrder() {
		sl, sr := Series{Name: b, Group: b, Style: "points"}, Series{Name: b, Group: b, Style: "points"}
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
	var charts []Chart
	for _, c := range []Chart{latency, rate, dist, lost, reach} {
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

// publishedSeries is a published table's column against its first column, as a dashed line.
func publishedSeries(p *scenario.Published, column, name, group string) []Series {
	col := -1
	for i, c := range p.Columns {
		if c == column {
			col = i
		}
	}
	if col < 0 {
		return nil
	}
	s := Series{Name: name, Group: group, Style: "dashed"}
	for _, row := range p.Rows {
		x, y := results.ParamNumber(string(row[0])), results.ParamNumber(string(row[col]))
		s.Points = append(s.Points, [2]float64{x, y})
	}
	sort.Slice(s.Points, func(i, j int) bool { return s.Points[i][0] < s.Points[j][0] })
	return []Series{s}
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
