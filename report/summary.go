package report

import (
	"encoding/json"
	"io"
	"math"
	"sort"
	"time"

	"persistlab/results"
	"persistlab/scenario"
)

// SummarySchema names the shape of `report --format json` (docs/results-schema.md, "report
// --format json"); bump it when a field changes meaning.
const SummarySchema = "persistlab.summary/1"

// Summary is a run's figures in a stable shape for scripts: what the tables show, without the
// cells' samples, series and histograms (those stay in the results file).
type Summary struct {
	Schema string `json:"schema"`
	// Answer is the run's answer, before the figures it follows from.
	Answer   Answer            `json:"answer"`
	Scenario SummaryScenario   `json:"scenario"`
	Status   string            `json:"status"`
	Error    string            `json:"error,omitempty"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Command  []string          `json:"command,omitempty"`
	Machine  SummaryMachine    `json:"machine"`
	Versions map[string]string `json:"versions,omitempty"`
	Units    map[string]string `json:"units,omitempty"`
	Rows     []SummaryRow      `json:"rows"`
	// Crashes are the crash runs' rows, as results.json's crash_summaries.
	Crashes    []results.CrashSummary `json:"crashes,omitempty"`
	Thresholds []SummaryThreshold     `json:"thresholds,omitempty"`
	Failures   []SummaryFailure       `json:"failures,omitempty"`
}

// SummaryScenario names what ran.
type SummaryScenario struct {
	Name     string `json:"name"`
	Title    string `json:"title,omitempty"`
	Seed     string `json:"seed,omitempty"`
	Workload string `json:"workload"`
	Repeat   int    `json:"repeat"`
	Duration string `json:"duration,omitempty"`
}

// SummaryMachine is the machine the run measured on.
type SummaryMachine struct {
	Hostname    string `json:"hostname"`
	CPUModel    string `json:"cpu_model"`
	Cores       int    `json:"cores"`
	MemoryBytes uint64 `json:"memory_bytes"`
	Kernel      string `json:"kernel"`
	OS          string `json:"os"`
}

// SummaryRow is a backend at one sweep point over its runs, as its table row shows it.
type SummaryRow struct {
	Backend string             `json:"backend"`
	Point   string             `json:"point"`
	Params  map[string]string  `json:"params"`
	Runs    int                `json:"runs"`
	Median  map[string]float64 `json:"median"`
	// Spread is each metric's lowest and highest value over the runs, where the row has more
	// than one run.
	Spread map[string]Range `json:"spread,omitempty"`
	// ErrorRate is the share of the row's requests that failed, where the workload counts them.
	ErrorRate *float64 `json:"error_rate,omitempty"`
	BoundBy   string   `json:"bound_by,omitempty"`
	// HostBound says why the row's volume reads are this machine's page-out's (HostBound).
	HostBound string         `json:"host_bound,omitempty"`
	Crossed   []string       `json:"crossed,omitempty"`
	Bucket    *SummaryBucket `json:"bucket,omitempty"`
}

// Range is the lowest and highest of a metric's values over a row's runs.
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// SummaryBucket is what a row's bucket did per unit of work, and its cost.
type SummaryBucket struct {
	Unit          string         `json:"unit"`
	ClassAPerUnit float64        `json:"class_a_per_unit"`
	ClassBPerUnit float64        `json:"class_b_per_unit"`
	ClassAPerS    float64        `json:"class_a_per_s"`
	ClassBPerS    float64        `json:"class_b_per_s"`
	Costs         []results.Cost `json:"costs,omitempty"`
	// NotPriced says why a row has no costs: "too_few_operations" or "too_little_work".
	NotPriced string `json:"not_priced,omitempty"`
}

// SummaryThreshold is one threshold judged over every row.
type SummaryThreshold struct {
	Threshold string `json:"threshold"`
	// Verdict: "held" (every row that has the figure holds it), "crossed", "unmeasured" (no row
	// has it) or "error" (it cannot be read against this run's metrics).
	Verdict  string   `json:"verdict"`
	Held     int      `json:"held"`
	Crossed  []string `json:"crossed,omitempty"`
	Unjudged []string `json:"unjudged,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// SummaryFailure is a cell or crash that failed, and why.
type SummaryFailure struct {
	Cell    int    `json:"cell"`
	Backend string `json:"backend"`
	Point   string `json:"point"`
	Repeat  int    `json:"repeat"`
	Crash   bool   `json:"crash,omitempty"`
	Failure string `json:"failure"`
}

// Summarized is r's Summary.
func Summarized(r *results.Results) Summary {
	s := r.Scenario
	m := r.Machine
	out := Summary{
		Schema:   SummarySchema,
		Answer:   AnswerOf(r),
		Scenario: SummaryScenario{Name: s.Name, Title: s.Title, Seed: s.Seed, Workload: s.Workload.Type, Repeat: s.Repeat},
		Status:   r.Status, Error: r.Error, Started: r.Started, Finished: r.Finished, Command: r.Command,
		Machine:  SummaryMachine{Hostname: m.Hostname, CPUModel: m.CPUModel, Cores: m.Cores, MemoryBytes: m.MemoryBytes, Kernel: m.Kernel, OS: m.OS},
		Versions: r.Versions, Units: map[string]string{}, Rows: []SummaryRow{},
		Crashes: r.CrashSummaries,
	}
	if s.Duration > 0 {
		out.Scenario.Duration = time.Duration(s.Duration).String()
	}
	judged := Judge(r)
	spreads := rowSpreads(r)
	for _, a := range r.Aggregates {
		row := SummaryRow{Backend: a.Backend, Point: a.Point, Params: a.Params, Runs: a.Runs, Median: finite(a.Median),
			BoundBy: BoundBy(r, a), HostBound: HostBound(a), Crossed: CrossedBy(judged, a)}
		if row.Params == nil {
			row.Params = map[string]string{}
		}
		if a.Runs > 1 {
			row.Spread = spreads[results.PointKey{Backend: a.Backend, Point: a.Point}]
		}
		if share, ok := ErrorShare(a); ok {
			row.ErrorRate = &share
		}
		if u := a.Bucket; u != nil {
			b := &SummaryBucket{Unit: u.Unit, ClassAPerUnit: u.ClassA, ClassBPerUnit: u.ClassB, ClassAPerS: u.ClassAPerS, ClassBPerS: u.ClassBPerS, Costs: u.Costs}
			switch {
			case u.TooLittleWork:
				b.NotPriced, b.Costs = "too_little_work", nil
			case u.TooFewToPrice:
				b.NotPriced, b.Costs = "too_few_operations", nil
			}
			row.Bucket = b
		}
		for name := range row.Median {
			if u := MetricUnit(r, name); u != "" {
				out.Units[name] = u
			}
		}
		out.Rows = append(out.Rows, row)
	}
	for _, j := range judged {
		t := SummaryThreshold{Threshold: j.Threshold.Text, Held: j.Held, Crossed: j.Crossed, Unjudged: j.Unjudged}
		switch {
		case j.Err != nil:
			t.Verdict, t.Error = "error", j.Err.Error()
		case len(j.Crossed) > 0:
			t.Verdict = "crossed"
		case j.Held == 0:
			t.Verdict = "unmeasured"
		default:
			t.Verdict = "held"
		}
		out.Thresholds = append(out.Thresholds, t)
	}
	for _, c := range r.Cells {
		if c.Failure != "" {
			out.Failures = append(out.Failures, SummaryFailure{Cell: c.Index, Backend: c.Backend, Point: r.Key(c.Cell).Point, Repeat: c.Repeat, Failure: c.Failure})
		}
	}
	for _, c := range r.Crashes {
		if c.Failure != "" {
			out.Failures = append(out.Failures, SummaryFailure{Cell: c.Index, Backend: c.Backend, Point: r.Key(c.Cell).Point, Repeat: c.Repeat, Crash: true, Failure: c.Failure})
		}
	}
	return out
}

// WriteSummaryJSON writes r's Summary as indented JSON.
func WriteSummaryJSON(w io.Writer, r *results.Results) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Summarized(r))
}

// rowSpreads is, per row, each metric's lowest and highest value over the row's runs (the cells
// its medians are taken over).
func rowSpreads(r *results.Results) map[results.PointKey]map[string]Range {
	out := map[results.PointKey]map[string]Range{}
	for _, c := range r.Cells {
		if c.Failure != "" {
			continue
		}
		k := r.Key(c.Cell)
		if out[k] == nil {
			out[k] = map[string]Range{}
		}
		for name, v := range c.Metrics {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			rg, seen := out[k][name]
			if !seen {
				rg = Range{v, v}
			}
			out[k][name] = Range{min(rg.Min, v), max(rg.Max, v)}
		}
	}
	return out
}

// finite is m without the values JSON cannot hold (NaN, infinities).
func finite(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}

// MetricUnit is the unit of a row's metric: the workload's declaration, a derived figure's
// (scenario.RowMetrics), or for the lab's own rates (lab_read_mib_s) the rate's.
func MetricUnit(r *results.Results, name string) string {
	if u := r.Units[name]; u != "" {
		return u
	}
	if u := scenario.RowMetrics[name]; u != "" {
		return u
	}
	switch name {
	case "lab_read_mib_s", "lab_write_mib_s":
		return "MiB/s"
	case "lab_read_iops", "lab_write_iops":
		return "IOPS"
	}
	return ""
}

// sortedKeys is m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := mapKeys(m)
	sort.Strings(keys)
	return keys
}
