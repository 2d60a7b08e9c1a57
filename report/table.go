package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"persistlab/results"
	"persistlab/scenario"
)

// WriteTables prints the run's tables: the workload's own (its presenter's), the seed's published
// numbers beside ours, the bucket's requests and cost, crash runs, and every failed cell's reason.
func WriteTables(w io.Writer, r *results.Results) {
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
	// the answer goes first: here, under the title, in the text and Markdown (WriteMarkdown) alike
	pres := presenterOf(r)
	pres.Tables(w, r)
	writeMachineBound(w, r)
	writeBucketTable(w, r, pres.Work)
	writeCrashTable(w, r)
	if len(r.Cells) > 0 {
		writeSeedComparison(w, r)
		if pres.Differences != nil {
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
	fmt.Fprintf(w, "%d run(s) per row, each column the median over runs\n\n", r.Scenario.Repeat)
	tw := NewTable(w, tabwriter.AlignRight)
	header := "backend\tpoint\truns\t"
	for _, m := range metrics {
		header += m + unitSuffix(r, m) + "\t"
	}
	fmt.Fprintln(tw, header)
	for _, a := range r.Aggregates {
		line := fmt.Sprintf("%s\t%s\t%d\t", a.Backend, a.Point, a.Runs)
		for _, m := range metrics {
			line += fmt.Sprintf("%.4g\t", a.Median[m])
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

func unitSuffix(r *results.Results, metric string) string {
	if u := r.Units[metric]; u != "" {
		return " (" + u + ")"
	}
	return ""
}

// writeBucketTable shows, for backends on a bucket, its requests per unit of work and their cost.
func writeBucketTable(w io.Writer, r *results.Results, work WorkUnit) {
	any := false
	for _, a := range r.Aggregates {
		any = any || a.Bucket != nil
	}
	if !any {
		return
	}
	scale, costScale := max(work.Scale, 1), max(work.CostScale, 1)
	fmt.Fprintf(w, "\nbucket requests per %s, and their cost at list prices (medians over runs)\n", work.Label)
	prices := priceLists(r)
	tw := NewTable(w, tabwriter.AlignRight)
	columns := "backend\tpoint\tclass A\tclass B\tKiB up\tKiB down\t429s/run\t"
	for _, p := range prices {
		columns += "$/" + work.CostLabel + " " + p.Name + "\t"
	}
	columns += "class A/s\t$/month " + prices[0].Name + "\trepl. lag ms\t"
	fmt.Fprintln(tw, columns)
	var thin, thinBackends, little []string
	for _, a := range r.Aggregates {
		u := a.Bucket
		if u == nil {
			continue
		}
		lag := "-"
		if v := a.Median["replication_lag_ms"]; v > 0 {
			lag = fmt.Sprintf("%.0f", v)
		}
		line := fmt.Sprintf("%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t", a.Backend, a.Point, u.ClassA*scale, u.ClassB*scale,
			u.BytesIn*scale/1024, u.BytesOut*scale/1024, u.Throttled)
		if u.TooLittleWork {
			// Its operations per unit are shown as measured; a price per unit would multiply them.
			line += strings.Repeat("†\t", len(prices))
			month := costs(prices, 0, 0, u.ClassAPerS, u.ClassBPerS)[0].USDPerMonth
			line += fmt.Sprintf("%.2f\t%.2f\t%s\t  † %s of work, %s through the bucket per run", u.ClassAPerS, month, lag,
				sizeText(u.UnitsPerRun*work.BytesPerUnit), sizeText(u.BucketBytesPerRun))
			little = append(little, a.Backend+" "+a.Point)
			fmt.Fprintln(tw, line)
			continue
		}
		if u.TooFewToPrice || len(u.Costs) == 0 {
			// A price from a handful of uploads would be the luck of the run: marked, not given.
			line += strings.Repeat("*\t", len(prices))
			in := "the run"
			if a.Runs > 1 {
				in = "the median run"
			}
			line += fmt.Sprintf("%.2f\t*\t%s\t  * %s in %s", u.ClassAPerS, lag, opsText(u.ClassAOps, u.ClassBOps), in)
			thin = append(thin, a.Backend+" "+a.Point)
			if !slices.Contains(thinBackends, a.Backend) {
				thinBackends = append(thinBackends, a.Backend)
			}
			fmt.Fprintln(tw, line)
			continue
		}
		for _, c := range u.Costs {
			line += fmt.Sprintf("%.4f\t", c.USDPerUnit*costScale)
		}
		line += fmt.Sprintf("%.2f\t%.2f\t%s\t", u.ClassAPerS, u.Costs[0].USDPerMonth, lag)
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if len(little) > 0 {
		fmt.Fprintln(w, indentWrap(fmt.Sprintf("† not priced: in most runs of %s the work was under 1/%d of a %s while the bucket moved over %d times "+
			"the work's bytes; a price per %s would multiply what the run's few operations moved by over %d. Its operations per unit "+
			"are as measured, $/month is its rate of operations for 30 days, and pooled prices leave its runs out",
			ListAnd(little), MaxExtrapolation, work.CostLabel, MaxExtrapolation, work.CostLabel, MaxExtrapolation), "  ", "    "))
	}
	writeTooFewToPrice(w, r, thin, thinBackends, &work)
	fmt.Fprintln(w, "  $/month runs the measured bucket operation rate for 30 days: it holds at the measured rate of work")
	fmt.Fprintln(w, "  only (Litestream uploads once per sync interval whatever the rate); run at your own rate to price yours.")
}

// writeSeedComparison sets each published table beside ours: columns naming a parameter pick our
// row; the others are metrics, shown as ours, the seed's, and ours/seed.
func writeSeedComparison(w io.Writer, r *results.Results) {
	for _, p := range r.Scenario.Published {
		paramCols, metricCols := publishedColumns(r, &p)
		var rows []string
		for _, row := range p.Rows {
			a := findAggregate(r, p.Backend, p.Params, p.Columns, paramCols, row)
			if a == nil {
				continue
			}
			line := ""
			for _, i := range paramCols {
				line += string(row[i]) + "\t"
			}
			for _, i := range metricCols {
				seed, ok := row[i].Float()
				ours, have := a.Median[p.Columns[i]]
				switch {
				case !ok || !have:
					line += fmt.Sprintf("-\t%s\t-\t", row[i])
				default:
					line += fmt.Sprintf("%.2f\t%.2f\t%.2fx\t", ours, seed, ours/seed)
				}
			}
			rows = append(rows, line)
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s beside the seed (%s)\n", p.Backend, p.Source)
		if len(p.Params) > 0 {
			var fixed []string
			for k, v := range p.Params {
				fixed = append(fixed, k+"="+v)
			}
			sort.Strings(fixed)
			fmt.Fprintf(w, "  at %s\n", strings.Join(fixed, " "))
		}
		tw := NewTable(w, tabwriter.AlignRight)
		header := ""
		for _, i := range paramCols {
			header += p.Columns[i] + "\t"
		}
		for _, i := range metricCols {
			header += p.Columns[i] + "\tseed\tratio\t"
		}
		fmt.Fprintln(tw, header)
		for _, row := range rows {
			fmt.Fprintln(tw, row)
		}
		tw.Flush()
		if p.Notes != "" {
			fmt.Fprintf(w, "  %s\n", p.Notes)
		}
	}
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

// Verdict is how a run ended, for its exit status: cells that failed, and what crossed a
// threshold: rows whose share of failed requests passed the scenario's max_error_rate, and the
// scenario's thresholds that a row crossed or no row could judge.
func Verdict(r *results.Results) (failed int, crossed []string) {
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
