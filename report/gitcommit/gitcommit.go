// Package gitcommit presents the gitcommit workload's results: seed 004's tables, chart and scores.
package gitcommit

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"persistlab/report"
	"persistlab/results"
)

// The gitcommit workload's presentation (seed 004): per backend the run's pace, its windows, the
// disk use of each layout and the volume's monthly list price; the seed's ratios beside ours; and
// the seed's chart, changes per second against the change number.
func init() {
	report.RegisterPresenter("gitcommit", report.Presenter{
		Tables: gitcommitTables,
		Charts: gitcommitCharts,
		Answer: gitcommitAnswer,
		Compare: []report.CompareMetric{{Name: "changes_per_s", HigherBetter: true}, {Name: "total_s"},
			{Name: "last_window_per_s", HigherBetter: true}, {Name: "change_p99_ms"}, {Name: "git_mib"}},
	})
	report.RegisterScores("004", seed004Scores)
}

// Seed 004's figures that its text states (its charts are images): the total time of sc1 was
// "a little under 4x" st1's; SSD volumes ended near 180 commits/s, st1 near a floor of 20.
const (
	seed004SC1OverST1Total = 3.8 // 「4倍弱」, read as 3.8
	seed004SSDLastWindow   = 180.0
	seed004ST1Floor        = 20.0
)

func gitcommitTables(w io.Writer, r *results.Results) {
	if len(r.Aggregates) == 0 { // crash runs only: the crash table says it all
		return
	}
	p := report.FixedParams(r)
	fmt.Fprintf(w, "gitcommit: %s files, %s changes, git add --all + git commit after each; %d run(s) per row, each column the median over runs\n",
		p["files"], p["changes"], r.Scenario.Repeat)
	tw := report.NewTable(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\tlayout\tchanges/s\ttotal s\tfirst window\tlast window\tslowest window\tp50 ms\tp99 ms\tcommits\tunchanged\tgit MiB\tfiles MiB\tas files MiB\tgit cpu\tmachine\tvolume $/month\t")
	for _, b := range r.BackendOrder() {
		for _, a := range r.AggregatesOf(b) {
			m := a.Median
			layout := a.Resolved["layout"]
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t\n",
				b, layout, m["changes_per_s"], m["total_s"], m["first_window_per_s"], m["last_window_per_s"], m["min_window_per_s"],
				m["change_p50_ms"], m["change_p99_ms"], m["ok"], m["unchanged"], m["git_mib"], m["worktree_mib"], m["as_files_mib"],
				report.OptPct(m, "git_cpu_util"), report.OptPct(m, "machine_cpu_util"), volumePrice(r, b))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "  changes/s counts every change, as the seed did (a change that left its file as it was makes no commit);")
	fmt.Fprintln(w, "  a window is the run's `window` changes; git cpu is the driver's and every git's CPU as a share of one CPU.")
	writeGitcommitRatios(w, r)
	writeGitGC(w, r)
	writeVolumeUnits(w, r)
	writeVolumePrices(w, r)
}

// writeGitGC shows git's automatic gc where a run counted it (files from before have no
// auto_gcs): how many began, whether detached (gc.autoDetach), how long the last ran on after the
// changes, and the disk use as the last change ended beside the disk use after it.
func writeGitGC(w io.Writer, r *results.Results) {
	var tw *report.LineTable
	for _, b := range r.BackendOrder() {
		for _, a := range r.AggregatesOf(b) {
			m := a.Median
			detached := a.Resolved["gc_auto_detach"] == "true"
			if gcs, ok := m["auto_gcs"]; !ok || (gcs == 0 && !detached) {
				continue
			}
			if tw == nil {
				fmt.Fprintln(w, "\ngit's automatic gc (detached: git's default, in the background while the changes go on; inline: inside the commit that begins it):")
				tw = report.NewTable(w, tabwriter.AlignRight)
				fmt.Fprintln(tw, "backend\tlayout\tgc\tgc notices\tran on after the changes s\tdisk MiB at the last change\tdisk MiB after the gc\t")
			}
			mode, after, atEnd := "inline", "-", "-"
			if detached {
				mode = "detached"
				after = fmt.Sprintf("%.1f", m["gc_after_s"])
			}
			if v, ok := m["disk_at_end_mib"]; ok {
				atEnd = fmt.Sprintf("%.1f", v)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%s\t%s\t%.1f\t\n", b, a.Resolved["layout"], mode, m["auto_gcs"], after, atEnd, m["disk_mib"])
		}
	}
	if tw != nil {
		tw.Flush()
		fmt.Fprintln(w, "  disk MiB at the last change is read only on a volume of the cell's own (statfs, at once); the seed's du ran after its script ended.")
	}
}

func volumePrice(r *results.Results, b string) string {
	m, ok := report.VolumeModel(r, b)
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f", m.MonthlyUSD)
}

// writeVolumePrices says how each volume's monthly price is made up.
func writeVolumePrices(w io.Writer, r *results.Results) {
	header := false
	for _, b := range r.BackendOrder() {
		m, ok := report.VolumeModel(r, b)
		if !ok {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nvolume list prices per month (lab/volume/price.go cites the price pages; storage and provisioned IOPS only):")
			header = true
		}
		fmt.Fprintf(w, "  %-16s $%9.2f  %s\n", b, m.MonthlyUSD, m.PriceBasis)
	}
}

// gitRow is a backend's distributed-layout row and its volume type, for the seed's comparisons.
type gitRow struct {
	backend, typ string
	m            map[string]float64
	resolved     map[string]string
}

func gitRows(r *results.Results, layout string) []gitRow {
	var out []gitRow
	for _, b := range r.BackendOrder() {
		for _, a := range r.AggregatesOf(b) {
			if a.Resolved["layout"] != layout {
				continue
			}
			typ := "other" // local disk, or the emulator with its model off
			if m, ok := report.VolumeModel(r, b); ok {
				typ = m.Type
			}
			out = append(out, gitRow{backend: b, typ: typ, m: a.Median, resolved: a.Resolved})
		}
	}
	return out
}

// writeGitcommitRatios sets seed 004's findings beside ours: the HDD types' total time against
// SSD's and against each other, where each type's pace ends, and the layouts' disk use.
func writeGitcommitRatios(w io.Writer, r *results.Results) {
	byType := map[string]map[string]float64{}
	for _, row := range gitRows(r, "distributed") {
		if _, seen := byType[row.typ]; !seen {
			byType[row.typ] = row.m
		}
	}
	var lines []string
	ratio := func(a, b, metric string) (float64, bool) {
		x, y := byType[a], byType[b]
		if x == nil || y == nil || y[metric] == 0 {
			return 0, false
		}
		return x[metric] / y[metric], true
	}
	if v, ok := ratio("sc1", "st1", "total_s"); ok {
		lines = append(lines, fmt.Sprintf("sc1 / st1 total time      %6.2fx   seed: about %.1fx (\"a little under 4x\")", v, seed004SC1OverST1Total))
	}
	for _, ssd := range []string{"io1", "gp2"} {
		if v, ok := ratio("st1", ssd, "total_s"); ok {
			lines = append(lines, fmt.Sprintf("st1 / %s total time      %6.2fx   seed: SSD far ahead (its chart; no figure in the text)", ssd, v))
		}
	}
	for _, typ := range []string{"io1", "gp2", "st1", "sc1"} {
		m := byType[typ]
		if m == nil {
			continue
		}
		trend := "rising"
		if m["last_window_per_s"] < m["first_window_per_s"] {
			trend = "falling"
		}
		seed := fmt.Sprintf("seed: rising to about %.0f/s", seed004SSDLastWindow)
		switch typ {
		case "st1":
			seed = fmt.Sprintf("seed: falling to a floor near %.0f/s", seed004ST1Floor)
		case "sc1":
			seed = "seed: falling, slower than st1"
		}
		lines = append(lines, fmt.Sprintf("%-4s pace %s, first %.1f, last %.1f, slowest %.1f changes/s   %s", typ, trend,
			m["first_window_per_s"], m["last_window_per_s"], m["min_window_per_s"], seed))
	}
	if dist, mono := gitRows(r, "distributed"), gitRows(r, "monolithic"); len(dist) > 0 && len(mono) > 0 {
		d, o := dist[0].m, mono[0].m
		lines = append(lines, fmt.Sprintf("disk use: distributed %.0f MiB, monolithic %.0f MiB, as plain files %.0f MiB   seed: 1.1 GB, 460 MB, 79 MB",
			diskMiB(d), diskMiB(o), d["as_files_mib"]))
		lines = append(lines, fmt.Sprintf("monolithic on %s: pace first %.1f, last %.1f, slowest %.1f changes/s   seed: slowing after about 2,000 commits",
			mono[0].backend, o["first_window_per_s"], o["last_window_per_s"], o["min_window_per_s"]))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nseed 004 beside ours (its text's figures; its charts are images)")
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
}

// gitcommitCharts draws the seed's chart: changes per second in each window against the change
// number the window ended at, a line per backend (first repeat).
func gitcommitCharts(r *results.Results) ([]report.Chart, error) {
	ch := report.Chart{ID: "gitcommit-pace", Title: "changes per second, per window of changes", XLabel: "changes done", XUnit: report.UnitCount, YLabel: "changes/s"}
	for _, c := range r.Cells {
		if c.Failure != "" || c.Repeat > 1 {
			continue
		}
		rate, done := c.Series["changes_per_s"], c.Series["changes"]
		if len(rate) == 0 || len(rate) != len(done) {
			continue
		}
		name := strings.TrimSpace(c.Backend + " " + c.Point(r.Scenario.Sweep))
		s := report.Series{Name: name, Group: c.Backend, Style: "solid"}
		for i := range rate {
			s.Points = append(s.Points, [2]float64{done[i].V, rate[i].V})
		}
		ch.Series = append(ch.Series, s)
	}
	if len(ch.Series) == 0 {
		return nil, nil
	}
	return []report.Chart{ch}, nil
}

// diskMiB is a row's disk use: measured whole, or (older results) its parts.
func diskMiB(m map[string]float64) float64 {
	if v, ok := m["disk_mib"]; ok {
		return v
	}
	return m["git_mib"] + m["worktree_mib"]
}
