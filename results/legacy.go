package results

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"persistlab/measure"
	"persistlab/scenario"
)

// schemaV1 is the first results format, whose cells held the counter's own fields.
const schemaV1 = "persistlab.results/1"

// v1Cell is a cell of the first format.
type v1Cell struct {
	Index            int                `json:"index"`
	Backend          string             `json:"backend"`
	VUs              int                `json:"vus"`
	Repeat           int                `json:"repeat"`
	Started          time.Time          `json:"started"`
	ElapsedS         float64            `json:"elapsed_s"`
	Summary          measure.Summary    `json:"summary"`
	Histogram        string             `json:"histogram"`
	Service          *measure.Summary   `json:"service"`
	OK               int64              `json:"ok"`
	Errors           int64              `json:"errors"`
	Statuses         map[string]int64   `json:"statuses"`
	TransportErrors  int64              `json:"transport_errors"`
	ErrorSamples     []string           `json:"error_samples"`
	MaxAcked         int64              `json:"max_acked"`
	CountDelta       int64              `json:"count_delta"`
	Instances        int                `json:"instances"`
	Integrity        string             `json:"integrity"`
	AppCPUSeconds    float64            `json:"app_cpu_s"`
	AppCPUUtil       float64            `json:"app_cpu_util"`
	BackendStats     map[string]float64 `json:"backend_stats"`
	ReplicationLagMs float64            `json:"replication_lag_ms"`
	Failure          string             `json:"failure"`
}

// fromV1 converts a first-format file: counter cells become generic cells with the same numbers
// under the metric names the counter workload now reports.
func fromV1(data []byte) (*Results, error) {
	var old struct {
		Results
		Cells   []v1Cell `json:"cells"`
		Crashes []struct {
			CrashRun
			VUs int `json:"vus"`
		} `json:"crashes"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		return nil, err
	}
	r := old.Results
	r.Schema = Schema
	r.Cells, r.Crashes = nil, nil
	r.Aggregates, r.CrashSummaries, r.Fits = nil, nil, nil
	if r.Scenario != nil {
		flattenV1Workload(&r.Scenario.Workload)
	}
	vus := func(n int) map[string]string { return map[string]string{"vus": strconv.Itoa(n)} }
	for _, c := range old.Cells {
		n := Cell{Cell: scenario.Cell{Index: c.Index, Backend: c.Backend, Params: vus(c.VUs), Repeat: c.Repeat},
			Started: c.Started, ElapsedS: c.ElapsedS, Metrics: map[string]float64{}, Counters: map[string]int64{},
			Facts: map[string]string{}, ErrorSamples: c.ErrorSamples, BackendStats: c.BackendStats, Failure: c.Failure}
		c.Summary.Metrics("", n.Metrics)
		if c.Service != nil {
			c.Service.Metrics("service_", n.Metrics)
		}
		if c.Histogram != "" {
			n.Histograms = map[string]string{"latency": c.Histogram}
		}
		for k, v := range map[string]float64{"ok": float64(c.OK), "errors": float64(c.Errors), "transport_errors": float64(c.TransportErrors),
			"max_acked": float64(c.MaxAcked), "count_delta": float64(c.CountDelta), "lost_updates": float64(max(0, c.OK-c.CountDelta)),
			"app_cpu_s": c.AppCPUSeconds, "app_cpu_util": c.AppCPUUtil} {
			n.Metrics[k] = v
		}
		if c.ReplicationLagMs > 0 {
			n.Metrics["replication_lag_ms"] = c.ReplicationLagMs
		}
		if c.Instances > 0 {
			n.Metrics["instances"] = float64(c.Instances)
			n.Facts["integrity"] = c.Integrity
		}
		for code, count := range c.Statuses {
			n.Counters["http_"+code] = count
		}
		r.Cells = append(r.Cells, n)
	}
	for _, c := range old.Crashes {
		run := c.CrashRun
		run.Params = vus(c.VUs)
		r.Crashes = append(r.Crashes, run)
	}
	return &r, nil
}

// flattenV1Workload moves the first format's app section into the counter's parameters and drops
// the zero values it wrote for settings left unset.
func flattenV1Workload(w *scenario.Workload) {
	if app, ok := w.Sections["app"].(map[string]any); ok {
		delete(w.Sections, "app")
		for k, v := range app {
			switch x := v.(type) {
			case []any:
				if len(x) > 0 {
					w.Sections[k] = x
				}
			case nil:
			default:
				if s := fmt.Sprint(x); s != "0" && s != "0s" && s != "" {
					w.SetParam(k, s)
				}
			}
		}
	}
	for _, k := range []string{"rate", "timeout", "instances"} {
		if v := w.Params[k]; v == "0" || v == "0s" {
			delete(w.Params, k)
		}
	}
}
