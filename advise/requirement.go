// Package advise ranks where an app's data should live: it turns a user's app, platform, rate and
// requirements into candidate scenarios (one per storage design), and, from what those runs
// measured, ranks the candidates by the requirements and the monthly bill. Running the scenarios
// is the caller's (cmd/persistlab advise); this package plans and judges, so that a ranking can
// be tested from given figures.
package advise

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"persistlab/param"
	"persistlab/scenario"
)

// Where says which runs judge a requirement.
type Where string

const (
	Steady Where = "steady" // the open loop at the user's rate
	Crash  Where = "crash"  // the crash runs at that rate
	Bill   Where = "bill"   // the whole monthly bill
)

// Requirement is one criterion every acceptable candidate meets, written as a threshold is
// ("p95 < 100ms", "lost_acked == 0", "lost_acked <= 1s", "usd_per_month < 30").
type Requirement struct {
	scenario.Threshold
	Where Where
}

// Metric names a requirement may use besides the workload's own latency metrics.
const (
	MetricLostAcked  = "lost_acked"    // the most acknowledged writes any crash lost
	MetricLostWindow = "lost_reach_ms" // how long before a crash the earliest lost write was acknowledged
	MetricUSD        = "usd_per_month" // the whole bill
	MetricErrorRate  = "error_rate"
)

// ParseRequirement reads one requirement against the workload's metrics (by unit). "lost_acked"
// with a duration ("lost_acked <= 1s") bounds how old a lost write may be, not how many are lost:
// the crash runs' lost_reach_ms.
func ParseRequirement(text string, workloadMetrics map[string]string) (Requirement, error) {
	t, err := scenario.ParseThreshold(text)
	if err != nil {
		return Requirement{}, requirementError(text, "METRIC OP VALUE, like \"p95 < 100ms\", \"lost_acked == 0\", \"lost_acked <= 1s\" or \"usd_per_month < 30\"")
	}
	if t.Select != "" {
		return Requirement{}, requirementError(text, "no [price list]: the bill is priced at the platform's provider")
	}
	r := Requirement{Threshold: t}
	switch {
	case t.Metric == MetricUSD:
		r.Where = Bill
		if err := r.Threshold.Resolve("--require", map[string]string{MetricUSD: "USD"}, false); err != nil {
			return Requirement{}, requirementError(text, "a plain number of US dollars, like usd_per_month < 30")
		}
		return r, nil
	case t.Metric == MetricLostAcked && t.IsDuration():
		r.Threshold.Metric, r.Where = MetricLostWindow, Crash
	case slices.Contains(CrashMetricNames(), t.Metric):
		r.Where = Crash
	default:
		r.Where = Steady
	}
	metrics := map[string]string{}
	for n, u := range workloadMetrics {
		metrics[n] = u
	}
	if err := r.Threshold.Resolve("--require", metrics, r.Where == Crash); err != nil {
		var allowed []string
		for n := range workloadMetrics {
			if strings.HasSuffix(n, "_ms") && !strings.HasPrefix(n, "service_") {
				allowed = append(allowed, strings.TrimSuffix(n, "_ms"))
			}
		}
		slices.Sort(allowed)
		allowed = append(allowed, MetricErrorRate)
		allowed = append(allowed, CrashMetricNames()...)
		allowed = append(allowed, MetricUSD)
		return Requirement{}, requirementError(text, "a requirement on one of "+strings.Join(allowed, ", ")+
			" (a latency in a duration like 100ms; lost_acked a count, or a duration bounding how old a lost write may be, like lost_acked <= 1s)")
	}
	return r, nil
}

// CrashMetricNames are the crash runs' figures a requirement may name.
func CrashMetricNames() []string {
	return []string{MetricLostAcked, "lost_acked_median", "lost_everything", MetricLostWindow, "recovery_ms", "integrity_failures"}
}

func requirementError(text, allowed string) error {
	return &param.FieldError{Field: "--require", Value: text, Allowed: allowed}
}

// String is the requirement as written.
func (r Requirement) String() string { return r.Text }

// formatValue is a figure in its metric's unit, for a shortfall ("130 ms").
func formatValue(metric string, v float64) string {
	switch {
	case metric == MetricUSD:
		return fmt.Sprintf("$%.2f", v)
	case metric == MetricErrorRate:
		return fmt.Sprintf("%.2f%%", 100*v)
	case strings.HasSuffix(metric, "_ms"):
		return fmtMs(v)
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 0.05:
		return fmt.Sprintf("%.1f", v) // a pace, as the ranking's cells print it
	}
	return fmt.Sprintf("%.3g", v)
}

func fmtMs(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}
