package report

import (
	"fmt"

	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTables prints, per backend, the seed's table (vus, med, avg, p(90), p(95), min, max in ms)
// with rate, errors and the app's CPU use, then the slope of avg against VUs with the seed's own.
func WriteTables(w io.Writer, r *Results) {
	s := r.Scenario
	title := s.Name
	if s.Title != "" {
		title += ": " + s.Title
	}
	fmt.Fprintf(w, "%s\n", title)
	fmt.Fprintf(w, "%s loop, %s per run, %d run(s) per row, each column the median over runs; latency in ms\n",
		s.Workload.Mode, time.Duration(s.Duration), s.Repeat)
	if r.Status != StatusComplete {
		fmt.Fprintf(w, "status: %s %s\n", strings.ToUpper(r.Status), r.Error)
	}
	for _, b := range r.backendOrder() {
		var rows []Aggregate
		for _, a := range r.Aggregates {
			if a.Backend == b {
				rows = append(rows, a)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nbackend %s\n", b)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "vus\tmed\tavg\tp(90)\tp(95)\tp(99)\tmin\tmax\treq/s\terrors\tlost\tapp cpu\t"+b+" cpu\t")
		for _, a := range rows {
			m := a.Median
			helper := "-"
			if a.HelperCPUUtil > 0 {
				helper = fmt.Sprintf("%.0f%%", a.HelperCPUUtil*100)
			}
			fmt.Fprintf(tw, "%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%d\t%d\t%.0f%%\t%s\t\n",
				a.VUs, m.MedMs, m.AvgMs, m.P90Ms, m.P95Ms, m.P99Ms, m.MinMs, m.MaxMs, m.Rate, a.Errors, a.LostUpdates, a.AppCPUUtil*100, helper)
		}
		tw.Flush()
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
	writeBucketTable(w, r)
	writeCrashTable(w, r)
	if len(r.Cells) > 0 {
		writeSeedComparison(w, r)
	}
	failed := 0
	for _, c := range r.Cells {
		if c.Failure != "" {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "\n%d cell(s) failed; see \"failure\" in the results file\n", failed)
	}
}

// writeBucketTable shows, for backends on a bucket, its requests per 1,000 app requests and cost.
func writeBucketTable(w io.Writer, r *Results) {
	header := false
	for _, a := range r.Aggregates {
		if a.Bucket == nil {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nbucket requests per 1,000 app requests, and their cost at list prices (medians over runs)\n")
			header = true
		}
	}
	if !header {
		return
	}
	prices := r.prices()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	columns := "backend\tvus\tclass A\tclass B\tKiB up/req\tKiB down/req\t429s/run\t"
	for _, p := range prices {
		columns += "$/1M req " + p.Name + "\t"
	}
	columns += "req/s\t$/month " + prices[0].Name + "\trepl. lag ms\t"
	fmt.Fprintln(tw, columns)
	for _, a := range r.Aggregates {
		if u := a.Bucket; u != nil {
			lag := "-"
			if a.ReplicationLagMs > 0 {
				lag = fmt.Sprintf("%.0f", a.ReplicationLagMs)
			}
			line := fmt.Sprintf("%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t", a.Backend, a.VUs, u.ClassAPer1k, u.ClassBPer1k,
				u.BytesInPerReq/1024, u.BytesOutPerReq/1024, u.Throttled)
			for _, c := range u.Costs {
				line += fmt.Sprintf("%.4f\t", c.USDPerMillion)
			}
			line += fmt.Sprintf("%.0f\t%.2f\t%s\t", a.Median.Rate, u.Costs[0].USDPerMonth, lag)
			fmt.Fprintln(tw, line)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "  $/month runs the measured bucket operation rate for 30 days: it holds at the measured request rate")
	fmt.Fprintln(w, "  only (Litestream uploads once per sync interval whatever the rate); run an open loop (--rate) at yours.")
}

// writeSeedComparison sets the seed's published table beside ours, with our/seed ratios.
func writeSeedComparison(w io.Writer, r *Results) {
	for _, p := range r.Scenario.Published {
		col := map[string]int{}
		for i, c := range p.Columns {
			col[c] = i
		}
		var rows []string
		for _, row := range p.Rows {
			for _, a := range r.Aggregates {
				if a.Backend != p.Backend || a.VUs != int(row[0]) {
					continue
				}
				cell := func(ours float64, name string) string {
					i, ok := col[name]
					if !ok {
						return "-\t-\t-"
					}
					return fmt.Sprintf("%.2f\t%.2f\t%.2fx", ours, row[i], ours/row[i])
				}
				rows = append(rows, fmt.Sprintf("%d\t%s\t%s\t%s\t", a.VUs, cell(a.Median.MedMs, "med_ms"), cell(a.Median.AvgMs, "avg_ms"), cell(a.Median.P95Ms, "p95_ms")))
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s beside the seed (%s)\n", p.Backend, p.Source)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "vus\tmed\tseed\tratio\tavg\tseed\tratio\tp(95)\tseed\tratio\t")
		for _, row := range rows {
			fmt.Fprintln(tw, row)
		}
		tw.Flush()
	}
	if len(r.Scenario.Published) > 0 {
		fmt.Fprintln(w, "\nAbsolute milliseconds differ from the seed's Cloud Run (its network to the instance, Rails, a real GCS);")
		fmt.Fprintln(w, "compare the shape and the ratios between backends.")
	}
}

// writeInstancesNote says how runs with several instances on one backend ended.
func writeInstancesNote(w io.Writer, r *Results) {
	for _, b := range r.backendOrder() {
		var runs, lostRuns, failed int
		var lost, ok int64
		for _, c := range r.Cells {
			if c.Backend != b || c.Instances < 2 || c.Failure != "" {
				continue
			}
			runs++
			lost += c.LostUpdates()
			ok += c.OK
			if c.LostUpdates() > 0 {
				lostRuns++
			}
			if c.Integrity != "ok" {
				failed++
			}
		}
		if runs == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s shared by %d instances at once: %d of %d runs lost updates (%d of %d answered writes, %.1f%%); integrity_check failed in %d\n",
			b, r.Scenario.Workload.Instances, lostRuns, runs, lost, ok, 100*float64(lost)/float64(max(ok, 1)), failed)
	}
}
