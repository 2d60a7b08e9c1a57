package report

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"

	"persistlab/results"
	"persistlab/scenario"
)

// Sample is one measured value of one cell, one JSON object per line, in the shape
// PerfKitBenchmarker's samples have (metric, value, unit, metadata as labels, timestamp in Unix
// seconds; test the benchmark's name): newline-delimited JSON that `bq load` and most log
// pipelines take as it is.
type Sample struct {
	Metric string            `json:"metric"`
	Value  float64           `json:"value"`
	Unit   string            `json:"unit"`
	Labels map[string]string `json:"labels"`
	// Timestamp is when the cell's measurement ended, in Unix seconds.
	Timestamp float64 `json:"timestamp"`
	Test      string  `json:"test"`
}

// Samples is every metric of every cell that did not fail, and of every crash run: one Sample
// each, in the cells' order, metrics by name. Labels: scenario, backend, point, repeat, cell and the
// cell's sweep parameters (one named like those five as "param_" + its name).
func Samples(r *results.Results) []Sample {
	var out []Sample
	labels := func(c scenario.Cell) map[string]string {
		l := map[string]string{"scenario": r.Scenario.Name, "backend": c.Backend, "point": r.Key(c).Point,
			"repeat": strconv.Itoa(c.Repeat), "cell": strconv.Itoa(c.Index)}
		for k, v := range c.Params {
			if _, taken := l[k]; taken {
				k = "param_" + k
			}
			l[k] = v
		}
		return l
	}
	add := func(metric string, v float64, unit string, l map[string]string, at time.Time) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		out = append(out, Sample{Metric: metric, Value: v, Unit: unit, Labels: l, Timestamp: unixSeconds(at), Test: r.Scenario.Name})
	}
	for _, c := range r.Cells {
		if c.Failure != "" {
			continue
		}
		l, end := labels(c.Cell), c.Started.Add(time.Duration(c.ElapsedS*float64(time.Second)))
		for _, name := range sortedKeys(c.Metrics) {
			add(name, c.Metrics[name], MetricUnit(r, name), l, end)
		}
	}
	at := r.Finished // a crash run records no time of its own
	if at.IsZero() {
		at = r.Started
	}
	for _, c := range r.Crashes {
		if c.Failure != "" {
			continue
		}
		l := labels(c.Cell)
		add("lost_acked", float64(c.Lost), "count", l, at)
		add("max_acked", float64(c.MaxAcked), "count", l, at)
		add("recovery_ms", c.RecoveryMs, "ms", l, at)
		add("kill_after_s", c.KillAfterS, "s", l, at)
		if c.Lost > 0 {
			add("lost_window_ms", c.LostWindowMs, "ms", l, at)
			add("lost_reach_ms", c.LostReachMs, "ms", l, at)
		}
		if c.LoadS > 0 {
			add("acked_per_s", float64(c.OKBeforeKill)/c.LoadS, "1/s", l, at)
		}
	}
	return out
}

// WriteSamples writes Samples, one JSON object per line.
func WriteSamples(w io.Writer, r *results.Results) error {
	enc := json.NewEncoder(w) // one object per line: Encode ends each with a newline
	for _, s := range Samples(r) {
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return nil
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
