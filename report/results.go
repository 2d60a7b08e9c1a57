// Package report turns measurements into results files and the tables, comparisons and pages
// people read. Everything here works from a results file, never from a run's memory.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"persistlab/internal/sysinfo"
	"persistlab/measure"
	"persistlab/scenario"
)

// helperCPUKey is backend.HelperCPUSeconds (report reads results files and does not import backends).
const helperCPUKey = "helper_cpu_s"

// Schema names the results format; bump it when a field changes meaning.
const Schema = "persistlab.results/1"

// Run statuses.
const (
	StatusRunning     = "running"
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Results is one results.json: the scenario as run, where and with what it ran, and every cell.
type Results struct {
	Schema     string            `json:"schema"`
	Status     string            `json:"status"`
	Error      string            `json:"error,omitempty"`
	Command    []string          `json:"command"`
	Started    time.Time         `json:"started"`
	Finished   time.Time         `json:"finished"`
	Scenario   *scenario.Spec    `json:"scenario"`
	Machine    sysinfo.Machine   `json:"machine"`
	Versions   map[string]string `json:"versions"`
	Placement  Placement         `json:"placement"`
	Cells      []Cell            `json:"cells"`
	Aggregates []Aggregate       `json:"aggregates"`
	Fits       []Fit             `json:"fits"`
	// Crashes and CrashSummaries are filled by crash runs instead of Cells and Aggregates.
	Crashes        []CrashRun     `json:"crashes,omitempty"`
	CrashSummaries []CrashSummary `json:"crash_summaries,omitempty"`
}

// Placement records which CPUs the system under test and the load driver ran on.
type Placement struct {
	AppCPUs    []int `json:"app_cpus,omitempty"`
	DriverCPUs []int `json:"driver_cpus,omitempty"`
}

// Cell is one measured run.
type Cell struct {
	scenario.Cell
	Started         time.Time        `json:"started"`
	ElapsedS        float64          `json:"elapsed_s"`
	Summary         measure.Summary  `json:"summary"`
	Histogram       string           `json:"histogram"` // HdrHistogram V2 compressed base64, µs
	Service         *measure.Summary `json:"service,omitempty"`
	OK              int64            `json:"ok"`
	Errors          int64            `json:"errors"`
	Statuses        map[int]int64    `json:"statuses,omitempty"`
	TransportErrors int64            `json:"transport_errors"`
	ErrorSamples    []string         `json:"error_samples,omitempty"`
	MaxAcked        int64            `json:"max_acked"`
	// CountDelta is how much the counter grew during the cell; below OK means lost updates.
	CountDelta int64 `json:"count_delta"`
	// Instances and Integrity are set when several app instances shared the backend: how many, and
	// PRAGMA integrity_check of the database read afterwards through a fresh mount.
	Instances     int                `json:"instances,omitempty"`
	Integrity     string             `json:"integrity,omitempty"`
	AppCPUSeconds float64            `json:"app_cpu_s"`
	AppCPUUtil    float64            `json:"app_cpu_util"` // of the CPUs the app was pinned to
	BackendStats  map[string]float64 `json:"backend_stats,omitempty"`
	// ReplicationLagMs is how long after the last acknowledged write the bucket held it (Litestream).
	ReplicationLagMs float64 `json:"replication_lag_ms,omitempty"`
	Failure          string  `json:"failure,omitempty"`
}

// LostUpdates is how many 200 answers the counter does not reflect.
func (c Cell) LostUpdates() int64 { return max(0, c.OK-c.CountDelta) }

// Aggregate is the seed's summary of one backend at one VU level: each metric's median over runs.
type Aggregate struct {
	Backend     string          `json:"backend"`
	VUs         int             `json:"vus"`
	Runs        int             `json:"runs"`
	Median      measure.Summary `json:"median"`
	Errors      int64           `json:"errors"`       // over all runs
	LostUpdates int64           `json:"lost_updates"` // over all runs
	AppCPUUtil  float64         `json:"app_cpu_util"` // median
	// HelperCPUUtil is the backend process's CPU (gcsfuse, Litestream) as a share of the app's CPUs, median.
	HelperCPUUtil float64 `json:"helper_cpu_util,omitempty"`
	// Bucket requests per 1,000 answered app requests, medians over runs (bucket backends only).
	Bucket *BucketUse `json:"bucket,omitempty"`
	// ReplicationLagMs is the median over runs of how long the last write stayed local (Litestream).
	ReplicationLagMs float64 `json:"replication_lag_ms,omitempty"`
}

// BucketUse is what the bucket did per 1,000 app requests, and what that costs.
type BucketUse struct {
	ClassAPer1k    float64 `json:"class_a_per_1k"`
	ClassBPer1k    float64 `json:"class_b_per_1k"`
	BytesInPerReq  float64 `json:"bytes_in_per_req"`
	BytesOutPerReq float64 `json:"bytes_out_per_req"`
	Throttled      float64 `json:"throttled"` // 429 answers per run
	ClassAPerS     float64 `json:"class_a_per_s"`
	ClassBPerS     float64 `json:"class_b_per_s"`
	Costs          []Cost  `json:"costs"` // per price list, from the median run's operations
}

// Fit is seed 000's zero-intercept least-squares slope of avg latency against VUs, over every run.
type Fit struct {
	Backend       string  `json:"backend"`
	AvgMsPerVU    float64 `json:"avg_ms_per_vu"`
	Points        int     `json:"points"`
	Published     float64 `json:"published,omitempty"` // the seed's, where the scenario carries it
	PublishedFrom string  `json:"published_from,omitempty"`
}

// Summarize recomputes Aggregates and Fits from Cells, and CrashSummaries from Crashes.
func (r *Results) Summarize() {
	summarizeCrashes(r)
	groups, order := groupByBackendVUs(r, r.Cells, func(c Cell) (cellKey, bool) { return cellKey{c.Backend, c.VUs}, c.Failure == "" })
	r.Aggregates = r.Aggregates[:0]
	x, y := map[string][]float64{}, map[string][]float64{}
	for _, k := range order {
		cells := groups[k]
		a := Aggregate{Backend: k.backend, VUs: k.vus, Runs: len(cells)}
		sums := make([]measure.Summary, len(cells))
		util, helper := make([]float64, len(cells)), make([]float64, len(cells))
		for i, c := range cells {
			sums[i], util[i] = c.Summary, c.AppCPUUtil
			if c.AppCPUUtil > 0 && c.AppCPUSeconds > 0 {
				helper[i] = c.BackendStats[helperCPUKey] / c.AppCPUSeconds * c.AppCPUUtil // same CPUs, same interval
			}
			a.Errors += c.Errors
			a.LostUpdates += c.LostUpdates()
			if c.Summary.Count > 0 {
				x[k.backend] = append(x[k.backend], float64(c.VUs))
				y[k.backend] = append(y[k.backend], c.Summary.AvgMs)
			}
		}
		a.Median = measure.MedianOfRuns(sums)
		a.AppCPUUtil = measure.Median(util)
		a.HelperCPUUtil = measure.Median(helper)
		a.Bucket = bucketUse(cells, r.prices())
		var lags []float64
		for _, c := range cells {
			if c.ReplicationLagMs > 0 {
				lags = append(lags, c.ReplicationLagMs)
			}
		}
		if len(lags) > 0 {
			a.ReplicationLagMs = measure.Median(lags)
		}
		r.Aggregates = append(r.Aggregates, a)
	}
	r.Fits = r.Fits[:0]
	for _, b := range r.backendOrder() {
		if len(x[b]) == 0 {
			continue
		}
		f := Fit{Backend: b, AvgMsPerVU: measure.SlopeThroughOrigin(x[b], y[b]), Points: len(x[b])}
		if p := r.published(b); p != nil && p.Slope > 0 {
			f.Published, f.PublishedFrom = p.Slope, p.Source
		}
		r.Fits = append(r.Fits, f)
	}
}

// cellKey names a backend at one VU level.
type cellKey struct {
	backend string
	vus     int
}

// groupByBackendVUs groups the items key accepts by backend and VU level, ordered as the scenario
// lists its backends, then by VUs.
func groupByBackendVUs[T any](r *Results, items []T, key func(T) (cellKey, bool)) (map[cellKey][]T, []cellKey) {
	groups := map[cellKey][]T{}
	var order []cellKey
	for _, it := range items {
		k, ok := key(it)
		if !ok {
			continue
		}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], it)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].backend != order[j].backend {
			return r.backendRank(order[i].backend) < r.backendRank(order[j].backend)
		}
		return order[i].vus < order[j].vus
	})
	return groups, order
}

// bucketUse is the median over cells of their bucket counters per app request; nil if none counted.
func bucketUse(cells []Cell, prices []scenario.Price) *BucketUse {
	var a, b, in, out, thr, aps, bps []float64
	for _, c := range cells {
		if _, ok := c.BackendStats["bucket_class_a"]; !ok || c.OK == 0 {
			continue
		}
		per := func(k string) float64 { return c.BackendStats[k] / float64(c.OK) }
		a = append(a, 1000*per("bucket_class_a"))
		b = append(b, 1000*per("bucket_class_b"))
		in = append(in, per("bucket_bytes_in"))
		out = append(out, per("bucket_bytes_out"))
		thr = append(thr, c.BackendStats["bucket_throttled"])
		aps = append(aps, c.BackendStats["bucket_class_a"]/c.ElapsedS)
		bps = append(bps, c.BackendStats["bucket_class_b"]/c.ElapsedS)
	}
	if len(a) == 0 {
		return nil
	}
	u := &BucketUse{ClassAPer1k: measure.Median(a), ClassBPer1k: measure.Median(b), BytesInPerReq: measure.Median(in),
		BytesOutPerReq: measure.Median(out), Throttled: measure.Median(thr), ClassAPerS: measure.Median(aps), ClassBPerS: measure.Median(bps)}
	// Priced per million from the per-request medians, per month from the per-second medians.
	perMillion := costs(prices, u.ClassAPer1k*1000, u.ClassBPer1k*1000, 1e6, 0)
	perMonth := costs(prices, u.ClassAPerS, u.ClassBPerS, 0, 1)
	for i := range perMillion {
		perMillion[i].USDPerMonth = perMonth[i].USDPerMonth
	}
	u.Costs = perMillion
	return u
}

func (r *Results) backendOrder() []string {
	var names []string
	if r.Scenario != nil {
		for _, b := range r.Scenario.Backends {
			names = append(names, b.ID())
		}
	}
	return names
}

// backendRank orders backends as the scenario lists them; without a scenario every rank is equal.
func (r *Results) backendRank(name string) int {
	for i, n := range r.backendOrder() {
		if n == name {
			return i
		}
	}
	return 1 << 30
}

func (r *Results) published(backend string) *scenario.Published {
	if r.Scenario == nil {
		return nil
	}
	for i := range r.Scenario.Published {
		if r.Scenario.Published[i].Backend == backend {
			return &r.Scenario.Published[i]
		}
	}
	return nil
}

// Save writes the results atomically (a reader never sees half a file), summarising first.
func (r *Results) Save(path string) error {
	r.Summarize()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("results: %w", err)
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// Load reads a results file.
func Load(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("results %s: schema %q: this persistlab reads %q", path, r.Schema, Schema)
	}
	r.Summarize() // aggregates are derived: recompute them with this version's code
	return &r, nil
}
