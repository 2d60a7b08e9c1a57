package report

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"persistlab/lab"
	"persistlab/results"
)

// Chart is one chart of a report page: lines (or points) of Series against two axes, or, where
// Bars are set, one horizontal bar per row.
type Chart struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	// XUnit and YUnit say what the axes measure, so their ticks read in the unit (1 MiB, 20 ms);
	// a bar chart's values are read in XUnit.
	XUnit Unit `json:"x_unit,omitempty"`
	YUnit Unit `json:"y_unit,omitempty"`
	LogX  bool `json:"log_x,omitempty"`
	// XFromZero starts the x axis at 0, where the distance from nothing matters (a cost).
	XFromZero bool `json:"-"`
	// XTicks, where set, are the x axis' ticks, for an axis whose unit alone does not say what its
	// values mean (a percentile spectrum's 1/(1-p)).
	XTicks []Tick   `json:"-"`
	Series []Series `json:"series"`
	Bars   []Bar    `json:"bars,omitempty"`
	Note   string   `json:"note,omitempty"` // what the chart leaves out, and why
	X      Axis     `json:"x"`              // set by Layout
	Y      Axis     `json:"y"`
}

// Bar is one bar of a bar chart: a row's value, coloured by its group (a backend).
type Bar struct {
	Label string  `json:"label"`
	Group string  `json:"group"`
	Value float64 `json:"value"`
	Text  string  `json:"text"` // the value as written beside the bar; set by Layout
}

// Series is one line. Series of one Group (a backend) share a colour; Style tells them apart:
// "solid", "thick", "dotted", "dashed" for published (seed) numbers drawn beside ours, or
// "points" for independent runs that no line should join, "range" for one figure's spread (a
// thick line between large points: median to max).
type Series struct {
	Name   string       `json:"name"`
	Group  string       `json:"group"`
	Style  string       `json:"style"`
	Points [][2]float64 `json:"points"`
}

// Layout sets the chart's axes from its data and units: the value axis from 0 to a round value,
// the x axis over the data's span (or its log), ticks at round values of each unit.
func (c *Chart) Layout() {
	if len(c.Bars) > 0 {
		hi := 0.0
		for i, b := range c.Bars {
			hi = max(hi, b.Value)
			c.Bars[i].Text = formatValue(b.Value, c.XUnit)
		}
		c.X = valueAxis(0, hi, c.XUnit)
		return
	}
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), 0.0, 0.0
	whole, xs := true, map[float64]bool{}
	for _, s := range c.Series {
		for _, p := range s.Points {
			if c.LogX && p[0] <= 0 {
				continue // no place on a log axis
			}
			xlo, xhi = min(xlo, p[0]), max(xhi, p[0])
			ylo, yhi = min(ylo, p[1]), max(yhi, p[1])
			whole = whole && p[0] == math.Trunc(p[0])
			xs[p[0]] = true
		}
	}
	if math.IsInf(xlo, 1) { // nothing to place: an empty axis, a decade on a log one
		xlo, xhi = 0, 1
		if c.LogX {
			xlo, xhi = 1, 10
		}
	}
	switch {
	case c.LogX && len(xs) <= maxTicks:
		// A sweep's few points (file sizes, job counts): each tick a value measured.
		c.X = logAxis(xlo, xhi, c.XUnit)
		c.X.Ticks = nil
		for _, x := range slices.Sorted(maps.Keys(xs)) {
			c.X.Ticks = append(c.X.Ticks, Tick{V: x, Label: formatValue(x, c.XUnit)})
		}
	case c.LogX:
		c.X = logAxis(xlo, xhi, c.XUnit)
	case c.XFromZero:
		c.X = valueAxis(xlo, xhi, c.XUnit)
	default:
		c.X = spanAxis(xlo, xhi, c.XUnit, whole)
	}
	if len(c.XTicks) > 0 {
		c.X.Ticks = c.XTicks
	}
	if len(c.X.Ticks) == 0 { // a log axis between two round values: its ends
		c.X.Ticks = []Tick{{V: xlo, Label: formatValue(xlo, c.XUnit)}, {V: xhi, Label: formatValue(xhi, c.XUnit)}}
	}
	c.Y = valueAxis(ylo, yhi, c.YUnit)
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
	charts = append(charts, backendSeriesCharts(r)...)
	charts = append(charts, costCharts(r)...)
	for i := range charts {
		charts[i].Layout()
	}
	return charts, nil
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
			key, ok := strings.CutPrefix(name, lab.StatsSeriesPrefix)
			if !ok {
				continue
			}
			ch := byKey[key]
			if ch == nil {
				ch = &Chart{ID: "backend-" + strings.ReplaceAll(key, "_", "-"), Title: key + " over each cell", XLabel: "time into the cell", XUnit: UnitSeconds,
					YLabel: key, YUnit: statUnit(key)}
				byKey[key] = ch
				keys = append(keys, key)
			}
			s := Series{Name: strings.TrimSpace(c.Backend + " " + c.Point(r.Scenario.Sweep)), Group: c.Backend, Style: "solid"}
			for _, p := range c.Series[name] {
				s.Points = append(s.Points, [2]float64{p.T, p.V * statScale(key)})
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

// statUnit is what a backend counter counts, by its name's ending (lab/lab.go).
func statUnit(key string) Unit {
	switch {
	case strings.HasSuffix(key, "_bytes"), strings.HasSuffix(key, "_mib"):
		return UnitBytes
	case strings.HasSuffix(key, "_s"):
		return UnitSeconds
	}
	return UnitCount
}

// statScale turns a counter's value into its unit's: MiB into bytes.
func statScale(key string) float64 {
	if strings.HasSuffix(key, "_mib") {
		return 1 << 20
	}
	return 1
}

// genericCharts draws nothing: a workload without a presenter has tables only.
func genericCharts(*results.Results) ([]Chart, error) { return nil, nil }
