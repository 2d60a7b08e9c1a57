package gitcommit

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"persistlab/lab"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
)

// writeVolumeUnits shows where a volume's billed I/O units went, per change: read and write
// apart, in the first window, the last and over the run, from the counters the runner sampled
// during the cell. On HDD types every I/O that is not merged with its neighbour costs a MiB of
// throughput, so these say whether a pace's floor comes from git's writes or from reads of what
// the instance's page cache could no longer hold.
func writeVolumeUnits(w io.Writer, r *results.Results) {
	var rows []string
	for _, c := range r.Cells {
		if c.Failure != "" || c.Repeat > 1 {
			continue
		}
		reads, writes := c.Series[lab.StatsSeries(lab.VolumeReadUnits)], c.Series[lab.StatsSeries(lab.VolumeWriteUnits)]
		done := c.Series["changes"]
		if len(reads) < 2 || len(writes) < 2 || len(done) == 0 {
			continue
		}
		typ := "other"
		if m, ok := report.VolumeModel(r, c.Backend); ok {
			typ = m.Type
		}
		per := func(from, to int) string { // windows from..to-1: window i ends at done[i]
			t0, n0 := 0.0, 0.0
			if from > 0 {
				t0, n0 = done[from-1].T, done[from-1].V
			}
			t1, n1 := done[to-1].T, done[to-1].V
			if n1 <= n0 {
				return "-\t-"
			}
			rd, wr := valueAt(reads, t1)-valueAt(reads, t0), valueAt(writes, t1)-valueAt(writes, t0)
			return fmt.Sprintf("%.2f\t%.2f", rd/(n1-n0), wr/(n1-n0))
		}
		name := strings.TrimSpace(c.Backend + " " + c.Point(r.Scenario.Sweep))
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t", name, typ, per(0, 1), per(len(done)-1, len(done)), per(0, len(done))))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nvolume I/O units billed per change, read and write (EBS: a unit is 256 KiB on SSD, 1 MiB on HDD, where")
	fmt.Fprintln(w, "every I/O not merged with the one before it costs a whole unit); from the volume's counters sampled during the first run")
	tw := report.NewTable(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\ttype\tfirst window read\twrite\tlast window read\twrite\twhole run read\twrite\t")
	for _, row := range rows {
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

// valueAt is a sampled counter's value at time t, interpolated between the samples around it and
// held at the first or last sample outside them.
func valueAt(s []measure.Point, t float64) float64 {
	if t <= s[0].T {
		return s[0].V
	}
	for i := 1; i < len(s); i++ {
		if t <= s[i].T {
			a, b := s[i-1], s[i]
			if b.T == a.T {
				return b.V
			}
			return a.V + (b.V-a.V)*(t-a.T)/(b.T-a.T)
		}
	}
	return s[len(s)-1].V
}
