package report

import (
	"fmt"
	"io"
	"strings"

	"persistlab/results"
	"persistlab/scenario"
)

// Judgement is one threshold over every row of a run.
type Judgement struct {
	Threshold scenario.Threshold
	Held      int      // rows whose value holds it
	Crossed   []string // "backend point: value", per row that does not
	// crossedRows holds "backend point" of each row in Crossed, for marking the row in its table.
	crossedRows map[string]bool
	// Unjudged names rows that carry no such figure (a cost where no bucket was written).
	Unjudged []string
	// Err is set when the threshold cannot be read against this run's metrics at all.
	Err error
}

// Failed says whether the threshold fails the run: a row crossed it, or no row could be judged
// (a gate that judged nothing must not pass).
func (j Judgement) Failed() bool { return j.Err != nil || len(j.Crossed) > 0 || j.Held == 0 }

// Judge evaluates the scenario's thresholds on every row: Aggregates, or CrashSummaries for a
// crash run. A row's value is the one its table shows.
func Judge(r *results.Results) []Judgement {
	if r.Scenario == nil {
		return nil
	}
	crash := r.Scenario.Crash != nil
	var out []Judgement
	for i, t := range r.Scenario.Thresholds {
		j := Judgement{Threshold: t}
		// Thresholds read back from a file hold their text; convert as the run did.
		if j.Err = j.Threshold.Resolve(fmt.Sprintf("thresholds[%d]", i), r.Units, crash); j.Err != nil {
			out = append(out, j)
			continue
		}
		t = j.Threshold
		judge := func(row string, v float64, ok bool) {
			switch {
			case !ok:
				j.Unjudged = append(j.Unjudged, row)
			case t.Holds(v):
				j.Held++
			default:
				j.Crossed = append(j.Crossed, fmt.Sprintf("%s: %s", row, fmtThresholdValue(v, unitOf(r, t.Metric))))
				if j.crossedRows == nil {
					j.crossedRows = map[string]bool{}
				}
				j.crossedRows[row] = true
			}
		}
		if crash {
			for _, s := range r.CrashSummaries {
				v, ok := crashFigure(s, t)
				judge(s.Backend+" "+s.Point, v, ok)
			}
		} else {
			for _, a := range r.Aggregates {
				v, ok := rowFigure(a, t)
				judge(a.Backend+" "+a.Point, v, ok)
			}
		}
		out = append(out, j)
	}
	return out
}

// CrossedBy lists the thresholds of js that row a crossed.
func CrossedBy(js []Judgement, a results.Aggregate) []string {
	var out []string
	for _, j := range js {
		if j.crossedRows[a.Backend+" "+a.Point] {
			out = append(out, j.Threshold.Text)
		}
	}
	return out
}

func unitOf(r *results.Results, metric string) string {
	if u, ok := scenario.RowMetrics[metric]; ok {
		return u
	}
	if u, ok := scenario.CrashMetrics[metric]; ok {
		return u
	}
	return r.Units[metric]
}

// rowFigure is a row's value of the threshold's metric; ok is false where the row has none.
func rowFigure(a results.Aggregate, t scenario.Threshold) (float64, bool) {
	switch t.Metric {
	case "error_rate":
		return ErrorShare(a)
	case "usd_per_month", "usd_per_unit":
		if a.Bucket == nil {
			return 0, false
		}
		c, ok := costOf(a.Bucket.Costs, t.Select)
		if t.Metric == "usd_per_unit" {
			return c.USDPerUnit, ok
		}
		return c.USDPerMonth, ok
	}
	v, ok := a.Median[t.Metric]
	return v, ok
}

// crashFigure is a crash row's value of the threshold's metric.
func crashFigure(s results.CrashSummary, t scenario.Threshold) (float64, bool) {
	switch t.Metric {
	case "lost_acked":
		return float64(s.LostMax), s.Runs > 0
	case "lost_acked_median":
		return s.LostMedian, s.Runs > 0
	case "lost_everything":
		return float64(s.LostEverything), s.Runs > 0
	case "lost_reach_ms":
		return s.ReachMaxMs, s.Runs > 0
	case "recovery_ms":
		return s.RecoveryMedianMs, s.Runs > 0
	case "integrity_failures":
		return float64(s.IntegrityFailures), s.IntegrityChecked > 0
	case "below_position":
		return float64(s.BelowPosition), s.Positions > 0
	case "acked_per_s":
		return s.AckedPerS, s.Runs > 0
	case "usd_per_month":
		c, ok := costOf(s.Costs, t.Select)
		return c.USDPerMonth, ok
	}
	return 0, false
}

// costOf is the cost under the named price list, or the first one.
func costOf(costs []results.Cost, name string) (results.Cost, bool) {
	for _, c := range costs {
		if name == "" || strings.EqualFold(c.Prices, name) {
			return c, true
		}
	}
	return results.Cost{}, false
}

func fmtThresholdValue(v float64, unit string) string {
	switch unit {
	case "share":
		return fmt.Sprintf("%.2f%%", 100*v)
	case "USD":
		return fmt.Sprintf("$%.4g", v)
	case "", "count":
		return fmt.Sprintf("%.4g", v)
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

// writeThresholds prints each threshold's verdict over the rows above it.
func writeThresholds(w io.Writer, r *results.Results) {
	js := Judge(r)
	if len(js) == 0 {
		return
	}
	fmt.Fprintf(w, "\nthresholds (each row's value as its table shows it; a run that crosses one exits with status 4)\n")
	tw := NewTable(w, 0)
	fmt.Fprintf(tw, "threshold\tverdict\trows held\tcrossed\tnot judged\n")
	for _, j := range js {
		verdict := "ok"
		switch {
		case j.Err != nil:
			verdict = "cannot judge: " + j.Err.Error()
		case len(j.Crossed) > 0:
			verdict = "CROSSED"
		case j.Held == 0:
			verdict = "FAILED: no row measured it"
		}
		total := j.Held + len(j.Crossed) + len(j.Unjudged)
		fmt.Fprintf(tw, "%s\t%s\t%d of %d\t%s\t%s\n", j.Threshold.Text, verdict, j.Held, total, OrDash(strings.Join(j.Crossed, "; ")), OrDash(strings.Join(j.Unjudged, "; ")))
	}
	tw.Flush()
}
