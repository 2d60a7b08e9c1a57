package report

import (
	"sort"
	"strings"

	"persistlab/backend"
	"persistlab/results"
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
			key, ok := strings.CutPrefix(name, backend.StatsSeriesPrefix)
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
