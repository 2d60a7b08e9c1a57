// Package bulkload presents the bulkload workload's results: seed 001's tables and scores.
package bulkload

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"persistlab/lab"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
)

// The bulkload workload's presentation (seed 001): per disk size and loader count the seed's
// columns (write operations at the disk, InnoDB pages written, MB/s, bytes received, CPU, time),
// the growth per doubling of the disk against the seed's, where growth stops and what bound it,
// and each size's storage price with the cost of each 1,000 write IOPS gained.
func init() {
	report.RegisterPresenter("bulkload", report.Presenter{
		Tables:    bulkloadTables,
		Summarize: bulkloadRates,
		Answer:    bulkloadAnswer,
		Compare: []report.CompareMetric{{Name: "volume_write_ops_per_s", HigherBetter: true}, {Name: "pages_written_per_s", HigherBetter: true},
			{Name: "received_mib_s", HigherBetter: true}, {Name: "total_s"}},
	})
	report.RegisterScores("001", seed001Scores)
}

// Seed 001's write operations per second by disk size (one loader), as its text states them. Of
// 600 GB it gives no figure, only "almost the same result as pattern 6" (400 GB).
var seed001WriteOps = map[int]float64{50: 600, 100: 1080, 200: 2000, 400: 2500}

// Seed 001's other stated figures: Cloud SQL's CPU utilization of its 2 vCPUs (about 60% in the
// one-loader patterns 1, 3, 5 and 6; 65% with two loaders at 100 GB, 77-79% at 400 GB) and SSD
// storage at $0.22 per GB-month ("$11/month more" from 50 to 100 GB).
const (
	seed001VCPUs          = 2
	seed001CPUShare       = 0.60
	seed001SSDPerGBMonth  = 0.22
	seed001StatedSameFrom = 400 // 600 GB: "almost the same as pattern 6"
)

// innodbPage is InnoDB's page size; the seed estimated MB/s as pages written x 16 KiB.
const innodbPage = 16 << 10

// steadyRate is the mean per-second growth of a sampled cumulative counter over the middle of the
// cell (its first and last tenth left out), as the workload's own rates are taken.
func steadyRate(s []measure.Point) (float64, bool) {
	if len(s) < 3 {
		return 0, false
	}
	cut := (len(s) - 1) / 10
	first, last := s[cut], s[len(s)-1-cut]
	if last.T <= first.T {
		return 0, false
	}
	return (last.V - first.V) / (last.T - first.T), true
}

// bulkloadRates adds to each row what the volume did per second in the steady part (the seed's
// WriteOperations), median over runs, and the seed's own estimate of MB/s (pages x 16 KiB).
func bulkloadRates(r *results.Results) {
	for i := range r.Aggregates {
		a := &r.Aggregates[i]
		var ops, mibs, held []float64
		for _, c := range r.Cells {
			if c.Failure != "" || c.Backend != a.Backend || c.Point(r.Scenario.Sweep) != a.Point {
				continue
			}
			if v, ok := steadyRate(c.Series[lab.StatsSeries(lab.VolumeWriteOps)]); ok {
				ops = append(ops, v)
			}
			if v, ok := steadyRate(c.Series[lab.StatsSeries(lab.VolumeWriteBytes)]); ok {
				mibs = append(mibs, v/(1<<20))
			}
			// Seconds waited for the disk's tokens per second: how many I/Os its limits held
			// at once on average (InnoDB flushes in bursts, which meet the limits while the
			// mean rate stays below them).
			if v, ok := steadyRate(c.Series[lab.StatsSeries(lab.VolumeThrottledS)]); ok {
				held = append(held, v)
			}
		}
		if len(ops) > 0 {
			a.Median["volume_write_ops_per_s"] = measure.Median(ops)
		}
		if len(mibs) > 0 {
			a.Median["volume_write_mib_s"] = measure.Median(mibs)
		}
		if len(held) > 0 {
			a.Median["volume_ios_held"] = measure.Median(held)
		}
		a.Median["pages_mib_s"] = a.Median["pages_written_per_s"] * innodbPage / (1 << 20)
	}
}

type bulkRow struct {
	backend                     string
	gib                         int
	loaders                     string
	m                           map[string]float64
	writeIOPS, writeMiBs, price float64
}

func bulkRows(r *results.Results) []bulkRow {
	var out []bulkRow
	for _, b := range r.BackendOrder() {
		for _, a := range r.AggregatesOf(b) {
			row := bulkRow{backend: b, loaders: a.Resolved["loaders"], m: a.Median}
			if m, ok := report.VolumeModel(r, b); ok {
				row.gib = int(m.SizeBytes >> 30)
				row.writeIOPS, row.writeMiBs, row.price = m.WriteIOPS, m.WriteMiBps, m.MonthlyUSD
			}
			out = append(out, row)
		}
	}
	return out
}

func bulkloadTables(w io.Writer, r *results.Results) {
	rows := bulkRows(r)
	if len(rows) == 0 {
		return
	}
	p := report.FixedParams(r)
	fmt.Fprintf(w, "bulkload: LOAD DATA LOCAL INFILE of %s rows of %s bytes per loader; rates are means over the steady middle of the load (its first and last tenth left out)\n", p["rows"], p["row_bytes"])
	tw := report.NewTable(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\tdisk GB\tloaders\twrite IOPS limit\twrite ops/s\tof limit\tpages/s\tpages MB/s\tdata MiB/s\tredo MiB/s\tdisk MiB/s\theld by disk\tredo age MiB\treceived MiB/s\tserver cpu\ttotal s\trows/s\twarnings\ttable MiB\t$/month\t")
	for _, row := range rows {
		m := row.m
		held := "-" // a server of the user's own: its disk is out of sight
		if v, ok := m["volume_ios_held"]; ok {
			held = fmt.Sprintf("%.1f", v)
		}
		share := "-"
		if row.writeIOPS > 0 && m["volume_write_ops_per_s"] > 0 {
			share = fmt.Sprintf("%.0f%%", 100*m["volume_write_ops_per_s"]/row.writeIOPS)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t%.0f\t%s\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%.0f\t%.1f\t%.0f%%\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t\n",
			row.backend, row.gib, row.loaders, row.writeIOPS, m["volume_write_ops_per_s"], share, m["pages_written_per_s"], m["pages_mib_s"],
			m["data_written_mib_s"], m["log_written_mib_s"], m["volume_write_mib_s"], held, m["checkpoint_age_mib"], m["received_mib_s"], 100*m["server_cpu_util"],
			m["total_s"], m["rows_per_s"], m["warnings"], m["table_mib"], row.price)
	}
	tw.Flush()
	fmt.Fprintln(w, "  write ops/s: I/Os the volume received (the seed's WriteOperations); pages MB/s: pages x 16 KiB, the seed's estimate;")
	fmt.Fprintln(w, "  data: Innodb_data_written (doublewrite included); disk: what the volume wrote; held by disk: I/Os waiting for the disk's")
	fmt.Fprintln(w, "  limits at once, on average; redo age: InnoDB's checkpoint age (it flushes hard near 7/8 of the redo log); server cpu: mariadbd, share of one CPU.")
	writeBulkloadDoublings(w, rows)
}

// writeBulkloadDoublings sets the growth of write operations per doubling of the disk beside the
// seed's, says where growth stops and what was at its limit there, and prices each step.
func writeBulkloadDoublings(w io.Writer, rows []bulkRow) {
	var one []bulkRow
	for _, row := range rows {
		if row.gib > 0 && (row.loaders == "1" || row.loaders == "") && row.m["volume_write_ops_per_s"] > 0 {
			one = append(one, row)
		}
	}
	sort.Slice(one, func(i, j int) bool { return one[i].gib < one[j].gib })
	if len(one) < 2 {
		return
	}
	fmt.Fprintln(w, "\ngrowth of write ops/s with the disk (one loader), beside seed 001's")
	tw := report.NewTable(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "from\tto\tours\tseed\tdisk limit grew\textra $/month\t$ per 1,000 write IOPS gained\tat the larger size\t")
	var plateau []string
	for i := 1; i < len(one); i++ {
		a, b := one[i-1], one[i]
		ours := b.m["volume_write_ops_per_s"] / a.m["volume_write_ops_per_s"]
		seed := "-"
		if x, y := seed001WriteOps[a.gib], seed001WriteOps[b.gib]; x > 0 && y > 0 {
			seed = fmt.Sprintf("%.2fx", y/x)
		} else if a.gib == seed001StatedSameFrom && b.gib == 600 {
			seed = "~1 (stated)"
		}
		gained := b.m["volume_write_ops_per_s"] - a.m["volume_write_ops_per_s"]
		perK := "-"
		if gained > 0 {
			perK = fmt.Sprintf("%.2f", (b.price-a.price)/gained*1000)
		}
		bound := boundOf(b)
		fmt.Fprintf(tw, "%d GB\t%d GB\t%.2fx\t%s\t%.2fx\t%.2f\t%s\t%s\t\n", a.gib, b.gib, ours, seed, b.writeIOPS/a.writeIOPS, b.price-a.price, perK, bound)
		if ours < plateauGrowth && len(plateau) == 0 {
			plateau = append(plateau, fmt.Sprintf("growth stops between %d and %d GB (x%.2f where the disk's limit grew x%.2f): %s", a.gib, b.gib, ours, b.writeIOPS/a.writeIOPS, bound))
		}
	}
	tw.Flush()
	for _, p := range plateau {
		fmt.Fprintln(w, "  "+p)
	}
	fmt.Fprintln(w, "  seed 001: about 1.8x per doubling up to 200 GB, then 1.25x (400 GB) and none (600 GB), the disk far from its limits")
	writeBulkloadCPUAndPrice(w, one)
}

// writeBulkloadCPUAndPrice sets the server's CPU and the storage price beside what seed 001 states.
// CPU compares as CPUs in use: the seed's utilization is a share of its instance's 2 vCPUs, ours
// a share of one of this machine's CPUs (a different CPU: a level, not a match).
func writeBulkloadCPUAndPrice(w io.Writer, one []bulkRow) {
	lo, hi := 0.0, 0.0
	for i, row := range one {
		c := row.m["server_cpu_util"]
		if i == 0 || c < lo {
			lo = c
		}
		hi = max(hi, c)
	}
	if hi > 0 {
		fmt.Fprintf(w, "  CPU in use (one loader): mariadbd %.2f-%.2f CPUs here; seed 001 about %.0f%% of %d vCPUs, %.1f CPUs, at every size\n",
			lo, hi, 100*seed001CPUShare, seed001VCPUs, seed001CPUShare*seed001VCPUs)
	}
	for _, row := range one {
		if row.gib > 0 && row.price > 0 {
			fmt.Fprintf(w, "  storage: $%.3f per GB-month in the price list used here; seed 001 states $%.2f ($%.0f a month more from 50 to 100 GB, here $%.2f)\n",
				row.price/float64(row.gib), seed001SSDPerGBMonth, 50*seed001SSDPerGBMonth, 50*row.price/float64(row.gib))
			return
		}
	}
}

// heldByDisk is the mean number of I/Os waiting for the disk's tokens from which the disk counts
// as the bound even when its mean rate is far below its limits (a judgement: InnoDB's flushing
// issues bursts, and at this depth the bursts queue on the disk most of the time).
const heldByDisk = 10

// boundOf names what was at its limit in a row: the disk model, MariaDB's CPU, or neither (then
// the bound is inside MariaDB: its flushing, its log, a lock).
func boundOf(row bulkRow) string {
	m := row.m
	parts := boundParts(row)
	if len(parts) == 0 {
		return fmt.Sprintf("neither the disk (%.0f%% of its write IOPS, %.1f I/Os held by its limits) nor mariadbd's CPU (%.0f%%): inside MariaDB (redo age %.0f MiB)",
			100*m["volume_write_ops_per_s"]/max(1, row.writeIOPS), m["volume_ios_held"], 100*m["server_cpu_util"], m["checkpoint_age_mib"])
	}
	return strings.Join(parts, ", ")
}

// boundParts are the limits a row met: the disk model's, MariaDB's CPU, this machine's CPU.
func boundParts(row bulkRow) []string {
	m := row.m
	var parts []string
	if row.writeIOPS > 0 && m["volume_write_ops_per_s"] >= 0.9*row.writeIOPS {
		parts = append(parts, fmt.Sprintf("the disk's write IOPS (%.0f%%)", 100*m["volume_write_ops_per_s"]/row.writeIOPS))
	}
	if row.writeMiBs > 0 && m["volume_write_mib_s"] >= 0.9*row.writeMiBs {
		parts = append(parts, fmt.Sprintf("the disk's write MiB/s (%.0f%%)", 100*m["volume_write_mib_s"]/row.writeMiBs))
	}
	if m["volume_ios_held"] >= heldByDisk {
		parts = append(parts, fmt.Sprintf("the disk's limits at InnoDB's flush bursts (%.1f I/Os held at once)", m["volume_ios_held"]))
	}
	if m["server_cpu_util"] >= 0.9 {
		parts = append(parts, fmt.Sprintf("mariadbd's CPU (%.0f%% of one CPU)", 100*m["server_cpu_util"]))
	}
	if m["machine_cpu_util"] >= report.MachineBoundShare {
		parts = append(parts, fmt.Sprintf("this machine's CPU (%.0f%% busy: the lab, not the cloud)", 100*m["machine_cpu_util"]))
	}
	return parts
}
