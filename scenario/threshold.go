package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"persistlab/param"
)

// Threshold is a pass/fail criterion on one metric of every row, as k6's thresholds are on a
// test: "p95_ms < 200ms", "error_rate < 1%", "lost_acked == 0", "usd_per_month < 20". A row
// crosses it when its value (the figure its table shows: the median over runs) does not hold it;
// a crossed threshold marks the row and makes the run exit non-zero, so a CI job can gate on a
// storage choice.
type Threshold struct {
	Text   string  // as written
	Metric string  // a row's metric: a workload's, or a derived one (RowMetrics, CrashMetrics)
	Select string  // for usd_*: the price list, like S3 in usd_per_month[S3] ("": the first)
	Op     string  // <, <=, >, >=, ==, !=
	Value  float64 // in the metric's unit, once Resolve has converted it
	// unit is what followed the number as written: "", "%", or a duration's unit.
	unit string
	// seconds is the value as a duration, when it was written as one.
	seconds float64
}

// MaxThresholds bounds a scenario's thresholds.
const MaxThresholds = 100

// A metric name may hold a dot before a digit, as fio's write_lat_p99.9_ms does.
var thresholdRe = regexp.MustCompile(`^\s*([a-z](?:[a-z0-9_]|\.[0-9]){0,63})(?:\[([A-Za-z0-9_ .-]{1,40})\])?\s*(<=|>=|==|!=|<|>)\s*([-+]?[0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*(%|ns|us|µs|ms|s|m|h)?\s*$`)

const thresholdSyntax = `METRIC OP VALUE, like "p95_ms < 200ms", "error_rate < 1%", "lost_acked == 0" or "usd_per_month[S3] < 20" (OP one of < <= > >= == !=; a duration's unit converts it to the metric's; % is a share)`

// ParseThreshold reads "METRIC OP VALUE".
func ParseThreshold(text string) (Threshold, error) {
	m := thresholdRe.FindStringSubmatch(text)
	if m == nil {
		return Threshold{}, &param.FieldError{Field: "thresholds", Value: text, Allowed: thresholdSyntax}
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[4], "_", ""), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return Threshold{}, &param.FieldError{Field: "thresholds", Value: text, Allowed: "a finite number: " + thresholdSyntax}
	}
	t := Threshold{Text: strings.TrimSpace(text), Metric: m[1], Select: m[2], Op: m[3], Value: v, unit: m[5]}
	switch t.unit {
	case "", "%":
	case "us", "µs", "ns", "ms", "s", "m", "h":
		d, err := time.ParseDuration(strings.ReplaceAll(m[4], "_", "") + t.unit)
		if err != nil {
			return Threshold{}, &param.FieldError{Field: "thresholds", Value: text, Allowed: "a duration time.ParseDuration reads, like 200ms: " + err.Error()}
		}
		t.seconds = d.Seconds()
	}
	return t, nil
}

// IsDuration says the value was written as a duration ("1s", "200ms"), before Resolve converts it.
func (t Threshold) IsDuration() bool {
	switch t.unit {
	case "us", "µs", "ns", "ms", "s", "m", "h":
		return true
	}
	return false
}

// Holds says whether value meets the threshold.
func (t Threshold) Holds(value float64) bool {
	switch t.Op {
	case "<":
		return value < t.Value
	case "<=":
		return value <= t.Value
	case ">":
		return value > t.Value
	case ">=":
		return value >= t.Value
	case "==":
		return value == t.Value
	case "!=":
		return value != t.Value
	}
	return false
}

// Thresholds are a scenario's, in order.
type Thresholds []Threshold

// UnmarshalYAML reads a list of threshold texts; k6's mapping of metric to expressions is refused
// with the form persistlab reads.
func (ts *Thresholds) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return &param.FieldError{Field: "thresholds", Value: NodeText(n), Allowed: `a list of strings (not k6's mapping of metric to expressions), like ["p95 < 200ms", "error_rate < 1%"]: ` + thresholdSyntax}
	}
	var out []Threshold
	for i, item := range n.Content {
		var t Threshold
		if err := t.UnmarshalYAML(item); err != nil {
			if fe, ok := err.(*param.FieldError); ok {
				fe.Field = fmt.Sprintf("thresholds[%d]", i)
			}
			return err
		}
		out = append(out, t)
	}
	*ts = out
	return nil
}

// UnmarshalYAML reads a threshold from its text.
func (t *Threshold) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &param.FieldError{Field: "thresholds", Value: NodeText(n), Allowed: "a list of strings: " + thresholdSyntax}
	}
	parsed, err := ParseThreshold(n.Value)
	if err != nil {
		return err
	}
	*t = parsed
	return nil
}

// MarshalYAML writes a threshold as its text.
func (t Threshold) MarshalYAML() (any, error) { return t.Text, nil }

// MarshalJSON writes a threshold as its text.
func (t Threshold) MarshalJSON() ([]byte, error) { return json.Marshal(t.Text) }

// UnmarshalJSON reads a threshold from its text.
func (t *Threshold) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	parsed, err := ParseThreshold(s)
	if err != nil {
		return err
	}
	*t = parsed
	return nil
}

// RowMetrics are the figures every row of a run has besides its workload's metrics, by unit: the
// report derives them (report.Results.Judge evaluates each by this name).
var RowMetrics = map[string]string{
	"error_rate":       "share", // failed requests over all requests, over every run of the row
	"usd_per_month":    "USD",   // the bucket's operations at the measured rate, for a month
	"usd_per_unit":     "USD",   // the bucket's operations per unit of work (a request, a GiB)
	"machine_cpu_util": "share",
	"helper_cpu_util":  "share",
	"refault_share":    "share", // page cache read again over what the volume read (a volume's rows)
}

// CrashMetrics are the figures of a crash run's row (a backend at one sweep point, over its crashes).
var CrashMetrics = map[string]string{
	"lost_acked":         "count", // the most acknowledged writes any crash lost
	"lost_acked_median":  "count",
	"lost_everything":    "count", // crashes whose recovery kept none of what was acknowledged
	"lost_reach_ms":      "ms",    // how far before the kill the earliest lost write was acknowledged, at most
	"recovery_ms":        "ms",    // median
	"integrity_failures": "count",
	"below_position":     "count", // recoveries below the replica position recorded at the kill
	"acked_per_s":        "1/s",
	"usd_per_month":      "USD",
}

// Resolve checks the threshold's metric against what the run's rows will carry (metrics: the
// workload's, by unit; crash: a crash run) and converts its value into the metric's unit.
func (t *Threshold) Resolve(field string, metrics map[string]string, crash bool) error {
	names := map[string]string{}
	if crash {
		for n, u := range CrashMetrics {
			names[n] = u
		}
	} else {
		for n, u := range metrics {
			names[n] = u
		}
		for n, u := range RowMetrics {
			names[n] = u
		}
	}
	unit, ok := names[t.Metric]
	if !ok && names[t.Metric+"_ms"] == "ms" { // p95, avg: the latency's, as k6's p(95) and avg
		t.Metric += "_ms"
		unit, ok = "ms", true
	}
	if !ok {
		var list []string
		for n := range names {
			list = append(list, n)
		}
		slices.Sort(list)
		what := "a metric the rows of this run carry"
		if crash {
			what = "a crash run's figure"
		} else if _, ok := CrashMetrics[t.Metric]; ok {
			what = "a crash run's figure only in a crash run (--crash N); here, a metric the rows carry"
		}
		return &param.FieldError{Field: field, Value: t.Text, Allowed: what + ": " + strings.Join(list, ", ")}
	}
	if t.Select != "" && !strings.HasPrefix(t.Metric, "usd_") {
		return &param.FieldError{Field: field, Value: t.Text, Allowed: "a [price list] only after usd_per_month or usd_per_unit"}
	}
	if t.Metric == "error_rate" && !crash && (metrics["ok"] == "" || metrics["errors"] == "") {
		return &param.FieldError{Field: field, Value: t.Text, Allowed: "error_rate only for a workload that counts its requests (ok and errors), like counter and http"}
	}
	switch t.unit {
	case "":
	case "%":
		if unit != "share" && unit != "%" {
			return &param.FieldError{Field: field, Value: t.Text, Allowed: fmt.Sprintf("a plain number: %s is in %s, not a share", t.Metric, unit)}
		}
		if unit == "share" {
			t.Value /= 100
		}
	default:
		switch unit {
		case "ms":
			t.Value = t.seconds * 1000
		case "s":
			t.Value = t.seconds
		default:
			return &param.FieldError{Field: field, Value: t.Text, Allowed: fmt.Sprintf("a plain number: %s is in %s, not a duration", t.Metric, unit)}
		}
	}
	t.unit = ""
	return nil
}
