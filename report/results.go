// Package report turns measurements into results files and the tables, comparisons and pages
// people read. Everything here works from a results file, never from a run's memory.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"persistlab/backend"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"persistlab/internal/readfile"
	"persistlab/internal/sysinfo"
	"persistlab/measure"
	"persistlab/scenario"
)

// helperCPUKey is backend.HelperCPUSeconds (report reads results files and does not import backends).
const helperCPUKey = "helper_cpu_s"

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
	Ceilings map[string]backend.Ceiling `json:"ceilings,omitempty"`
	// Notes are what the run noticed outside any cell (a shared backend that failed to stop).
	Notes []string `json:"notes,omitempty"`
	// Defaults are the workload's declared parameter defaults, so the parameters a run used can
	// be told in full (compare) from the scenario's fixed ones and the cell's sweep point.
	Defaults map[string]string `json:"defaults,omitempty"`
	// Units names the unit of each metric, as the workload declared it.
	Units      map[string]string `json:"units,omitempty"`
	Cells      []Cell            `json:"cells"`
	Aggregates []Aggregate       `json:"aggregates"`
	Fits       []Fit             `json:"fits,omitempty"`
	// Crashes and CrashSummaries are filled by crash runs instead of Cells and Aggregates.
	Crashes        []CrashRun     `json:"crashes,omitempty"`
	CrashSummaries []CrashSummary `json:"crash_summaries,omitempty"`
}

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
	Backend string             `json:"backend"`
	Point   string             `json:"point"` // "vus=2 rw=read"
	Params  map[string]string  `json:"params,omitempty"`
	Runs    int                `json:"runs"`
	Median  map[string]float64 `json:"median"`
	Total   map[string]float64 `json:"total"`
	// Bucket is what the bucket did per unit of the workload's work (bucket backends only).
	Bucket *BucketUse `json:"bucket,omitempty"`
}

// Param is the aggregate's value of a swept parameter as a number (0 if not numeric).
func (a Aggregate) Param(name string) float64 { return paramNumber(a.Params[name]) }

func paramNumber(v string) float64 {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	if n, err := scenario.ParseSize(v); err == nil {
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
	// Costs are per price list, from the median run's operations; none where TooFewToPrice.
	Costs []Cost `json:"costs"`
}

// Fit is seed 000's zero-intercept least-squares slope of avg latency against VUs, over every run.
type Fit struct {
	Backend       string  `json:"backend"`
	AvgMsPerVU    float64 `json:"avg_ms_per_vu"`
	Points        int     `json:"points"`
	Published     float64 `json:"published,omitempty"` // the seed's, where the scenario carries it
	PublishedFrom string  `json:"published_from,omitempty"`
}

// Summarize recomputes Aggregates from Cells, CrashSummaries from Crashes, and what the
// workload's presenter derives (seed 000's slopes).
func (r *Results) Summarize() {
	summarizeCrashes(r)
	pres := presenterOf(r)
	groups, order := groupByPoint(r, r.Cells, func(c Cell) (pointKey, bool) { return r.key(c.Cell), c.Failure == "" })
	r.Aggregates = r.Aggregates[:0]
	for _, k := range order {
		cells := groups[k]
		a := Aggregate{Backend: k.backend, Point: k.point, Params: cells[0].Params, Runs: len(cells),
			Median: map[string]float64{}, Total: map[string]float64{}}
		names := map[string]bool{}
		for _, c := range cells {
			for m := range c.Metrics {
				names[m] = true
			}
		}
		for m := range names {
			vals := make([]float64, 0, len(cells))
			for _, c := range cells {
				if v, ok := c.Metrics[m]; ok {
					vals = append(vals, v)
					a.Total[m] += v
				}
			}
			a.Median[m] = measure.Median(vals)
		}
		var helper []float64
		for _, c := range cells {
			if cpu, ok := c.BackendStats[helperCPUKey]; ok && c.ElapsedS > 0 {
				helper = append(helper, cpu/c.ElapsedS/float64(r.AppCPUCount()))
			}
		}
		if len(helper) > 0 {
			a.Median["helper_cpu_util"] = measure.Median(helper)
		}
		labRates(&a, cells, r.Ceilings[k.backend])
		a.Bucket = bucketUse(cells, r.prices(), pres.Work)
		r.Aggregates = append(r.Aggregates, a)
	}
	r.Fits = nil
	if pres.Summarize != nil {
		pres.Summarize(r)
	}
}

// labRates adds what the backend's lab part itself moved per second (medians over the runs), by
// the counters its ceiling names, for the comparison with that ceiling.
func labRates(a *Aggregate, cells []Cell, c backend.Ceiling) {
	for _, d := range []struct {
		stat, metric string
		scale        float64
	}{{c.ReadBytesStat, "lab_read_mib_s", 1 << 20}, {c.WriteBytesStat, "lab_write_mib_s", 1 << 20},
		{c.ReadOpsStat, "lab_read_iops", 1}, {c.WriteOpsStat, "lab_write_iops", 1}} {
		if d.stat == "" {
			continue
		}
		var vals []float64
		for _, cell := range cells {
			if v, ok := cell.BackendStats[d.stat]; ok && cell.ElapsedS > 0 {
				vals = append(vals, v/d.scale/cell.ElapsedS)
			}
		}
		if len(vals) > 0 {
			a.Median[d.metric] = measure.Median(vals)
		}
	}
}

// AppCPUCount is how many CPUs the system under test had: its pinned ones, else the machine's.
func (r *Results) AppCPUCount() int {
	if n := len(r.Placement.AppCPUs); n > 0 {
		return n
	}
	return max(1, r.Machine.Cores)
}

// pointKey names a backend at one point of the sweep.
type pointKey struct {
	backend string
	point   string
}

func (r *Results) key(c scenario.Cell) pointKey {
	var sweep scenario.Sweep
	if r.Scenario != nil {
		sweep = r.Scenario.Sweep
	}
	return pointKey{c.Backend, c.Point(sweep)}
}

// groupByPoint groups the items key accepts by backend and sweep point, ordered as the scenario
// lists its backends, then by the sweep's values in their order.
func groupByPoint[T any](r *Results, items []T, key func(T) (pointKey, bool)) (map[pointKey][]T, []pointKey) {
	groups := map[pointKey][]T{}
	var order []pointKey
	firstSeen := map[pointKey]int{}
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
		if order[i].backend != order[j].backend {
			return r.backendRank(order[i].backend) < r.backendRank(order[j].backend)
		}
		return r.pointLess(order[i].point, order[j].point, firstSeen[order[i]] < firstSeen[order[j]])
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

// aggregatesOf is backend b's rows, in sweep order.
func (r *Results) aggregatesOf(b string) []Aggregate {
	var rows []Aggregate
	for _, a := range r.Aggregates {
		if a.Backend == b {
			rows = append(rows, a)
		}
	}
	return rows
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

// workloadType is the scenario's workload, "" without a scenario.
func (r *Results) workloadType() string {
	if r.Scenario == nil {
		return ""
	}
	return r.Scenario.Workload.Type
}

// Save writes the results atomically (a reader never sees half a file), summarising first.
func (r *Results) Save(path string) error {
	r.dropNonFinite(true)
	r.Summarize()
	r.dropNonFinite(false)
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
		os.Remove(tmp)
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// dropNonFinite leaves out the values JSON cannot hold (NaN, ±Inf), noting each a cell measured,
// so that a run never loses what it measured over one value. Derived figures (aggregates, fits)
// are dropped without a note: they come from the cells.
func (r *Results) dropNonFinite(noteCells bool) {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	clean := func(m map[string]float64, where string) {
		for k, v := range m {
			if bad(v) {
				delete(m, k)
				if where != "" {
					r.Notes = append(r.Notes, fmt.Sprintf("%s: %s was %v, not a number a results file holds: left out", where, k, v))
				}
			}
		}
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		where := ""
		if noteCells {
			where = fmt.Sprintf("cell %d (%s)", c.Index, c.Backend)
		}
		clean(c.Metrics, where)
		clean(c.BackendStats, where)
		for k, pts := range c.Series {
			c.Series[k] = slices.DeleteFunc(pts, func(p measure.Point) bool { return bad(p.T) || bad(p.V) })
		}
		if bad(c.ElapsedS) {
			c.ElapsedS = 0
		}
	}
	for i := range r.Aggregates {
		clean(r.Aggregates[i].Median, "")
		clean(r.Aggregates[i].Total, "")
	}
	r.Fits = slices.DeleteFunc(r.Fits, func(f Fit) bool { return bad(f.AvgMsPerVU) || bad(f.Published) })
	// Whatever else holds a number (crash runs, ceilings, bucket use): zeroed, and said so once.
	if n := zeroNonFinite(reflect.ValueOf(r).Elem()); n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d further figure(s) were not numbers a results file holds (NaN, Inf) and were written as 0", n))
	}
}

// zeroNonFinite sets every NaN or infinite float64 reachable from v to 0 (maps: deletes the
// entry) and counts them.
func zeroNonFinite(v reflect.Value) int {
	bad := func(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }
	n := 0
	switch v.Kind() {
	case reflect.Float64:
		if bad(v.Float()) && v.CanSet() {
			v.SetFloat(0)
			n++
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			n += zeroNonFinite(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				n += zeroNonFinite(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			n += zeroNonFinite(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.Float64 {
				if bad(e.Float()) {
					v.SetMapIndex(k, reflect.Value{})
					n++
				}
				continue
			}
			c := reflect.New(e.Type()).Elem() // map values cannot be set in place
			c.Set(e)
			if m := zeroNonFinite(c); m > 0 {
				v.SetMapIndex(k, c)
				n += m
			}
		}
	}
	return n
}

// MaxResultsBytes bounds a results file read back: a full seed-000 protocol is a few MB, and
// reading takes about five times the file's size in memory.
const MaxResultsBytes = 128 << 20

// Load reads a results file, converting the first format.
func Load(path string) (*Results, error) {
	data, err := readfile.Regular(path, MaxResultsBytes)
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("results %s: the file is empty", path)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("results %s: not a results file: %w", path, err)
	}
	var r *Results
	switch head.Schema {
	case Schema:
		r = &Results{}
		err = json.Unmarshal(data, r)
	case schemaV1:
		r, err = fromV1(data)
	default:
		return nil, fmt.Errorf("results %s: schema %q: this persistlab reads %q and %q", path, head.Schema, Schema, schemaV1)
	}
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	if r.Scenario == nil {
		return nil, fmt.Errorf("results %s: no scenario: the file is incomplete", path)
	}
	r.Summarize() // aggregates are derived: recompute them with this version's code
	return r, nil
}
