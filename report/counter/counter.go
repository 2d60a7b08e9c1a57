// Package counter presents the counter workload's results, and those of any app under the same
// HTTP load (workload http): seed 000's tables, slopes, charts and scores.
package counter

import (
	"fmt"
	"io"
	"math"
	"strings"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
)

// The counter workload's presentation: seed 000's table per backend, the slope of avg latency
// against VUs, latency charts, and the notes of runs with several instances.
func init() {
	report.RegisterPresenter("counter", counterPresenter)
	// Any app of the user's under the same load (workload http) reads the same way.
	report.RegisterPresenter("http", counterPresenter)
	report.RegisterScores("000", seed000Scores)
}

var counterPresenter = report.Presenter{
	Tables:      counterTables,
	Charts:      counterCharts,
	Summarize:   counterFits,
	Differences: counterDifferences,
	Beside:      slopesBeside,
	Answer:      counterAnswer,
	Family:      "http load",
	Compare: []report.CompareMetric{{Name: "med_ms"}, {Name: "avg_ms"}, {Name: "p95_ms"}, {Name: "p99_ms"},
		{Name: "rate", HigherBetter: true}},
	Work: report.WorkUnit{Name: "app request", Units: func(c results.Cell) float64 { return c.M("ok") },
		Scale: 1000, Label: "1,000 app requests", CostScale: 1e6, CostLabel: "1M req"},
}

// counterTables prints, per backend, the seed's table (vus, med, avg, p(90), p(95), min, max in ms)
// with rate, errors and the app's CPU use, then the slope of avg against VUs with the seed's own.
func counterTables(w io.Writer, r *results.Results) {
	mode := report.FixedParams(r)["mode"]
	if mode == "" { // a file from before results recorded the declared defaults
		mode = "closed"
	}
	fmt.Fprintf(w, "%s loop, %s per run, %d run(s) per row, each column the median over runs; latency in ms\n",
		mode, r.Scenario.Duration, r.Scenario.Repeat)
	judged := report.Judge(r)
	for _, b := range r.BackendOrder() {
		rows := r.AggregatesOf(b)
		if len(rows) == 0 {
			continue
		}
		t := report.Table{Title: "backend " + b,
			Columns: []string{"vus", "med", "avg", "p(90)", "p(95)", "p(99)", "min", "max", "req/s", "errors", "lost", "app cpu", b + " cpu", ""}}
		for _, a := range rows {
			m := a.Median
			helper := "-"
			if h := m["helper_cpu_util"]; h > 0 {
				helper = fmt.Sprintf("%.0f%%", h*100)
			}
			lost := "-" // measured where the app's count can be read back (the counter), not of any app
			if v, ok := a.Total["lost_updates"]; ok {
				lost = fmt.Sprintf("%.0f", v)
			}
			t.Rows = append(t.Rows, []string{a.Params["vus"], ms(m["med_ms"]), ms(m["avg_ms"]), ms(m["p90_ms"]), ms(m["p95_ms"]), ms(m["p99_ms"]),
				ms(m["min_ms"]), ms(m["max_ms"]), fmt.Sprintf("%.1f", m["rate"]), fmt.Sprintf("%.0f", a.Total["errors"]), lost,
				fmt.Sprintf("%.0f%%", m["app_cpu_util"]*100), helper, rowMark(a, r.Scenario.ErrorRateLimit(), judged)})
		}
		report.WriteTable(w, t)
	}
	if len(r.Fits) > 0 {
		fmt.Fprintf(w, "\nslope of avg latency against VUs (least squares through 0, every run)\n")
		for _, f := range r.Fits {
			fmt.Fprintf(w, "  %-12s %6.2f ms/VU", f.Backend, f.AvgMsPerVU)
			if f.Published > 0 {
				fmt.Fprintf(w, "   seed: %.2f ms/VU, ours/seed %.2fx", f.Published, f.AvgMsPerVU/f.Published)
			}
			fmt.Fprintln(w)
		}
		for i := 0; i < len(r.Fits); i++ {
			for j := i + 1; j < len(r.Fits); j++ {
				a, b := r.Fits[i], r.Fits[j]
				fmt.Fprintf(w, "  %s / %s = %.2fx", a.Backend, b.Backend, a.AvgMsPerVU/b.AvgMsPerVU)
				if a.Published > 0 && b.Published > 0 {
					fmt.Fprintf(w, "   (seed: %.2fx)", a.Published/b.Published)
				}
				fmt.Fprintln(w)
			}
		}
	}
	writeInstancesNote(w, r)
	writeMoments(w, r)
}

// ms writes a latency in the tables' precision.
func ms(v float64) string { return fmt.Sprintf("%.2f", v) }

// rowMark flags a row whose share of failed requests passed the threshold, that crossed one of
// the scenario's thresholds, or whose k6 script's own checks failed.
func rowMark(a results.Aggregate, limit float64, judged []report.Judgement) string {
	var marks []string
	if share, ok := report.ErrorShare(a); ok && share > limit {
		marks = append(marks, fmt.Sprintf("%.1f%% errors", 100*share))
	}
	if crossed := report.CrossedBy(judged, a); len(crossed) > 0 {
		marks = append(marks, "crossed "+strings.Join(crossed, ", "))
	}
	if n := a.Total["checks_failed"]; n > 0 {
		marks = append(marks, fmt.Sprintf("%.0f k6 checks failed", n))
	}
	if len(marks) == 0 {
		return ""
	}
	return "! " + strings.Join(marks, "; ")
}

// counterFits is seed 000's slope of avg latency against VUs per backend, over every run.
func counterFits(r *results.Results) {
	x, y := map[string][]float64{}, map[string][]float64{}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("count") == 0 {
			continue
		}
		x[c.Backend] = append(x[c.Backend], results.ParamNumber(c.Params["vus"]))
		y[c.Backend] = append(y[c.Backend], c.M("avg_ms"))
	}
	for _, b := range r.BackendOrder() {
		if len(x[b]) == 0 {
			continue
		}
		k := measure.SlopeThroughOrigin(x[b], y[b])
		if math.IsNaN(k) || math.IsInf(k, 0) { // vus fixed, not swept: no slope to fit
			continue
		}
		f := results.Fit{Backend: b, AvgMsPerVU: k, Points: len(x[b])}
		if p := r.Published(b); p != nil && p.Slope > 0 {
			f.Published, f.PublishedFrom = p.Slope, p.Source
		}
		r.Fits = append(r.Fits, f)
	}
}

// writeInstancesNote says how runs with several instances on one backend ended.
func writeInstancesNote(w io.Writer, r *results.Results) {
	for _, note := range instancesNotes(r) {
		fmt.Fprintf(w, "\n%s\n", note)
	}
}

// instancesNotes say, per backend, how runs with several instances on it ended: lost updates
// where the workload counts its data (the counter), integrity where a SQLite file was checked.
func instancesNotes(r *results.Results) []string {
	var notes []string
	for _, b := range r.BackendOrder() {
		var runs, counted, lostRuns, checked, failed, instances int
		var lost, ok float64
		for _, c := range r.Cells {
			if c.Backend != b || c.M("instances") < 2 || c.Failure != "" {
				continue
			}
			runs++
			instances = int(c.M("instances"))
			if _, has := c.Metrics["lost_updates"]; has {
				counted++
				lost += c.M("lost_updates")
				ok += c.M("ok")
				if c.M("lost_updates") > 0 {
					lostRuns++
				}
			}
			if integrity := c.Facts["integrity"]; integrity != "" {
				checked++
				if integrity != "ok" {
					failed++
				}
			}
		}
		if runs == 0 {
			continue
		}
		lostText := "lost updates not measured (the app states no count persistlab reads from its data)"
		if counted > 0 {
			lostText = fmt.Sprintf("%d of %d runs lost updates (%.0f of %.0f answered writes, %.1f%%)", lostRuns, counted, lost, ok, 100*lost/max(ok, 1))
		}
		integrityText := "integrity not checked (no SQLite file named)"
		if checked > 0 {
			integrityText = fmt.Sprintf("integrity_check failed in %d of %d", failed, checked)
		}
		notes = append(notes, fmt.Sprintf("%s shared by %d instances at once: %s; %s", b, instances, lostText, integrityText))
	}
	return notes
}
