// Package fio presents the fio workload's results: seeds 002 and 003's tables, hypotheses, ratios
// and scores, and the emulated volumes against their model.
package fio

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// The fio workload's presentation: the seeds' columns (MiB/s, IOPS, average and p99 latency) per
// backend and sweep point, bandwidth charts against the numeric axis of the sweep, and seed 002's
// four hypotheses answered from the measurements.
func init() {
	report.RegisterPresenter("fio", report.Presenter{
		Tables: fioTables,
		Charts: fioCharts,
		Answer: fioAnswer,
		Compare: []report.CompareMetric{{Name: "mib_s", HigherBetter: true}, {Name: "iops", HigherBetter: true},
			{Name: "lat_avg_ms"}, {Name: "read_lat_p99_ms"}, {Name: "write_lat_p99_ms"}},
		Work: report.WorkUnit{Name: "GiB moved", Units: func(c results.Cell) float64 { return c.M("bytes") / (1 << 30) },
			Scale: 1, Label: "GiB moved", CostScale: 1, CostLabel: "GiB", BytesPerUnit: 1 << 30},
	})
	report.RegisterScores("002", seed002Scores)
	report.RegisterScores("003", seed003Scores)
}

// fioTables prints one table per backend: each sweep point's medians over runs.
func fioTables(w io.Writer, r *results.Results) {
	fmt.Fprintf(w, "fio, %d run(s) per row, each column the median over runs; latency is fio's total (lat_ns) in ms\n", r.Scenario.Repeat)
	for _, b := range r.BackendOrder() {
		rows := r.AggregatesOf(b)
		if len(rows) == 0 {
			continue
		}
		t := report.Table{Title: "backend " + b, Columns: append(slices.Clone(r.Scenario.Sweep.ParamNames()),
			"MiB/s", "IOPS", "avg ms", "read p99", "write p99", "fsync avg", "GiB", "fio cpu", b+" cpu", "machine")}
		for _, a := range rows {
			m := a.Median
			var row []string
			for _, name := range r.Scenario.Sweep.ParamNames() {
				row = append(row, a.Params[name])
			}
			machine := report.OptPct(m, "machine_cpu_util")
			if report.BoundBy(r, a) != "" {
				machine += " bound"
			}
			if report.HostBound(a) != "" {
				machine += " host-bound"
			}
			row = append(row, fmt.Sprintf("%.1f", m["mib_s"]), fmt.Sprintf("%.0f", m["iops"]), fmt.Sprintf("%.3f", m["lat_avg_ms"]),
				optMs(m, "read_lat_p99_ms"), optMs(m, "write_lat_p99_ms"), optMs(m, "fsync_avg_ms"), fmt.Sprintf("%.2f", m["bytes"]/(1<<30)),
				fmt.Sprintf("%.0f%%", m["cpu_util"]*100), report.OptPct(m, "helper_cpu_util"), machine)
			t.Rows = append(t.Rows, row)
		}
		report.WriteTable(w, t)
	}
	writeSeed002Hypotheses(w, r)
	writeScaledRatios(w, r)
	writeVolumeModel(w, r)
}

// writeScaledRatios compares the ratios that survive scaling a benchmark down to this machine:
// random against sequential read bandwidth of the largest file, and small against large files,
// ours beside the published ones (seed 003's tables).
func writeScaledRatios(w io.Writer, r *results.Results) {
	type table struct{ ours, seed map[float64]float64 }
	byMode := map[string]*table{}
	for _, p := range r.Scenario.Published {
		rw := p.Params["rw"]
		sizeCol, bwCol := -1, -1
		for i, c := range p.Columns {
			switch c {
			case "file_size":
				sizeCol = i
			case "mib_s":
				bwCol = i
			}
		}
		if rw == "" || sizeCol < 0 || bwCol < 0 {
			continue
		}
		t := &table{ours: map[float64]float64{}, seed: map[float64]float64{}}
		for _, sr := range report.SeedRows(r, &p) {
			seed, ok := sr.Row[bwCol].Float()
			if !ok {
				continue
			}
			size := results.ParamNumber(string(sr.Row[sizeCol]))
			t.ours[size], t.seed[size] = sr.Ours.Median["mib_s"], seed
		}
		if len(t.ours) > 0 {
			byMode[rw] = t
		}
	}
	var lines []string
	if rd, rr := byMode["read"], byMode["randread"]; rd != nil && rr != nil {
		largest := 0.0
		for size := range rd.ours {
			if _, ok := rr.ours[size]; ok && size > largest {
				largest = size
			}
		}
		if largest > 0 {
			lines = append(lines, fmt.Sprintf("random / sequential read at %s: ours %.2f, seed %.2f", formatBytes(largest),
				rr.ours[largest]/rd.ours[largest], rr.seed[largest]/rd.seed[largest]))
		}
	}
	for _, rw := range []string{"read", "randread", "write"} {
		t := byMode[rw]
		if t == nil || len(t.ours) < 2 {
			continue
		}
		var sizes []float64
		for size := range t.ours {
			sizes = append(sizes, size)
		}
		sort.Float64s(sizes)
		small, large := sizes[0], sizes[len(sizes)-1]
		lines = append(lines, fmt.Sprintf("%s, %s / %s file bandwidth: ours %.2f, seed %.2f", rw, formatBytes(small), formatBytes(large),
			t.ours[small]/t.ours[large], t.seed[small]/t.seed[large]))
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nratios that survive scaling the benchmark down (MiB/s over MiB/s)\n  %s\n", strings.Join(lines, "\n  "))
	}
}

// isSize says whether a swept parameter's values are sizes (4KiB, 1GiB): some carry a size's unit.
func isSize(r *results.Results, name string) bool {
	for _, a := range r.Aggregates {
		v := a.Params[name]
		if _, err := strconv.ParseFloat(v, 64); err != nil && results.ParamNumber(v) > 0 {
			if _, err := scenario.ParseSize(v); err == nil {
				return true
			}
		}
	}
	return false
}

func formatBytes(v float64) string {
	for _, u := range []struct {
		n    float64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if v >= u.n {
			return fmt.Sprintf("%g%s", v/u.n, u.name)
		}
	}
	return fmt.Sprintf("%gB", v)
}

func optMs(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%.3f", v)
	}
	return "-"
}

// cacheBackends finds, by their options, the first gcsfuse entry without the file cache and every
// one with it (seed 002's configuration and its variants), in the scenario's order.
func cacheBackends(r *results.Results) (off string, on []string) {
	for _, b := range r.Scenario.Backends {
		if b.Name != "gcsfuse" {
			continue
		}
		switch b.Options["file_cache"] {
		case "on", "true":
			on = append(on, b.ID())
		default:
			if off == "" {
				off = b.ID()
			}
		}
	}
	return off, on
}

// writeSeed002Hypotheses answers seed 002's four hypotheses wherever the run has gcsfuse without
// and with its file cache over file sizes and read/write modes: once for each entry with the
// cache, against the one without.
func writeSeed002Hypotheses(w io.Writer, r *results.Results) {
	off, ons := cacheBackends(r)
	if _, ok := r.Scenario.Sweep.Get("file_size"); !ok || off == "" || len(ons) == 0 {
		return
	}
	for _, on := range ons {
		writeSeed002Pair(w, r, off, on)
	}
	fmt.Fprintln(w, "  (the seed answered all four true; its published table is an image, so only its verdicts can be set beside ours)")
}

// seed002Verdict is one of seed 002's hypotheses over the cases the run measured: each case's
// mark, "NOT ..." where it does not hold and "? ..." where the run cannot tell (report.Counted).
type seed002Verdict struct {
	claim string
	held  []string
	total int
}

// holding counts the cases where the claim holds.
func (v seed002Verdict) holding() int {
	n := 0
	for _, h := range v.held {
		if !strings.HasPrefix(h, "NOT ") && !strings.HasPrefix(h, "? ") {
			n++
		}
	}
	return n
}

// writeSeed002Pair answers the four hypotheses for gcsfuse without the file cache (off) against
// one entry with it (on).
func writeSeed002Pair(w io.Writer, r *results.Results, off, on string) {
	verdicts := seed002Verdicts(r, off, on)
	setting := ""
	for _, b := range r.Scenario.Backends {
		if v := b.Options["file_cache_for_range_read"]; b.ID() == on && v != "" {
			setting = ", file_cache_for_range_read " + v
		}
	}
	fmt.Fprintf(w, "\nseed 002's hypotheses, answered (%s without the file cache against %s with it%s)\n", off, on, setting)
	for i, v := range verdicts {
		if v.total == 0 {
			fmt.Fprintf(w, "  %d. %s: not measured\n", i+1, v.claim)
			continue
		}
		if c := report.Counted(v.claim, v.held); c.Verdict == "" {
			fmt.Fprintf(w, "  %d. %s: not judged: %s\n", i+1, v.claim, c.Why)
		} else {
			fmt.Fprintf(w, "  %d. %s: %s (%s)\n", i+1, v.claim, c.Verdict, c.Why)
		}
	}
}

// seed002Verdicts tests the four hypotheses on gcsfuse without the file cache (off) against one
// entry with it (on), case by case: one figure ahead of another where the run tells them apart
// (report.Compared), writes alike within the one-run margin.
func seed002Verdicts(r *results.Results, off, on string) []seed002Verdict {
	sizes, _ := r.Scenario.Sweep.Get("file_size")
	mibs := func(backend, rw, size string) (report.Ranked, bool) {
		for _, a := range r.Aggregates {
			if a.Backend == backend && report.SameParam(r, backend, "rw", a.Params["rw"], rw) && a.Params["file_size"] == size {
				return report.RankedOf(r, a, "mib_s"), true
			}
		}
		return report.Ranked{}, false
	}
	type verdict = seed002Verdict
	compare := func(claim, rw string, mark func(offV, onV report.Ranked, text string) string) verdict {
		v := verdict{claim: claim}
		for _, s := range sizes.Values {
			x, ok1 := mibs(off, rw, s)
			y, ok2 := mibs(on, rw, s)
			if !ok1 || !ok2 {
				continue
			}
			v.total++
			v.held = append(v.held, mark(x, y, fmt.Sprintf("%s %.1f vs %.1f MiB/s", s, x.Value, y.Value)))
		}
		return v
	}
	faster := func(x, y report.Ranked, text string) string { return report.Compared(y, x, false, text) }
	alike := func(x, y report.Ranked, text string) string {
		return report.Mark(y.Value >= x.Value*0.8 && y.Value <= x.Value*1.25, text)
	}
	verdicts := []verdict{
		compare("read is faster with the cache", "read", faster),
		compare("random read is faster with the cache", "randread", faster),
	}
	small := verdict{claim: "gcsfuse handles small files badly (the smallest file's MiB/s is the lowest)"}
	smallest := sizes.Values[0]
	for _, s := range sizes.Values {
		if results.ParamNumber(s) < results.ParamNumber(smallest) {
			smallest = s
		}
	}
	for _, b := range []string{off, on} {
		for _, rw := range []string{"read", "randread", "write", "randwrite"} {
			base, ok := mibs(b, rw, smallest)
			if !ok {
				continue
			}
			// The smallest file is the lowest where it is told apart below the lowest of the others.
			var next *report.Ranked
			for _, s := range sizes.Values {
				if v, ok := mibs(b, rw, s); ok && s != smallest && (next == nil || v.Value < next.Value) {
					next = &v
				}
			}
			if next == nil {
				continue
			}
			small.total++
			small.held = append(small.held, report.Compared(base, *next, true, fmt.Sprintf("%s %s", b, rw)))
		}
	}
	writes := compare("writes are alike with and without the cache (within 0.8-1.25x)", "write", alike)
	rand := compare("", "randwrite", alike)
	writes.held, writes.total = append(writes.held, rand.held...), writes.total+rand.total
	return append(verdicts, small, writes)
}

// fioCharts draws MiB/s against the sweep's first numeric axis, one chart per combination of the
// other axes (e.g. per rw), one line per backend.
func fioCharts(r *results.Results) ([]report.Chart, error) {
	// The x axis: the first swept parameter (alone or in a linked axis) whose values are all
	// numbers, more than one of them. Charts are split by the other axes, and by the text
	// parameters of x's own linked axis (seed 003's rw); the numbers linked to x (its block size,
	// following the file size) are not split on.
	var xAxis string
	for _, a := range r.Scenario.Sweep {
		for _, name := range a.Params() {
			numeric, distinct := true, map[string]bool{}
			for _, v := range a.Values {
				p := map[string]string{}
				a.Set(v, p)
				numeric = numeric && results.ParamNumber(p[name]) > 0
				distinct[p[name]] = true
			}
			if numeric && len(distinct) > 1 {
				xAxis = name
				break
			}
		}
		if xAxis != "" {
			break
		}
	}
	if xAxis == "" {
		return nil, nil
	}
	xUnit := report.UnitCount
	if isSize(r, xAxis) {
		xUnit = report.UnitBytes
	}
	charts := map[string]*report.Chart{}
	var order []string
	for _, a := range r.Aggregates {
		var rest []string
		for _, axis := range r.Scenario.Sweep {
			names := axis.Params()
			if !slices.Contains(names, xAxis) {
				rest = append(rest, axis.Name+"="+axis.ValueOf(a.Params))
				continue
			}
			for _, n := range names {
				if n != xAxis && results.ParamNumber(a.Params[n]) <= 0 && a.Params[n] != "0" {
					rest = append(rest, n+"="+a.Params[n])
				}
			}
		}
		key := strings.Join(rest, " ")
		c, ok := charts[key]
		if !ok {
			title := "MiB/s against " + xAxis
			if key != "" {
				title += " at " + key
			}
			c = &report.Chart{ID: "mib-s-" + fmt.Sprint(len(order)), Title: title, XLabel: xAxis, XUnit: xUnit, YLabel: "MiB/s", LogX: true}
			charts[key] = c
			order = append(order, key)
		}
		var s *report.Series
		for i := range c.Series {
			if c.Series[i].Group == a.Backend {
				s = &c.Series[i]
			}
		}
		if s == nil {
			c.Series = append(c.Series, report.Series{Name: a.Backend, Group: a.Backend, Style: "thick"})
			s = &c.Series[len(c.Series)-1]
		}
		s.Points = append(s.Points, [2]float64{results.ParamNumber(a.Params[xAxis]), a.Median["mib_s"]})
	}
	var out []report.Chart
	for _, k := range order {
		c := charts[k]
		for i := range c.Series {
			pts := c.Series[i].Points
			sort.Slice(pts, func(a, b int) bool { return pts[a][0] < pts[b][0] })
		}
		out = append(out, *c)
	}
	return out, nil
}
