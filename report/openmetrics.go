package report

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"persistlab/results"
	"persistlab/scenario"
)

// omUnit is how a metric of one unit is exposed: in a base unit where there is a natural one
// (OpenMetrics': seconds, bytes, ratio), named with it as a suffix.
type omUnit struct {
	unit  string   // the UNIT line's and the name's suffix; "" for none
	scale float64  // one of the metric's units in the base unit
	strip []string // name endings that spell the metric's own unit, dropped before the suffix
}

var omUnits = map[string]omUnit{
	"ms":         {"seconds", 1e-3, []string{"_ms"}},
	"s":          {"seconds", 1, []string{"_s"}},
	"MiB":        {"bytes", 1 << 20, []string{"_mib"}},
	"bytes":      {"bytes", 1, []string{"_bytes", "bytes"}},
	"MiB/s":      {"bytes_per_second", 1 << 20, []string{"_mib_s", "mib_s"}},
	"share":      {"ratio", 1, nil},
	"%":          {"ratio", 0.01, []string{"_pct", "_percent"}},
	"IOPS":       {"per_second", 1, nil},
	"1/s":        {"per_second", 1, []string{"_per_s"}},
	"requests/s": {"per_second", 1, []string{"_per_s"}},
	"rows/s":     {"per_second", 1, []string{"_per_s"}},
	"changes/s":  {"per_second", 1, []string{"_per_s"}},
	"pages/s":    {"per_second", 1, []string{"_per_s"}},
}

// omReserved are the endings OpenMetrics gives the samples of counters, summaries and histograms:
// a gauge's name ending so is given "_value" after it, so no reader takes it for one of those.
var omReserved = []string{"_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum", "_info"}

var omInvalid = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// omName is the family name of a metric in unit: persistlab_, the metric's name without the
// ending that spells its unit, and the base unit ("p95_ms" in ms: persistlab_p95_seconds).
func omName(metric, unit string) (name string, u omUnit) {
	u, ok := omUnits[unit]
	if !ok {
		u = omUnit{scale: 1}
	}
	stem := omInvalid.ReplaceAllString(strings.ToLower(metric), "_")
	for _, s := range u.strip {
		if strings.HasSuffix(stem, s) {
			stem = strings.TrimSuffix(stem, s)
			break
		}
	}
	switch {
	case unit == "IOPS": // read_iops: read_ops_per_second
		stem = strings.TrimSuffix(strings.TrimSuffix(stem, "iops"), "_")
		stem = strings.TrimPrefix(stem+"_ops", "_")
	case stem == "rate" && strings.HasSuffix(unit, "/s"): // the counter's rate: requests_per_second
		stem = strings.TrimSuffix(unit, "/s")
	}
	parts := []string{"persistlab"}
	for _, p := range []string{stem, u.unit} {
		if p = strings.Trim(p, "_"); p != "" {
			parts = append(parts, p)
		}
	}
	name = strings.Join(parts, "_")
	for _, r := range omReserved {
		if strings.HasSuffix(name, r) && u.unit == "" {
			name += "_value"
			break
		}
	}
	return name, u
}

// omFamily is one gauge: its samples, one per row.
type omFamily struct {
	name, help, unit string
	samples          []string
}

// WriteOpenMetrics writes the run's rows as OpenMetrics text for a dashboard: a gauge family per
// metric (its medians over runs, in base units where natural), each row a sample labelled with
// scenario, backend and its sweep parameters; the rows' share of failed requests and bucket
// costs, and the crash rows' figures (as thresholds name them); and # EOF. help gives a metric's
// HELP text (the workload's declaration); without one it says what the figure is.
func WriteOpenMetrics(w io.Writer, r *results.Results, help map[string]string) error {
	families := map[string]*omFamily{}
	byMetric := map[string]*omFamily{} // "row:p95_ms", "crash:lost_acked"
	family := func(kind, metric, unit, text string) (*omFamily, omUnit) {
		name, u := omName(metric, unit)
		if kind == "crash" {
			name, u = omName("crash_"+metric, unit)
		}
		if f := byMetric[kind+":"+metric]; f != nil {
			return f, u
		}
		if families[name] != nil { // two metrics of one stem: the later keeps its whole name
			name = omInvalid.ReplaceAllString("persistlab_"+kind+"_"+metric, "_")
			if u.unit != "" {
				name += "_" + u.unit
			}
		}
		if text == "" {
			text = metric
			if unit != "" {
				text += " (" + unit + ")"
			}
		}
		if u.scale != 1 && u.unit != "" {
			text += fmt.Sprintf(", in %s", strings.ReplaceAll(u.unit, "_", " "))
		}
		f := &omFamily{name: name, help: text, unit: u.unit}
		families[name], byMetric[kind+":"+metric] = f, f
		return f, u
	}
	add := func(f *omFamily, labels string, v float64) {
		if math.IsNaN(v) {
			return
		}
		f.samples = append(f.samples, f.name+labels+" "+omValue(v))
	}
	for _, a := range r.Aggregates {
		labels := omLabels(r, a.Backend, a.Params, nil)
		for _, metric := range sortedKeys(a.Median) {
			unit := MetricUnit(r, metric)
			f, u := family("row", metric, unit, helpOf(help, metric, "median over the row's runs"))
			add(f, labels, a.Median[metric]*u.scale)
		}
		runs, _ := family("row", "runs", "", "runs each row's medians are taken over")
		add(runs, labels, float64(a.Runs))
		if share, ok := ErrorShare(a); ok && !hasKey(a.Median, "error_rate") { // a workload's own error_rate is above
			f, _ := family("row", "error_rate", "share", "share of the row's requests that failed, over its runs")
			add(f, labels, share)
		}
		if a.Bucket != nil {
			for _, c := range a.Bucket.Costs {
				priced := omLabels(r, a.Backend, a.Params, map[string]string{"prices": c.Prices})
				f, _ := family("row", "bucket_usd_per_month", "", "the bucket's operations at the measured rate for 30 days, in US dollars at list prices")
				add(f, priced, c.USDPerMonth)
				f, _ = family("row", "bucket_usd_per_unit", "", "the bucket's operations per unit of the workload's work ("+a.Bucket.Unit+"), in US dollars at list prices")
				add(f, priced, c.USDPerUnit)
			}
		}
	}
	for _, s := range r.CrashSummaries {
		labels := omLabels(r, s.Backend, crashParams(r, s), nil)
		for _, metric := range sortedKeys(scenario.CrashMetrics) {
			unit := scenario.CrashMetrics[metric]
			if metric == "usd_per_month" {
				continue // by price list: below
			}
			v, ok := crashFigure(s, scenario.Threshold{Metric: metric})
			if !ok {
				continue
			}
			f, u := family("crash", metric, unit, "crash runs: "+metric+", as a threshold names it")
			add(f, labels, v*u.scale)
		}
		for _, c := range s.Costs {
			f, _ := family("crash", "bucket_usd_per_month", "", "crash runs: the bucket's operations during load for 30 days, in US dollars at list prices")
			add(f, omLabels(r, s.Backend, crashParams(r, s), map[string]string{"prices": c.Prices}), c.USDPerMonth)
		}
	}
	names := mapKeys(families)
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		f := families[name]
		if len(f.samples) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# TYPE %s gauge\n", f.name)
		if f.unit != "" {
			fmt.Fprintf(&b, "# UNIT %s %s\n", f.name, f.unit)
		}
		fmt.Fprintf(&b, "# HELP %s %s\n", f.name, omEscape(f.help))
		for _, s := range f.samples {
			b.WriteString(s + "\n")
		}
	}
	b.WriteString("# EOF\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func helpOf(help map[string]string, metric, how string) string {
	if h := help[metric]; h != "" {
		return h + "; " + how
	}
	return ""
}

// crashParams are the sweep parameters of a crash row, from its first crash run.
func crashParams(r *results.Results, s results.CrashSummary) map[string]string {
	for _, c := range r.Crashes {
		if c.Backend == s.Backend && r.Key(c.Cell).Point == s.Point {
			return c.Params
		}
	}
	return nil
}

// omLabels is a sample's label set: scenario, backend, the row's parameters (a name OpenMetrics
// does not allow made one it does; one named like the first two as "param_" + it) and extra.
func omLabels(r *results.Results, backend string, params, extra map[string]string) string {
	l := map[string]string{"scenario": r.Scenario.Name, "backend": backend}
	for k, v := range params {
		k = omInvalid.ReplaceAllString(k, "_")
		if k == "" || k[0] >= '0' && k[0] <= '9' || strings.HasPrefix(k, "__") {
			k = "param_" + k
		}
		if _, taken := l[k]; taken {
			k = "param_" + k
		}
		l[k] = v
	}
	for k, v := range extra {
		l[k] = v
	}
	keys := sortedKeys(l)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + `="` + omEscape(l[k]) + `"`
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// omEscape escapes a label value or HELP text: backslash, double quote and newline.
func omEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func omValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}
