package workload

import (
	"testing"
	"time"

	"persistlab/measure"
)

// Merge adds counts and counters, merges histograms by name and recomputes their figures (a sum
// of medians means nothing), keeps the longest elapsed time and the latest write.
func TestMergeAddsCountsAndRecomputesLatencies(t *testing.T) {
	part := func(ms, n int, elapsed time.Duration, last time.Time) *Result {
		r := NewResult()
		r.Elapsed, r.LastWrite = elapsed, last
		lat, svc := measure.NewRecorder(), measure.NewRecorder()
		for i := 0; i < n; i++ {
			lat.Record(time.Duration(ms) * time.Millisecond)
			svc.Record(time.Duration(2*ms) * time.Millisecond)
		}
		lat.Summarize(elapsed).Metrics("", r.Metrics)
		svc.Summarize(elapsed).Metrics("service_", r.Metrics)
		r.Histograms[LatencyHistogram], r.Histograms["service"] = lat, svc
		r.Metrics["ok"] = float64(n)
		r.Counters["http_200"] = int64(n)
		r.Errors = []string{"e" + time.Duration(ms).String()}
		return r
	}
	t0 := time.Now()
	a, b := part(10, 30, time.Second, t0), part(40, 10, 2*time.Second, t0.Add(time.Second))
	m := Merge([]*Result{a, b})
	if m.Metrics["ok"] != 40 || m.Counters["http_200"] != 40 || m.Metrics["count"] != 40 || m.Metrics["service_count"] != 40 {
		t.Errorf("counts %v %v", m.Metrics, m.Counters)
	}
	if m.Elapsed != 2*time.Second || !m.LastWrite.Equal(t0.Add(time.Second)) || len(m.Errors) != 2 {
		t.Errorf("elapsed %v, last write %v, errors %v", m.Elapsed, m.LastWrite, m.Errors)
	}
	// 30 answers at 10 ms and 10 at 40 ms: the median is 10 ms, the average 17.5, the max 40.
	if m.Metrics["med_ms"] > 10.1 || m.Metrics["max_ms"] < 39.9 || m.Metrics["avg_ms"] < 17.4 || m.Metrics["avg_ms"] > 17.6 {
		t.Errorf("latency med %v avg %v max %v", m.Metrics["med_ms"], m.Metrics["avg_ms"], m.Metrics["max_ms"])
	}
	if m.Metrics["service_avg_ms"] < 34.9 || m.Metrics["service_avg_ms"] > 35.1 {
		t.Errorf("service avg %v, want 35", m.Metrics["service_avg_ms"])
	}
	if got := m.Histograms[LatencyHistogram].Summarize(m.Elapsed).Count; got != 40 {
		t.Errorf("merged histogram holds %d", got)
	}
	if a.Metrics["ok"] != 30 || a.Histograms[LatencyHistogram].Summarize(a.Elapsed).Count != 30 {
		t.Error("Merge changed a part")
	}
}
