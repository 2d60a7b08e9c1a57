// Package fio presents the fio workload's results: seeds 002 and 003's tables, hypotheses, ratios
// and scores, and the emulated volumes against their model.
package fio

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"persistlab/backend"
	"persistlab/param"
	"persistlab/report"
	"persistlab/results"
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
			if _, err := param.ParseSize(v); err == nil {
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

// cachePair is a gcsfuse entry with the file cache and the entry without it it is judged against.
type cachePair struct{ off, on string }

// cachePairs finds every entry with a file cache (seed 002's configuration and its variants), as
// its backend says of its options, in the scenario's order, each with the first entry without the
// cache that runs the same software (gcsfuse's options version and defaults): a cache entry is
// judged against the same software without its cache. An entry with no such partner is left out.
func cachePairs(r *results.Results) []cachePair {
	off := map[string]string{}
	var ons []string
	software := map[string]string{}
	for _, b := range r.Scenario.Backends {
		info, err := backend.Lookup(b.Name)
		if err != nil || info.FileCache == nil {
			continue
		}
		fc := info.FileCache(b.Options)
		sw := b.Name + "/" + fc.Software
		if fc.On {
			ons = append(ons, b.ID())
			software[b.ID()] = sw
		} else if _, seen := off[sw]; !seen {
			off[sw] = b.ID()
		}
	}
	var out []cachePair
	for _, on := range ons {
		if o, ok := off[software[on]]; ok {
			out = append(out, cachePair{off: o, on: on})
		}
	}
	return out
}

// writeSeed002Hypotheses answers seed 002's four hypotheses wherever the run has gcsfuse without
// and with its file cache over file sizes and read/write modes: once for each entry with the
// cache, against the one without, after the test each case is judged by.
func writeSeed002Hypotheses(w io.Writer, r *results.Results) {
	pairs := cachePairs(r)
	if _, ok := r.Scenario.Sweep.Get("file_size"); !ok || len(pairs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nseed 002's hypotheses, case by case: %s\n", seed002Test(r))
	for _, p := range pairs {
		writeSeed002Pair(w, r, p.off, p.on)
	}
	fmt.Fprintln(w, "  (the seed answered all four true; its published table is an image, so only its verdicts can be set beside ours)")
}

// caseResult is what a run says of one case of a hypothesis.
type caseResult int

const (
	caseHolds caseResult = iota
	caseFails
	caseOpen // the run cannot tell the figures apart from noise
)

// seed002Case is one case of a hypothesis: a file size and mode (and entry), with its figures.
type seed002Case struct {
	text   string
	result caseResult
}

// mark is the case as report.Counted writes it: "NOT ..." where it fails, "? ..." where the run
// cannot tell.
func (c seed002Case) mark() string {
	switch c.result {
	case caseFails:
		return "NOT " + c.text
	case caseOpen:
		return "? " + c.text
	}
	return c.text
}

// seed002Verdict is one of seed 002's hypotheses over the cases the run measured.
type seed002Verdict struct {
	claim string
	cases []seed002Case
}

// count is how many cases hold, fail, and cannot be told.
func (v seed002Verdict) count() (held, failed, open int) {
	for _, c := range v.cases {
		switch c.result {
		case caseHolds:
			held++
		case caseFails:
			failed++
		default:
			open++
		}
	}
	return held, failed, open
}

// judged is the hypothesis as a claim: TRUE where every case holds, FALSE where none holds and
// some fails, PARTLY otherwise, not judged where the run can tell no case; the why gives k of n.
func (v seed002Verdict) judged(text string) report.Claim {
	held, failed, open := v.count()
	if len(v.cases) == 0 {
		return report.NotJudged(text, "no case of it in this run")
	}
	var marks []string
	for _, c := range v.cases {
		marks = append(marks, c.mark())
	}
	counts := report.Cases{Held: held, Failed: failed, Open: open}
	why := counts.String() + ": " + strings.Join(marks, "; ")
	verdict := report.Partly
	switch {
	case held == 0 && failed == 0:
		return report.NotJudged(text, "the run cannot tell any case from noise: "+why)
	case held == len(v.cases):
		verdict = report.True
	case held == 0:
		verdict = report.False
	}
	return report.Claim{Text: text, Verdict: verdict, Why: why}
}

// alikeBand is how far apart writes may be and still be "alike": the seed's "about the same" read
// as within 0.8-1.25x.
const alikeBand = 1.25

// seed002Test states how the run tells a case from noise: ranges over repeats, or with one run
// each the assumed margin (report.OneRunMargin).
func seed002Test(r *results.Results) string {
	margin := 100 * report.OneRunMargin
	if r.Scenario.Repeat > 1 {
		return fmt.Sprintf("a case holds or fails only where the run tells the two figures apart, their ranges over %d runs not overlapping (with one run on either side: more than %.0f%% apart, an assumed margin), and cannot tell otherwise; "+
			"writes are alike where even the far ends of the two ranges are within %.1f-%.2fx of each other, differ where even their near ends are not, and cannot tell otherwise",
			r.Scenario.Repeat, margin, 1/alikeBand, alikeBand)
	}
	return fmt.Sprintf("one run each, so a case holds or fails only where the two figures are more than %.0f%% apart (an assumed margin: one run cannot tell less from noise), and cannot tell otherwise; "+
		"writes alike cannot be told with one run each (their band, %.1f-%.2fx, is within the margin): they differ beyond it and cannot tell within it; --repeat 3 gives each case a spread",
		margin, 1/alikeBand, alikeBand)
}

// ahead is the case "a beats b" (higher better, or lower): it holds or fails where the run tells
// them apart (report.Apart: ranges over runs that do not overlap, or with one run a difference
// beyond report.OneRunMargin), and cannot tell otherwise. Two figures that do not differ have
// ranges over 3 runs each that fail to overlap 1 time in 10 (2 orders of C(6,3) = 20).
func ahead(a, b report.Ranked, lowerBetter bool, text string) seed002Case {
	if !report.Apart(a, b) {
		return seed002Case{text, caseOpen}
	}
	better := a.Value > b.Value
	if lowerBetter {
		better = a.Value < b.Value
	}
	if better {
		return seed002Case{text, caseHolds}
	}
	return seed002Case{text, caseFails}
}

// alike is the case "x and y are within alikeBand of each other". With several runs each it holds
// where even the far ends of their ranges are within the band and fails where even the near ends
// are not; with one run on either side it fails beyond report.OneRunMargin and cannot tell within
// it, since one run cannot tell less from noise. It cannot tell otherwise.
func alike(x, y report.Ranked, text string) seed002Case {
	if x.Runs > 1 && y.Runs > 1 {
		far := max(ratioOf(y.Hi, x.Lo), ratioOf(x.Hi, y.Lo))
		near := 1.0
		switch {
		case y.Lo > x.Hi:
			near = ratioOf(y.Lo, x.Hi)
		case x.Lo > y.Hi:
			near = ratioOf(x.Lo, y.Hi)
		}
		switch {
		case far <= alikeBand+1e-9:
			return seed002Case{text, caseHolds}
		case near > alikeBand+1e-9:
			return seed002Case{text, caseFails}
		}
		return seed002Case{text, caseOpen}
	}
	if ratioOf(max(x.Value, y.Value), min(x.Value, y.Value)) > 1+report.OneRunMargin+1e-9 {
		return seed002Case{text, caseFails}
	}
	return seed002Case{text, caseOpen}
}

// ratioOf is a over b: +Inf where only b is 0, 1 where both are.
func ratioOf(a, b float64) float64 {
	switch {
	case b > 0:
		return a / b
	case a > 0:
		return math.Inf(1)
	}
	return 1
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
		if len(v.cases) == 0 {
			fmt.Fprintf(w, "  %d. %s: not measured\n", i+1, v.claim)
			continue
		}
		if c := v.judged(v.claim); c.Verdict == "" {
			fmt.Fprintf(w, "  %d. %s: not judged: %s\n", i+1, v.claim, c.Why)
		} else {
			fmt.Fprintf(w, "  %d. %s: %s (%s)\n", i+1, v.claim, c.Verdict, c.Why)
		}
	}
}

// seed002Verdicts tests the four hypotheses on gcsfuse without the file cache (off) against one
// entry with it (on), case by case (seed002Test): one figure ahead of another where the run tells
// them apart, writes alike within 0.8-1.25x.
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
	figures := func(x, y report.Ranked) string {
		return fmt.Sprintf("%s vs %s MiB/s", report.RangeText(x, "%.1f"), report.RangeText(y, "%.1f"))
	}
	compare := func(claim, rw string, judge func(offV, onV report.Ranked, text string) seed002Case) seed002Verdict {
		v := seed002Verdict{claim: claim}
		for _, s := range sizes.Values {
			x, ok1 := mibs(off, rw, s)
			y, ok2 := mibs(on, rw, s)
			if !ok1 || !ok2 {
				continue
			}
			v.cases = append(v.cases, judge(x, y, s+" "+figures(x, y)))
		}
		return v
	}
	faster := func(x, y report.Ranked, text string) seed002Case { return ahead(y, x, false, text) }
	verdicts := []seed002Verdict{
		compare("read is faster with the cache", "read", faster),
		compare("random read is faster with the cache", "randread", faster),
	}
	small := seed002Verdict{claim: "gcsfuse handles small files badly (the smallest file's MiB/s is the lowest)"}
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
			small.cases = append(small.cases, ahead(base, *next, true, fmt.Sprintf("%s %s", b, rw)))
		}
	}
	writes := compare(fmt.Sprintf("writes are alike with and without the cache (within %.1f-%.2fx)", 1/alikeBand, alikeBand), "write", alike)
	rand := compare("", "randwrite", alike)
	writes.cases = append(writes.cases, rand.cases...)
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
