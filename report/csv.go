package report

import (
	"encoding/csv"
	"io"
	"sort"
	"strconv"
)

// WriteCSV writes one row per cell: which cell, its summary, errors, CPU and backend counters.
func WriteCSV(w io.Writer, r *Results) error {
	statKeys := map[string]bool{}
	for _, c := range r.Cells {
		for k := range c.BackendStats {
			statKeys[k] = true
		}
	}
	var stats []string
	for k := range statKeys {
		stats = append(stats, k)
	}
	sort.Strings(stats)
	cw := csv.NewWriter(w)
	header := []string{"index", "backend", "vus", "repeat", "started", "elapsed_s", "count", "rate", "min_ms", "med_ms", "avg_ms",
		"p90_ms", "p95_ms", "p99_ms", "max_ms", "ok", "errors", "transport_errors", "lost_updates", "max_acked",
		"app_cpu_s", "app_cpu_util", "replication_lag_ms", "failure"}
	if err := cw.Write(append(header, stats...)); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, c := range r.Cells {
		s := c.Summary
		row := []string{strconv.Itoa(c.Index), c.Backend, strconv.Itoa(c.VUs), strconv.Itoa(c.Repeat), c.Started.Format("2006-01-02T15:04:05.000Z07:00"),
			f(c.ElapsedS), i(s.Count), f(s.Rate), f(s.MinMs), f(s.MedMs), f(s.AvgMs), f(s.P90Ms), f(s.P95Ms), f(s.P99Ms), f(s.MaxMs),
			i(c.OK), i(c.Errors), i(c.TransportErrors), i(c.LostUpdates()), i(c.MaxAcked), f(c.AppCPUSeconds), f(c.AppCPUUtil),
			f(c.ReplicationLagMs), c.Failure}
		for _, k := range stats {
			v, ok := c.BackendStats[k]
			if ok {
				row = append(row, f(v))
			} else {
				row = append(row, "")
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
