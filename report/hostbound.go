package report

import (
	"fmt"
	"io"
	"strings"

	"persistlab/lab"
	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
)

// HostBoundShare is the share of a volume's reads that page cache read again (refaults) must
// reach for its row to be marked host-bound: this machine took back page cache the instance
// would have kept (a page-out policy such as DAMON's, or the machine's own memory pressure), so
// the volume read it again, billing I/O units and spending credits for it. Assumed, not
// measured: a quarter is the margin within which a prediction counts as landing (25%), so reads
// beyond it can move a figure that rests on reads (st1's floor, a credit burn) out of it.
const HostBoundShare = 0.25

// HostBound says why a row's volume reads are this machine's ("" when they are not, or were
// not measured): what it read again reached HostBoundShare of them while the instance never
// reached its memory limit. A row whose instance reached its limit is not marked: its own
// reclaim refaults too, and the two cannot be told apart.
func HostBound(a results.Aggregate) string {
	share, measured := a.Median[RefaultShareMetric]
	if !measured || share < HostBoundShare || a.Total[results.MemoryLimitHitsMetric] > 0 {
		return ""
	}
	return fmt.Sprintf("%.0f%% of what its volume read was page cache read again", 100*share)
}

// hostBoundRows are the labels of the rows HostBound marks.
func hostBoundRows(r *results.Results) []string {
	var rows []string
	for _, a := range r.Aggregates {
		if HostBound(a) != "" {
			rows = append(rows, scenario.Label(a.Backend, a.Point))
		}
	}
	return rows
}

// writeRefaults prints, for each row on a volume with its model in effect, the page cache it read
// again beside what its volume read, and which rows that makes host-bound; "not measured" for
// rows of files that did not record it.
func writeRefaults(w io.Writer, r *results.Results) {
	t := Table{Title: "page cache read again while measured (refaults), against what the volume read",
		Columns: []string{"row", "volume read MiB", "read again MiB", "share", "memory limit reached", "from", ""}}
	var unmeasured bool
	for _, a := range r.Aggregates {
		if _, modelled := VolumeModel(r, a.Backend); !modelled {
			continue
		}
		reads, from := rowReads(r, a)
		row := []string{scenario.Label(a.Backend, a.Point), reads}
		refaults, measured := a.Median[results.RefaultBytesMetric]
		if !measured {
			unmeasured = true
			t.Rows = append(t.Rows, append(row, "not measured", "-", "-", from, ""))
			continue
		}
		share := "-" // the volume read nothing: no share to take
		if v, ok := a.Median[RefaultShareMetric]; ok {
			share = fmt.Sprintf("%.0f%%", 100*v)
		}
		hits := "-" // not counted: the instance had no memory cgroup
		if n, ok := a.Total[results.MemoryLimitHitsMetric]; ok {
			hits = fmt.Sprintf("%.0f times", n)
		}
		mark := ""
		if HostBound(a) != "" {
			mark = "host-bound"
		}
		t.Rows = append(t.Rows, append(row, fmt.Sprintf("%.1f", refaults/(1<<20)), share, hits, from, mark))
	}
	if len(t.Rows) == 0 {
		return
	}
	t.Notes = append(t.Notes, fmt.Sprintf("host-bound: what the row read again reached %.0f%% of its volume's reads (an assumed share: the 25%% within which a prediction lands) and the instance never reached its memory limit; this machine took back page cache the instance would have kept (its page-out, or its memory pressure), and the volume read it again, billing I/O units and spending credits for it: read the row's reads, units and credits as this machine's.",
		100*HostBoundShare))
	t.Notes = append(t.Notes, "a row whose instance reached its memory limit is not marked: its own reclaim reads pages again too, and the two cannot be told apart. from: the instance's memory cgroup, or the whole machine's counters (every process's) where the instance had no memory cgroup.")
	if unmeasured {
		t.Notes = append(t.Notes, "not measured: the cells did not record it (results of an earlier persistlab, or counters that could not be read).")
	}
	WriteTable(w, t)
}

// rowReads is the median of what the row's volume read per cell, in MiB ("-" where no cell
// counted it), and where its refaults were read from ("instance", "machine", "unreadable", or "-").
func rowReads(r *results.Results, a results.Aggregate) (reads, from string) {
	var vals []float64
	kinds := map[string]bool{}
	for _, c := range r.Cells {
		if c.Failure != "" || r.Key(c.Cell) != (results.PointKey{Backend: a.Backend, Point: a.Point}) {
			continue
		}
		if v, ok := c.BackendStats[lab.VolumeReadBytes]; ok {
			vals = append(vals, v)
		}
		switch src := c.Facts[results.RefaultSourceFact]; {
		case src == results.RefaultsFromInstance:
			kinds["instance"] = true
		case src == results.RefaultsFromMachine:
			kinds["machine"] = true
		case strings.HasPrefix(src, "not measured"):
			kinds["unreadable"] = true
		}
	}
	reads = "-"
	if len(vals) > 0 {
		reads = fmt.Sprintf("%.1f", measure.Median(vals)/(1<<20))
	}
	var names []string
	for _, k := range []string{"instance", "machine", "unreadable"} {
		if kinds[k] {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return reads, "-"
	}
	return reads, strings.Join(names, ", ")
}
