package report

import (
	"encoding/csv"
	"io"
	"sort"
	"strconv"
	"strings"

	"persistlab/results"
)

// WriteCSV writes one row per cell: which cell, its parameters, every metric, counter and backend
// counter. Text that a spreadsheet would run as a formula is quoted with a leading apostrophe.
func WriteCSV(w io.Writer, r *results.Results) error {
	params := r.Scenario.Sweep.ParamNames()
	keys := func(get func(results.Cell) []string) []string {
		set := map[string]bool{}
		for _, c := range r.Cells {
			for _, k := range get(c) {
				set[k] = true
			}
		}
		var out []string
		for k := range set {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	metrics := keys(func(c results.Cell) []string { return mapKeys(c.Metrics) })
	counters := keys(func(c results.Cell) []string { return mapKeys(c.Counters) })
	stats := keys(func(c results.Cell) []string { return mapKeys(c.BackendStats) })
	cw := csv.NewWriter(w)
	header := []string{"index", "backend", "repeat", "started", "elapsed_s"}
	header = append(header, params...)
	header = append(header, metrics...)
	header = append(header, counters...)
	header = append(header, stats...)
	header = append(header, "failure")
	for i := range header { // parameter and metric names come from the scenario
		header[i] = safeCSV(header[i])
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, c := range r.Cells {
		row := []string{strconv.Itoa(c.Index), safeCSV(c.Backend), strconv.Itoa(c.Repeat), c.Started.Format("2006-01-02T15:04:05.000Z07:00"), f(c.ElapsedS)}
		for _, p := range params {
			row = append(row, safeCSV(c.Params[p]))
		}
		for _, m := range metrics {
			row = append(row, optional(c.Metrics, m, f))
		}
		for _, k := range counters {
			row = append(row, optional(c.Counters, k, func(v int64) string { return strconv.FormatInt(v, 10) }))
		}
		for _, k := range stats {
			row = append(row, optional(c.BackendStats, k, f))
		}
		row = append(row, safeCSV(c.Failure))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func optional[V any](m map[string]V, k string, format func(V) string) string {
	if v, ok := m[k]; ok {
		return format(v)
	}
	return ""
}

// safeCSV keeps a spreadsheet from running a cell as a formula (OWASP's CSV injection advice).
func safeCSV(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
