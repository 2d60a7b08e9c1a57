// Package results is the results file: what a run measured, where and with what, cell by cell,
// and the aggregates derived from it. It holds the data and its file, not how it is shown (that is
// report), so the runner that writes it links neither the report nor the lab.
package results

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"persistlab/internal/sysinfo"
	"persistlab/lab"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
)

// Schema names the results format; bump it when a field changes meaning. Files of the first
// format (the counter's own cell fields) are converted on load.
const Schema = "persistlab.results/2"

// Run statuses.
const (
	StatusRunning     = "running"
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Results is one results.json: the scenario as run, where and with what it ran, and every cell.
type Results struct {
	Schema    string            `json:"schema"`
	Status    string            `json:"status"`
	Error     string            `json:"error,omitempty"`
	Command   []string          `json:"command"`
	Started   time.Time         `json:"started"`
	Finished  time.Time         `json:"finished"`
	Scenario  *scenario.Spec    `json:"scenario"`
	Machine   sysinfo.Machine   `json:"machine"`
	Versions  map[string]string `json:"versions"`
	Placement Placement         `json:"placement"`
	// Ceilings are the lab's own throughput on this machine with the model off, per backend entry
	// (backend.CeilingProber), measured before the first cell.
	Ceilings map[string]lab.Ceiling `json:"ceilings,omitempty"`
	// Notes are what the run noticed outside any cell (a shared backend that failed to stop).
	Notes []string `json:"notes,omitempty"`
	// Defaults are the workload's declared parameter defaults, so the parameters a run used can
	// be told in full (compare) from the scenario's fixed ones and the cell's sweep point.
	Defaults map[string]string `json:"defaults,omitempty"`
	// Units names the unit of each metric, as the workload declared it.
	Units map[string]string `json:"units,omitempty"`
	// Shard is the share of the plan this file holds when the run was one of several machines'
	// (run --shard); PlanCells is the whole plan's number of cells. Merged names the shards a
	// merged file was made from.
	Shard      *scenario.Shard `json:"shard,omitempty"`
	PlanCells  int             `json:"plan_cells,omitempty"`
	Merged     []MergedShard   `json:"merged,omitempty"`
	Cells      []Cell          `json:"cells"`
	Aggregates []Aggregate     `json:"aggregates"`
	Fits       []Fit           `json:"fits,omitempty"`
	// Crashes and CrashSummaries are filled by crash runs instead of Cells and Aggregates.
	Crashes        []CrashRun     `json:"crashes,omitempty"`
	CrashSummaries []CrashSummary `json:"crash_summaries,omitempty"`
}

// What a cell on an emulated volume (its model in effect) records of its page cache while it was
// measured, beside what the volume read (backend_stats): the file pages read again after they were
// evicted, so that a report can tell the reads this machine's page-out caused. A cell without them
// did not measure them (a file of an earlier version): never 0.
const (
	RefaultBytesMetric    = "page_refault_bytes"         // refaulted pages times the page size
	MemoryLimitHitsMetric = "instance_memory_limit_hits" // the instance's own reclaim (from its memory cgroup only)
	// RefaultSourceFact says where the refaults were read (RefaultsFromInstance or
	// RefaultsFromMachine), or "not measured: why" when they could not be.
	RefaultSourceFact    = "page_refaults_from"
	RefaultsFromInstance = "the instance's memory cgroup (memory.stat workingset_refault_file)"
	RefaultsFromMachine  = "/proc/vmstat workingset_refault_file (the whole machine's: the instance has no memory cgroup)"
)

// Placement records which CPUs the system under test and the load driver ran on.
type Placement struct {
	AppCPUs    []int `json:"app_cpus,omitempty"`
	DriverCPUs []int `json:"driver_cpus,omitempty"`
}

// Cell is one measured run, in the shape every workload fills.
type Cell struct {
	scenario.Cell
	Started  time.Time `json:"started"`
	ElapsedS float64   `json:"elapsed_s"`
	// Metrics are named numbers (units in Results.Units); Histograms are HdrHistogram V2
	// compressed, base64, in microseconds; Series are samples over the cell's time.
	Metrics      map[string]float64         `json:"metrics,omitempty"`
	Histograms   map[string]string          `json:"histograms,omitempty"`
	Series       map[string][]measure.Point `json:"series,omitempty"`
	Counters     map[string]int64           `json:"counters,omitempty"`
	Facts        map[string]string          `json:"facts,omitempty"`
	ErrorSamples []string                   `json:"error_samples,omitempty"`
	BackendStats map[string]float64         `json:"backend_stats,omitempty"`
	Failure      string                     `json:"failure,omitempty"`
}

// M is a metric of the cell, 0 if it was not measured.
func (c Cell) M(name string) float64 { return c.Metrics[name] }

// Summary is the cell's latency summary (the counter's columns), from its metrics.
func (c Cell) Summary() measure.Summary { return measure.SummaryFrom("", c.Metrics) }

// Aggregate summarises one backend at one point of the sweep over its runs, as the seeds do: each
// metric's median over runs, taken independently; counts are also summed.
type Aggregate struct {
	Backend string            `json:"backend"`
	Point   string            `json:"point"` // "vus=2 rw=read"
	Params  map[string]string `json:"params,omitempty"`
	// Resolved is every parameter the row's cells ran with, as the plan resolved them; absent
	// where the cells did not record theirs (files of earlier versions).
	Resolved map[string]string  `json:"resolved,omitempty"`
	Runs     int                `json:"runs"`
	Median   map[string]float64 `json:"median"`
	Total    map[string]float64 `json:"total"`
	// Bucket is what the bucket did per unit of the workload's work (bucket backends only).
	Bucket *BucketUse `json:"bucket,omitempty"`
}

// Param is the aggregate's value of a swept parameter as a number (0 if not numeric).
func (a Aggregate) Param(name string) float64 { return ParamNumber(a.Params[name]) }

// ParamNumber is a parameter's value as a number: plain, a size in bytes, a duration in seconds;
// 0 if it is none of these.
func ParamNumber(v string) float64 {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	if n, err := param.ParseSize(v); err == nil {
		return float64(n)
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d.Seconds()
	}
	return 0
}

// BucketUse is what the bucket did per unit of work (1 app request, 1 GiB moved), and its cost.
type BucketUse struct {
	Unit       string  `json:"unit"`
	ClassA     float64 `json:"class_a_per_unit"`
	ClassB     float64 `json:"class_b_per_unit"`
	BytesIn    float64 `json:"bytes_in_per_unit"`
	BytesOut   float64 `json:"bytes_out_per_unit"`
	Throttled  float64 `json:"throttled"` // 429 answers per run
	ClassAPerS float64 `json:"class_a_per_s"`
	ClassBPerS float64 `json:"class_b_per_s"`
	// ClassAOps and ClassBOps are the operations a run counted (medians over runs), PricedOps how
	// many of them its price rests on (pricedOps); under MinPricedOps the row is TooFewToPrice.
	ClassAOps     float64 `json:"class_a_ops_per_run"`
	ClassBOps     float64 `json:"class_b_ops_per_run"`
	PricedOps     float64 `json:"priced_ops_per_run"`
	TooFewToPrice bool    `json:"too_few_to_price,omitempty"`
	// UnitsPerRun is the work a run did (medians over runs), BucketBytesPerRun what crossed the
	// bucket's API meanwhile. TooLittleWork: most runs did under a thousandth of the price's unit
	// while the bucket moved over a thousand times the work's bytes, so a price per unit would
	// multiply what a few operations happened to move (report.MaxExtrapolation).
	UnitsPerRun       float64 `json:"units_per_run"`
	BucketBytesPerRun float64 `json:"bucket_bytes_per_run"`
	TooLittleWork     bool    `json:"too_little_work,omitempty"`
	// Costs are per price list, from the median run's operations; none where TooFewToPrice or
	// TooLittleWork.
	Costs []Cost `json:"costs"`
}

// Cost is what the bucket operations of a run cost under one price list.
type Cost struct {
	Prices string `json:"prices"`
	// USDPerUnit is the operations' cost per unit of the workload's work (one app request, one GiB).
	USDPerUnit float64 `json:"usd_per_unit"`
	// USDPerMonth runs the measured operation rate for a month. It holds only at the measured
	// rate of work: Litestream uploads once per sync interval whatever the request rate, so its cost
	// per request falls as the rate grows (run an open loop, --rate, at your own rate).
	USDPerMonth float64 `json:"usd_per_month_at_measured_rate"`
}

// Fit is seed 000's zero-intercept least-squares slope of avg latency against VUs, over every run.
type Fit struct {
	Backend       string  `json:"backend"`
	AvgMsPerVU    float64 `json:"avg_ms_per_vu"`
	Points        int     `json:"points"`
	Published     float64 `json:"published,omitempty"` // the seed's, where the scenario carries it
	PublishedFrom string  `json:"published_from,omitempty"`
}

// AppCPUCount is how many CPUs the system under test had: its pinned ones, else the machine's.
func (r *Results) AppCPUCount() int {
	if n := len(r.Placement.AppCPUs); n > 0 {
		return n
	}
	return max(1, r.Machine.Cores)
}

// PointKey names a backend at one point of the sweep.
type PointKey struct {
	Backend string
	Point   string
}

// Key is the backend and sweep point a cell ran at.
func (r *Results) Key(c scenario.Cell) PointKey {
	var sweep scenario.Sweep
	if r.Scenario != nil {
		sweep = r.Scenario.Sweep
	}
	return PointKey{c.Backend, c.Point(sweep)}
}

// GroupByPoint groups the items key accepts by backend and sweep point, ordered as the scenario
// lists its backends, then by the sweep's values in their order.
func GroupByPoint[T any](r *Results, items []T, key func(T) (PointKey, bool)) (map[PointKey][]T, []PointKey) {
	groups := map[PointKey][]T{}
	var order []PointKey
	firstSeen := map[PointKey]int{}
	for _, it := range items {
		k, ok := key(it)
		if !ok {
			continue
		}
		if _, seen := groups[k]; !seen {
			firstSeen[k] = len(order)
			order = append(order, k)
		}
		groups[k] = append(groups[k], it)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].Backend != order[j].Backend {
			return r.backendRank(order[i].Backend) < r.backendRank(order[j].Backend)
		}
		return r.pointLess(order[i].Point, order[j].Point, firstSeen[order[i]] < firstSeen[order[j]])
	})
	return groups, order
}

// pointLess orders sweep points by each axis's values in the order the sweep lists them; points
// the sweep does not know keep their order of appearance.
func (r *Results) pointLess(a, b string, fallback bool) bool {
	if r.Scenario == nil || a == b {
		return fallback
	}
	pa, pb := parsePoint(a), parsePoint(b)
	for _, axis := range r.Scenario.Sweep {
		ia, ib := indexOf(axis.Values, axis.ValueOf(pa)), indexOf(axis.Values, axis.ValueOf(pb))
		if ia != ib {
			return ia < ib
		}
	}
	return fallback
}

func parsePoint(p string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Fields(p) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return len(list)
}

// AggregatesOf is backend b's rows, in sweep order.
func (r *Results) AggregatesOf(b string) []Aggregate {
	var rows []Aggregate
	for _, a := range r.Aggregates {
		if a.Backend == b {
			rows = append(rows, a)
		}
	}
	return rows
}

// BackendOrder is the backend entries' IDs as the scenario lists them.
func (r *Results) BackendOrder() []string {
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
	for i, n := range r.BackendOrder() {
		if n == name {
			return i
		}
	}
	return 1 << 30
}

// Published is the seed's table for backend, nil if the scenario carries none.
func (r *Results) Published(backend string) *scenario.Published {
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

// WorkloadType is the scenario's workload, "" without a scenario.
func (r *Results) WorkloadType() string {
	if r.Scenario == nil {
		return ""
	}
	return r.Scenario.Workload.Type
}
