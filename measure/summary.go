package measure

import (
	"math"
	"sort"
)

// Summary is one run's latency and throughput, in the seeds' terms (k6's columns plus p99).
type Summary struct {
	Count int64   `json:"count"`
	Rate  float64 `json:"rate"` // completed requests per second
	MinMs float64 `json:"min_ms"`
	MedMs float64 `json:"med_ms"`
	AvgMs float64 `json:"avg_ms"`
	P90Ms float64 `json:"p90_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// MedianOfRuns summarises repeats as seed 000 does: each metric is the median of that metric over
// the runs, taken independently (so the result need not equal any single run).
func MedianOfRuns(runs []Summary) Summary {
	pick := func(f func(Summary) float64) float64 {
		vals := make([]float64, len(runs))
		for i, r := range runs {
			vals[i] = f(r)
		}
		return Median(vals)
	}
	return Summary{
		Count: int64(math.Round(pick(func(s Summary) float64 { return float64(s.Count) }))),
		Rate:  pick(func(s Summary) float64 { return s.Rate }),
		MinMs: pick(func(s Summary) float64 { return s.MinMs }),
		MedMs: pick(func(s Summary) float64 { return s.MedMs }),
		AvgMs: pick(func(s Summary) float64 { return s.AvgMs }),
		P90Ms: pick(func(s Summary) float64 { return s.P90Ms }),
		P95Ms: pick(func(s Summary) float64 { return s.P95Ms }),
		P99Ms: pick(func(s Summary) float64 { return s.P99Ms }),
		MaxMs: pick(func(s Summary) float64 { return s.MaxMs }),
	}
}

// Median of vals (the mean of the middle two for an even count); NaN for none.
func Median(vals []float64) float64 {
	if len(vals) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// SlopeThroughOrigin fits y = k·x by least squares with the intercept held at zero:
// k = Σxy / Σx². Seed 000 compares backends by this k of avg latency against VUs.
func SlopeThroughOrigin(x, y []float64) float64 {
	var sxy, sxx float64
	for i := range x {
		sxy += x[i] * y[i]
		sxx += x[i] * x[i]
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// Metrics writes the summary as named metrics, each name prefixed (count, rate, min_ms, ...).
func (s Summary) Metrics(prefix string, into map[string]float64) {
	into[prefix+"count"] = float64(s.Count)
	into[prefix+"rate"] = s.Rate
	into[prefix+"min_ms"] = s.MinMs
	into[prefix+"med_ms"] = s.MedMs
	into[prefix+"avg_ms"] = s.AvgMs
	into[prefix+"p90_ms"] = s.P90Ms
	into[prefix+"p95_ms"] = s.P95Ms
	into[prefix+"p99_ms"] = s.P99Ms
	into[prefix+"max_ms"] = s.MaxMs
}

// SummaryFrom reads back what Metrics wrote.
func SummaryFrom(prefix string, m map[string]float64) Summary {
	return Summary{Count: int64(m[prefix+"count"]), Rate: m[prefix+"rate"], MinMs: m[prefix+"min_ms"], MedMs: m[prefix+"med_ms"],
		AvgMs: m[prefix+"avg_ms"], P90Ms: m[prefix+"p90_ms"], P95Ms: m[prefix+"p95_ms"], P99Ms: m[prefix+"p99_ms"], MaxMs: m[prefix+"max_ms"]}
}
