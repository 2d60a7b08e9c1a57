package counter

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
)

// Slow moments: a counter cell's latency over its time (series latency_max_ms per window of the
// driver's timeline) lined up with the backend's writes to the cloud (series "write.WHAT": when
// each ended and how long it took) and with the time its instance waited for its CPU limit
// (series instance.cpu_throttled_s, sampled). A window is slow when its slowest answer is among
// the cell's slowest 1% (above its p99): the rare stalls. A CPU limit's throttling, which touches
// nearly every window, shows better in the cell's throttled share.

const (
	seriesLatencyMax = "latency_max_ms"
	seriesRate       = "rate"
	seriesThrottled  = "instance.cpu_throttled_s"
	seriesWrite      = "write."
)

// Moments is what a cell's slow windows coincide with.
type Moments struct {
	WidthS     float64        // the timeline's window
	Windows    int            // windows with an answer
	Written    int            // of those, windows a write overlaps, slow or not
	Slow       int            // windows whose slowest answer took longer than the cell's p99
	WithWrite  map[string]int // slow windows overlapped by a write of that kind
	AnyWrite   int            // slow windows overlapped by any write
	Throttled  int            // slow windows with CPU-limit waiting (-1: no limit)
	Neither    int            // slow windows with no write and no throttling
	WriteKinds []string       // the kinds written during the cell, sorted
	// The median of the slowest answer (ms) over all windows, slow or not, that a write overlaps
	// (Written of them; NaN if none) and over all the others (Windows - Written; NaN if none).
	MaxWithWrite, MaxWithout float64
}

// momentsOf reads a cell's slow windows; ok is false for a cell without a timeline.
func momentsOf(c results.Cell) (m Moments, ok bool) {
	maxMs, rate := c.Series[seriesLatencyMax], c.Series[seriesRate]
	p99 := c.M("p99_ms")
	if len(maxMs) == 0 || len(rate) < 2 || p99 <= 0 {
		return m, false
	}
	m.WidthS = rate[1].T - rate[0].T
	m.WithWrite = map[string]int{}
	type span struct{ from, to float64 }
	writes := map[string][]span{}
	for name, s := range c.Series {
		what, ok := strings.CutPrefix(name, seriesWrite)
		if !ok {
			continue
		}
		m.WriteKinds = append(m.WriteKinds, what)
		for _, p := range s {
			writes[what] = append(writes[what], span{p.T - p.V/1000, p.T})
		}
	}
	sort.Strings(m.WriteKinds)
	throttled, limited := c.Series[seriesThrottled]
	if !limited {
		m.Throttled = -1
	}
	var with, without []float64
	for _, p := range maxMs {
		m.Windows++
		from, to := p.T, p.T+m.WidthS
		var kinds []string
		for _, what := range m.WriteKinds {
			for _, w := range writes[what] {
				if w.from < to && w.to >= from {
					kinds = append(kinds, what)
					break
				}
			}
		}
		any := len(kinds) > 0
		if any {
			m.Written++
			with = append(with, p.V)
		} else {
			without = append(without, p.V)
		}
		if p.V <= p99 {
			continue
		}
		m.Slow++
		for _, what := range kinds {
			m.WithWrite[what]++
		}
		if any {
			m.AnyWrite++
		}
		waited := limited && grewWithin(throttled, from, to)
		if waited {
			m.Throttled++
		}
		if !any && !waited {
			m.Neither++
		}
	}
	m.MaxWithWrite, m.MaxWithout = measure.Median(with), measure.Median(without)
	return m, true
}

// grewWithin says whether a sampled cumulative counter grew between the last sample at or
// before from and the first at or after to (samples bracket the window, so it may be up to a
// sample interval wider on each side).
func grewWithin(s []measure.Point, from, to float64) bool {
	lo, hi := math.NaN(), math.NaN()
	for _, p := range s {
		if p.T <= from {
			lo = p.V
		}
		if p.T >= to && math.IsNaN(hi) {
			hi = p.V
		}
	}
	if math.IsNaN(lo) && len(s) > 0 {
		lo = s[0].V
	}
	if math.IsNaN(hi) && len(s) > 0 {
		hi = s[len(s)-1].V
	}
	return hi > lo
}

// writeMoments prints, for every cell of the first run with a timeline, its slow windows and
// what they coincide with.
func writeMoments(w io.Writer, r *results.Results) {
	var rows []string
	for _, c := range r.Cells {
		if c.Failure != "" || c.Repeat > 1 {
			continue
		}
		m, ok := momentsOf(c)
		if !ok {
			continue
		}
		writes := make([]string, 0, len(m.WriteKinds))
		for _, what := range m.WriteKinds {
			writes = append(writes, fmt.Sprintf("%s %d", what, m.WithWrite[what]))
		}
		throttled := "-"
		if m.Throttled >= 0 {
			throttled = fmt.Sprint(m.Throttled)
		}
		// Each median sits beside the count of the windows it is taken over: "-" over none.
		withWrite, without := "-", "-"
		if m.Written > 0 {
			withWrite = fmt.Sprintf("%.1f", m.MaxWithWrite)
		}
		if m.Windows > m.Written {
			without = fmt.Sprintf("%.1f", m.MaxWithout)
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%d\t%d\t%s\t%s\t%d\t%d\t%s\t%d\t  %s", c.Backend, c.Point(r.Scenario.Sweep),
			m.Windows, m.Written, withWrite, without, m.Slow, m.AnyWrite, throttled, m.Neither, report.OrDash(strings.Join(writes, ", "))))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nslow moments (first run): each cell's time in the windows of its timeline, lined up with the bucket's writes")
	fmt.Fprintln(w, "  (gcsfuse uploads a file when SQLite syncs it, at a WAL checkpoint; Litestream at each sync) and with the instance")
	fmt.Fprintln(w, "  waiting for its CPU limit (cpu_quota). All windows: how many, how many a write overlaps, and the median slowest")
	fmt.Fprintln(w, "  answer (ms) over those with a write and over the rest ('-': no such window). Slow windows, whose slowest answer")
	fmt.Fprintln(w, "  is above the cell's p99: how many, and of them those a write overlaps, those with CPU-limit waiting within a")
	fmt.Fprintln(w, "  sample of them ('-': no limit), those with neither, and by what was written")
	tw := report.NewTable(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\tpoint\twindows\twith a write\tmedian slowest, write\tmedian slowest, none\tslow\tslow, write\tslow, throttled\tslow, neither\t  slow windows by what was written")
	for _, row := range rows {
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

// momentsChart draws, for one backend, the cell of the first run whose p90 stands furthest above
// its median: the slowest answer per window, each write to the cloud (when it ended, how long it
// took) and the time waited for the CPU limit per sample, on one time axis.
func momentsChart(r *results.Results, b string) (report.Chart, bool) {
	var best *results.Cell
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Backend != b || c.Failure != "" || c.Repeat > 1 || len(c.Series[seriesLatencyMax]) == 0 || c.M("med_ms") <= 0 {
			continue
		}
		if best == nil || c.M("p90_ms")/c.M("med_ms") > best.M("p90_ms")/best.M("med_ms") {
			best = c
		}
	}
	if best == nil {
		return report.Chart{}, false
	}
	ch := report.Chart{ID: "moments-" + strings.ReplaceAll(b, " ", "-"),
		Title:  fmt.Sprintf("%s at %s over time: slowest answer per window, writes to the bucket, CPU-limit waits (p90 %.1fx the median)", b, best.Point(r.Scenario.Sweep), best.M("p90_ms")/best.M("med_ms")),
		XLabel: "time into the cell", XUnit: report.UnitSeconds, YLabel: "duration", YUnit: report.UnitMs}
	line := report.Series{Name: "slowest answer per window", Group: b, Style: "solid"}
	for _, p := range best.Series[seriesLatencyMax] {
		line.Points = append(line.Points, [2]float64{p.T, p.V})
	}
	ch.Series = append(ch.Series, line)
	names := make([]string, 0)
	for name := range best.Series {
		if strings.HasPrefix(name, seriesWrite) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for i, name := range names {
		s := report.Series{Name: "write " + strings.TrimPrefix(name, seriesWrite) + " (ms it took, at its end)", Group: fmt.Sprintf("%s write %d", b, i), Style: "points"}
		for _, p := range best.Series[name] {
			s.Points = append(s.Points, [2]float64{p.T, p.V})
		}
		ch.Series = append(ch.Series, s)
	}
	if t := best.Series[seriesThrottled]; len(t) > 1 {
		s := report.Series{Name: "ms waited for the CPU limit per sample", Group: b + " cpu", Style: "dotted"}
		for i := 1; i < len(t); i++ {
			s.Points = append(s.Points, [2]float64{t[i].T, (t[i].V - t[i-1].V) * 1000})
		}
		ch.Series = append(ch.Series, s)
	}
	return ch, true
}
