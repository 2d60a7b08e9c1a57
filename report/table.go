package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"persistlab/results"
	"persistlab/scenario"
)

// View is how much of a run a text report shows.
type View int

const (
	// ViewTables is the answer and the tables a reader needs to check it: the workload's own,
	// the bucket's cost, crash runs, the seed beside ours, the scoreboard, failures, thresholds.
	ViewTables View = iota
	// ViewBrief is the answer alone, with the failures and thresholds that set the exit status.
	ViewBrief
	// ViewDetail adds every analysis: what still differs from the seed and why, the rows bound by
	// this machine one by one, and the lab's measured ceilings.
	ViewDetail
)

// WriteTables prints everything about the run (ViewDetail).
func WriteTables(w io.Writer, r *results.Results) { WriteView(w, r, ViewDetail) }

// WriteView prints the run's title and answer, then as much as view asks: the workload's own
// tables (its presenter's), the seed's published numbers beside ours, the bucket's requests and
// cost, crash runs, and every failed cell's reason.
func WriteView(w io.Writer, r *results.Results, view View) {
	writeHeader(w, r)
	fmt.Fprintln(w)
	writeAnswer(w, r, view)
	if view == ViewBrief {
		writeFailures(w, r)
		writeThresholds(w, r)
		return
	}
	fmt.Fprintln(w)
	writeSections(w, r, view)
}

// writeHeader prints the run's title, its status when not complete, its shards and its notes.
func writeHeader(w io.Writer, r *results.Results) {
	s := r.Scenario
	title := s.Name
	if s.Title != "" {
		title += ": " + s.Title
	}
	writeTitle(w, title)
	if r.Status != results.StatusComplete {
		fmt.Fprintf(w, "status: %s %s\n", strings.ToUpper(r.Status), r.Error)
	}
	switch {
	case r.Shard != nil:
		fmt.Fprintf(w, "shard %s: %d of the plan's %d cells (persistlab merge joins the shards)\n", r.Shard, len(r.Cells)+len(r.Crashes), r.PlanCells)
	case len(r.Merged) > 0:
		fmt.Fprintf(w, "merged from %d shards (split by %s)\n", len(r.Merged), r.Merged[0].Shard.By)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// writeSections prints what follows the answer, as much as view asks.
func writeSections(w io.Writer, r *results.Results, view View) {
	pres := presenterOf(r)
	pres.Tables(w, r)
	writeBurstTable(w, r)
	if view == ViewDetail {
		writeMachineBound(w, r)
		writeRefaults(w, r)
	}
	writeBucketTable(w, r, pres.Work)
	writeCrashTable(w, r)
	if len(r.Cells) > 0 {
		writeSeedComparison(w, r)
		if pres.Differences != nil && view == ViewDetail {
			pres.Differences(w, r)
		}
		WriteScoreboard(w, r)
	}
	writeFailures(w, r)
	writeVerdict(w, r)
	writeThresholds(w, r)
}

// writeFailures lists each failed cell and why.
func writeFailures(w io.Writer, r *results.Results) {
	var failed []string
	for _, c := range r.Cells {
		if c.Failure != "" {
			failed = append(failed, fmt.Sprintf("  cell %d (%s): %s", c.Index, scenario.Label(c.Backend, r.Key(c.Cell).Point, fmt.Sprintf("run %d", c.Repeat)), c.Failure))
		}
	}
	for _, c := range r.Crashes {
		if c.Failure != "" {
			failed = append(failed, fmt.Sprintf("  crash %d (%s): %s", c.Index, scenario.Label(c.Backend, r.Key(c.Cell).Point, fmt.Sprintf("run %d", c.Repeat)), c.Failure))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n%d cell(s) failed:\n%s\n", len(failed), strings.Join(failed, "\n"))
	}
}

// writeGenericTable prints every metric's median per backend and sweep point: the table of a
// workload without a presenter of its own.
func writeGenericTable(w io.Writer, r *results.Results) {
	if len(r.Aggregates) == 0 { // crash runs only: the crash table says it all
		return
	}
	names := map[string]bool{}
	for _, a := range r.Aggregates {
		for m := range a.Median {
			names[m] = true
		}
	}
	var metrics []string
	for m := range names {
		metrics = append(metrics, m)
	}
	sort.Strings(metrics)
	t := Table{Title: fmt.Sprintf("%d run(s) per row, each column the median over runs", r.Scenario.Repeat), Columns: []string{"backend", "point", "runs"}}
	for _, m := range metrics {
		t.Columns = append(t.Columns, m+unitSuffix(r, m))
	}
	for _, a := range r.Aggregates {
		row := []string{a.Backend, a.Point, fmt.Sprint(a.Runs)}
		for _, m := range metrics {
			row = append(row, fmt.Sprintf("%.4g", a.Median[m]))
		}
		t.Rows = append(t.Rows, row)
	}
	WriteTable(w, t)
}

func unitSuffix(r *results.Results, metric string) string {
	if u := r.Units[metric]; u != "" {
		return " (" + u + ")"
	}
	return ""
}

// writeBucketTable shows, for backends on a bucket, its requests per unit of work and their cost.
func writeBucketTable(w io.Writer, r *results.Results, work WorkUnit) {
	if t, ok := bucketTable(r, work); ok {
		WriteTable(w, t)
	}
}

// bucketTable is the bucket's requests per unit of work and their cost, per row on a bucket.
func bucketTable(r *results.Results, work WorkUnit) (Table, bool) {
	any := false
	for _, a := range r.Aggregates {
		any = any || a.Bucket != nil
	}
	if !any {
		return Table{}, false
	}
	scale, costScale := max(work.Scale, 1), max(work.CostScale, 1)
	prices := priceLists(r)
	t := Table{Title: fmt.Sprintf("bucket requests per %s, and their cost at list prices (medians over runs)", work.Label),
		Columns: []string{"backend", "point", "class A", "class B", "KiB up", "KiB down", "429s/run"}}
	for _, p := range prices {
		t.Columns = append(t.Columns, "$/"+work.CostLabel+" "+p.Name)
	}
	t.Columns = append(t.Columns, "class A/s", "$/month "+prices[0].Name, "repl. lag ms", "")
	var thin, little []string
	for _, a := range r.Aggregates {
		u := a.Bucket
		if u == nil {
			continue
		}
		lag := "-"
		if v := a.Median["replication_lag_ms"]; v > 0 {
			lag = fmt.Sprintf("%.0f", v)
		}
		row := []string{a.Backend, a.Point, fmt.Sprintf("%.2f", u.ClassA*scale), fmt.Sprintf("%.2f", u.ClassB*scale),
			fmt.Sprintf("%.2f", u.BytesIn*scale/1024), fmt.Sprintf("%.2f", u.BytesOut*scale/1024), fmt.Sprintf("%.0f", u.Throttled)}
		switch {
		case u.TooLittleWork:
			// Its operations per unit are shown as measured; a price per unit would multiply them.
			for range prices {
				row = append(row, "†")
			}
			row = append(row, fmt.Sprintf("%.2f", u.ClassAPerS), fmt.Sprintf("%.2f", bucketMonth(prices, u)), lag,
				fmt.Sprintf("† %s of work, %s through the bucket per run", sizeText(u.UnitsPerRun*work.BytesPerUnit), sizeText(u.BucketBytesPerRun)))
			little = append(little, a.Backend+" "+a.Point)
		case u.TooFewToPrice || len(u.Costs) == 0:
			// A price from a handful of uploads would be the luck of the run: marked, not given.
			for range prices {
				row = append(row, "*")
			}
			in := "the run"
			if a.Runs > 1 {
				in = "the median run"
			}
			row = append(row, fmt.Sprintf("%.2f", u.ClassAPerS), "*", lag, fmt.Sprintf("* %s in %s", opsText(u.ClassAOps, u.ClassBOps), in))
			thin = append(thin, a.Backend+" "+a.Point)
		default:
			for _, c := range u.Costs {
				row = append(row, fmt.Sprintf("%.4f", c.USDPerUnit*costScale))
			}
			row = append(row, fmt.Sprintf("%.2f", u.ClassAPerS), fmt.Sprintf("%.2f", u.Costs[0].USDPerMonth), lag, "")
		}
		t.Rows = append(t.Rows, row)
	}
	if len(little) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("† not priced: in most runs of %s the work was under 1/%d of a %s while the bucket moved over %d times "+
			"the work's bytes; a price per %s would multiply what the run's few operations moved by over %d. Its operations per unit "+
			"are as measured, $/month is its rate of operations for 30 days, and pooled prices leave its runs out",
			ListAnd(little), MaxExtrapolation, work.CostLabel, MaxExtrapolation, work.CostLabel, MaxExtrapolation))
	}
	var bucketBackends []string
	for _, b := range r.BackendOrder() {
		for _, a := range r.AggregatesOf(b) {
			if a.Bucket != nil && !slices.Contains(bucketBackends, b) {
				bucketBackends = append(bucketBackends, b)
			}
		}
	}
	t.Notes = append(t.Notes, tooFewToPriceNotes(r, thin, bucketBackends, &work)...)
	t.Notes = append(t.Notes, "$/month runs the measured bucket operation rate for 30 days: it holds at the measured rate of work "+
		"only (Litestream uploads once per sync interval whatever the rate); run at your own rate to price yours.")
	return t, true
}

// bucketMonth is a row's bucket cost per month at its measured rate of operations, at the first
// price list: priced per second, so it stands where a price per unit of work would not (†).
func bucketMonth(prices []scenario.Price, u *results.BucketUse) float64 {
	return costs(prices, 0, 0, u.ClassAPerS, u.ClassBPerS)[0].USDPerMonth
}

// writeSeedComparison sets each published table beside ours: columns naming a parameter pick our
// row; the others are metrics, shown as ours, the seed's, and ours/seed.
func writeSeedComparison(w io.Writer, r *results.Results) {
	for _, t := range seedComparisonTables(r) {
		WriteTable(w, t)
	}
}

// seedComparisonTables are the published tables beside ours, one per published table that shares
// a row with the run.
func seedComparisonTables(r *results.Results) []Table {
	var out []Table
	for _, p := range r.Scenario.Published {
		paramCols, metricCols := publishedColumns(r, &p)
		t := Table{Title: fmt.Sprintf("%s beside the seed (%s)", p.Backend, p.Source)}
		if len(p.Params) > 0 {
			var fixed []string
			for k, v := range p.Params {
				fixed = append(fixed, k+"="+v)
			}
			sort.Strings(fixed)
			t.Title += " at " + strings.Join(fixed, " ")
		}
		for _, i := range paramCols {
			t.Columns = append(t.Columns, p.Columns[i])
		}
		for _, i := range metricCols {
			t.Columns = append(t.Columns, p.Columns[i], "seed", "ratio")
		}
		for _, row := range p.Rows {
			a := findAggregate(r, p.Backend, p.Params, p.Columns, paramCols, row)
			if a == nil {
				continue
			}
			var cells []string
			for _, i := range paramCols {
				cells = append(cells, string(row[i]))
			}
			for _, i := range metricCols {
				seed, ok := row[i].Float()
				ours, have := a.Median[p.Columns[i]]
				switch {
				case !ok || !have:
					cells = append(cells, "-", string(row[i]), "-")
				default:
					cells = append(cells, fmt.Sprintf("%.2f", ours), fmt.Sprintf("%.2f", seed), fmt.Sprintf("%.2fx", ours/seed))
				}
			}
			t.Rows = append(t.Rows, cells)
		}
		if len(t.Rows) == 0 {
			continue
		}
		if p.Notes != "" {
			t.Notes = []string{p.Notes}
		}
		out = append(out, t)
	}
	return out
}

// isParam says whether name is a parameter of the run (swept or fixed) rather than a metric.
func isParam(r *results.Results, name string) bool {
	if r.Scenario.Sweep.Has(name) {
		return true
	}
	if _, ok := r.Scenario.Workload.Params[name]; ok {
		return true
	}
	for _, b := range r.Scenario.Backends {
		if _, ok := b.Params[name]; ok {
			return true
		}
	}
	return false
}

// publishedColumns splits a published table's columns into those naming a parameter of the run
// (they pick our row) and the metrics.
func publishedColumns(r *results.Results, p *scenario.Published) (paramCols, metricCols []int) {
	for i, c := range p.Columns {
		if isParam(r, c) {
			paramCols = append(paramCols, i)
		} else {
			metricCols = append(metricCols, i)
		}
	}
	return paramCols, metricCols
}

// SeedRow is a published row beside our aggregate at the same point.
type SeedRow struct {
	Ours *results.Aggregate // our row at the published row's point
	Row  []scenario.Value   // the published row, in its table's columns
}

// SeedRows pairs each row of a published table with our aggregate at its point, in the table's
// order; rows we did not measure are left out.
func SeedRows(r *results.Results, p *scenario.Published) []SeedRow {
	paramCols, _ := publishedColumns(r, p)
	var out []SeedRow
	for _, row := range p.Rows {
		if a := findAggregate(r, p.Backend, p.Params, p.Columns, paramCols, row); a != nil {
			out = append(out, SeedRow{a, row})
		}
	}
	return out
}

// Seed is the published value of column in the row, if it has a number there.
func (s SeedRow) Seed(p *scenario.Published, column string) (float64, bool) {
	for i, c := range p.Columns {
		if c == column && i < len(s.Row) {
			return s.Row[i].Float()
		}
	}
	return 0, false
}

// findAggregate finds backend's aggregate whose parameters equal the row's parameter columns and
// the table's fixed parameters (sizes and numbers compared by value: 128KB = 128KiB).
func findAggregate(r *results.Results, backend string, fixed map[string]string, columns []string, paramCols []int, row []scenario.Value) *results.Aggregate {
	for i := range r.Aggregates {
		a := &r.Aggregates[i]
		if a.Backend != backend {
			continue
		}
		match := true
		for _, c := range paramCols {
			match = match && SameParam(r, backend, columns[c], a.Params[columns[c]], string(row[c]))
		}
		for k, v := range fixed {
			match = match && SameParam(r, backend, k, a.Params[k], v)
		}
		if match {
			return a
		}
	}
	return nil
}

// SameParam compares a cell's parameter value (or the one the scenario fixes for backend) with a
// published one (sizes and numbers by value: 128KB = 128KiB).
func SameParam(r *results.Results, backend, name, ours, theirs string) bool {
	if ours == "" {
		ours = r.Scenario.FixedParams(backend)[name]
	}
	if ours == theirs {
		return true
	}
	x, y := results.ParamNumber(ours), results.ParamNumber(theirs)
	return x != 0 && x == y
}

// failedCells counts the run's cells and crash runs that failed.
func failedCells(r *results.Results) int {
	failed := 0
	for _, c := range r.Cells {
		if c.Failure != "" {
			failed++
		}
	}
	for _, c := range r.Crashes {
		if c.Failure != "" {
			failed++
		}
	}
	return failed
}

// Verdict is how a run ended, for its exit status: cells that failed, and what crossed a
// threshold: rows whose share of failed requests passed the scenario's max_error_rate, and the
// scenario's thresholds that a row crossed or no row could judge.
func Verdict(r *results.Results) (failed int, crossed []string) {
	failed = failedCells(r)
	for _, row := range errorRateCrossed(r) {
		crossed = append(crossed, "max_error_rate "+strconv.FormatFloat(r.Scenario.ErrorRateLimit(), 'g', -1, 64)+": "+row)
	}
	for _, j := range Judge(r) {
		switch {
		case j.Err != nil:
			crossed = append(crossed, j.Threshold.Text+": "+j.Err.Error())
		case len(j.Crossed) > 0:
			crossed = append(crossed, j.Threshold.Text+": crossed in "+strings.Join(j.Crossed, "; "))
		case j.Held == 0:
			crossed = append(crossed, j.Threshold.Text+": no row measured it")
		}
	}
	return failed, crossed
}

// errorRateCrossed names the rows whose share of failed requests passed max_error_rate.
func errorRateCrossed(r *results.Results) []string {
	var crossed []string
	limit := r.Scenario.ErrorRateLimit()
	for _, a := range r.Aggregates {
		if share, ok := ErrorShare(a); ok && share > limit {
			crossed = append(crossed, fmt.Sprintf("%s: %.1f%% of requests failed", scenario.Label(a.Backend, a.Point), 100*share))
		}
	}
	return crossed
}

// ErrorShare is the share of a row's requests that failed, where the workload counts requests.
func ErrorShare(a results.Aggregate) (float64, bool) {
	ok, okCounted := a.Total["ok"]
	errs, errCounted := a.Total["errors"]
	if !okCounted || !errCounted || ok+errs == 0 {
		return 0, false
	}
	return errs / (ok + errs), true
}

// writeVerdict says which rows crossed the error threshold.
func writeVerdict(w io.Writer, r *results.Results) {
	if crossed := errorRateCrossed(r); len(crossed) > 0 {
		fmt.Fprintf(w, "\n%d row(s) over the error threshold (max_error_rate %g): their latency describes failures, not storage\n  %s\n",
			len(crossed), r.Scenario.ErrorRateLimit(), strings.Join(crossed, "\n  "))
	}
}

// MachineBoundShare is the machine CPU share (every core) above which a row is marked as bound by
// this machine: the cloud model is no longer what limits it.
const MachineBoundShare = 0.9

// CeilingShare is the share of the lab's own ceiling (Results.Ceilings, measured with the model
// off) above which a row is marked as bound by this machine.
const CeilingShare = 0.8

// BoundBy says why a row is bound by this machine rather than by the cloud model ("" if it is not):
// it kept the machine's CPUs busy, or it moved data near what the lab moves with the model off.
func BoundBy(r *results.Results, a results.Aggregate) string {
	var why []string
	if cpu := a.Median["machine_cpu_util"]; cpu >= MachineBoundShare {
		why = append(why, fmt.Sprintf("%.0f%% of the machine's CPU busy", 100*cpu))
	}
	if c, ok := r.Ceilings[a.Backend]; ok {
		for _, d := range []struct {
			metric, dir, unit string
			ceiling           float64
		}{{"read_mib_s", "read", "MiB/s", c.ReadMiBs}, {"write_mib_s", "write", "MiB/s", c.WriteMiBs},
			{"read_iops", "read", "IOPS", c.ReadIOPS}, {"write_iops", "write", "IOPS", c.WriteIOPS}} {
			v, ok := a.Median["lab_"+d.metric] // what the lab moved, when the backend counts it
			if !ok {
				v = a.Median[d.metric]
			}
			if d.ceiling > 0 && v >= CeilingShare*d.ceiling {
				why = append(why, fmt.Sprintf("%s %.0f %s, %.0f%% of the lab's %s ceiling %.0f %s", d.dir, v, d.unit, 100*v/d.ceiling, d.dir, d.ceiling, d.unit))
			}
		}
	}
	return strings.Join(why, "; ")
}

// writeMachineBound lists the rows bound by this machine rather than by the cloud model.
func writeMachineBound(w io.Writer, r *results.Results) {
	var rows []string
	for _, a := range r.Aggregates {
		if why := BoundBy(r, a); why != "" {
			rows = append(rows, fmt.Sprintf("%s (%s)", scenario.Label(a.Backend, a.Point), why))
		}
	}
	// Backends of one lab part (eight volume types) share one measured ceiling: said once.
	var ceilings []string
	backendsOf := map[string][]string{}
	for _, b := range r.BackendOrder() {
		if c, ok := r.Ceilings[b]; ok {
			iops := ""
			if c.ReadIOPS > 0 || c.WriteIOPS > 0 {
				iops = fmt.Sprintf("; small I/O read %.0f IOPS, write %.0f IOPS", c.ReadIOPS, c.WriteIOPS)
			}
			line := fmt.Sprintf("read %.0f MiB/s, write %.0f MiB/s%s (%s)", c.ReadMiBs, c.WriteMiBs, iops, c.Method)
			if backendsOf[line] == nil {
				ceilings = append(ceilings, line)
			}
			backendsOf[line] = append(backendsOf[line], b)
		}
	}
	for _, line := range ceilings {
		names := backendsOf[line]
		which := "backend " + names[0]
		if len(names) > 1 {
			which = "backends " + strings.Join(names, ", ")
		}
		fmt.Fprintf(w, "\nthe lab's own ceiling for %s on this machine: %s\n", which, line)
	}
	if len(rows) > 0 {
		fmt.Fprintf(w, "\nbound by this machine, not by the cloud model (CPU %.0f%% busy or more, or %.0f%% of the lab's ceiling): read these rows as this machine's limit\n  %s\n",
			100*MachineBoundShare, 100*CeilingShare, strings.Join(rows, "\n  "))
	}
}
