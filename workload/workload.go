// Package workload is what one operation is: the counter app under HTTP load, a fio job, a bulk
// load, git commits. Workloads register themselves by name with the parameters they take, run one
// cell against a backend's target, and return what they measured in a shape any workload fills.
// The runner knows no workload's internals; workloads know no backend's.
package workload

import (
	"context"
	"slices"
	"time"

	"persistlab/backend"
	"persistlab/lib/registry"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
)

// Metric describes one number a workload reports.
type Metric struct {
	Name         string
	Unit         string // ms, MiB/s, IOPS, requests/s, count, share
	HigherBetter bool
	Help         string
}

// The metrics of a workload that moves bulk data: with them declared, the runner measures the
// lab's own ceiling on this machine (backend.CeilingProber) and the report flags rows near it.
const (
	ReadMiBs  = "read_mib_s"
	WriteMiBs = "write_mib_s"
)

// MovesBulk says whether a workload declares read or write bandwidth among its metrics.
func (i Info) MovesBulk() bool {
	for _, m := range i.Metrics {
		if m.Name == ReadMiBs || m.Name == WriteMiBs {
			return true
		}
	}
	return false
}

// Info describes a workload to the runner, to validation and to users.
type Info struct {
	Name        string
	Description string
	Params      []param.Param
	Metrics     []Metric
	// Timed workloads are driven for the scenario's duration (after its warm-up); the others run
	// to their own end (fio's runtime, a load's last row).
	Timed bool
	// Length, if set, says what one cell of a workload that runs to its own end does, from the
	// cell's parameters, for plan estimates (fio: its runtime, the files it lays out and writes).
	Length func(p Params) Length
	// Needs is what the workload asks of a backend: a directory, a SQLite file to replicate.
	Needs backend.Needs
	// NeedsOf, if set, gives Needs from the scenario's workload (its fixed parameters).
	NeedsOf func(spec scenario.Workload) backend.Needs
	// New checks the workload's settings (its sections and fixed parameters) and makes it.
	New func(spec scenario.Workload) (Workload, error)
	// Sections are the workload's own settings that are lists or mappings, by name, with what
	// each must be (a single value there is refused saying so).
	Sections map[string]string
}

// Length is what one cell of a workload that runs to its own end does, as far as its parameters
// tell, for plan estimates.
type Length struct {
	// Bound is the most its measured part runs (fio: ramp time and runtime; a job whose size is
	// done stops sooner); 0: nothing bounds it.
	Bound time.Duration
	// BoundBy names what sets Bound, for the plan line: "runtime".
	BoundBy string
	// LayoutBytes are written through the backend before the measured part (fio lays out the
	// files a read job reads).
	LayoutBytes int64
	// WrittenFiles are the files the measured part writes, each closed ClosesPerFile times after
	// writing (fio: one file its jobs share, closed by each; or a file per job).
	WrittenFiles, ClosesPerFile int
	// ClosedBytes is a written file's size at its closes when the parameters tell it (random
	// writes reach the whole file); 0: unknown (how far a sequential writer got).
	ClosedBytes int64
}

// Params is one cell's parameters, every declared one present: defaults, then the scenario's
// fixed values, then the cell's sweep point (scenario.Resolve, in the plan).
type Params map[string]string

// Resolve is scenario.Resolve as Params: for tests and tools that make a cell's parameters
// without a plan.
func Resolve(decl []param.Param, fixed, point map[string]string) Params {
	return scenario.Resolve(decl, fixed, point)
}

// Workload is a configured workload; Start begins one cell of it.
type Workload interface {
	// Check validates one cell's parameters before any cell runs, with what the workload alone
	// knows (fio's own reading of a job, a rate its mode needs).
	Check(ctx context.Context, p Params) error
	Start(ctx context.Context, env Env) (Instance, error)
	// Versions names the programs the workload runs and their versions, for results files.
	Versions() map[string]string
}

// Env is what one cell's workload is given.
type Env struct {
	Target  backend.Target
	CellDir string // this cell's own directory for logs and scratch files (not on the target)
	Params  Params
	CPUs    []int  // where the system under test runs; nil: anywhere
	Self    string // the persistlab executable, for workloads that run a part of it as a process
	// ToolOutputDir is where a workload keeps its tool's own report of the cell (fio's JSON)
	// beyond the work directory, named after the cell's directory; "" keeps it in CellDir alone.
	ToolOutputDir string
}

// Instance is a started workload: its system under test is up and its data set in place.
type Instance interface {
	// Drive runs the measured part: for d if the workload is timed, else to its own end.
	Drive(ctx context.Context, d time.Duration) (*Result, error)
	Stop(ctx context.Context) error
}

// Result is what one cell measured.
type Result struct {
	Elapsed    time.Duration
	Metrics    map[string]float64
	Histograms map[string]*measure.Recorder // latencies, encoded into the results file
	Series     map[string][]measure.Point   // over time within the cell
	Counters   map[string]int64             // e.g. answers by status code
	Facts      map[string]string            // text results: integrity_check, a tool's own version
	Errors     []string                     // distinct samples of what went wrong
	// LastWrite is when the last acknowledged write was answered; a replicating backend reports
	// how long after it the write was durable.
	LastWrite time.Time
}

// NewResult returns an empty result with its maps made.
func NewResult() *Result {
	return &Result{Metrics: map[string]float64{}, Histograms: map[string]*measure.Recorder{},
		Series: map[string][]measure.Point{}, Counters: map[string]int64{}, Facts: map[string]string{}}
}

var workloads = registry.New[Info]("workload")

// Register makes a workload available by name; a second registration of a name panics.
func Register(info Info) { workloads.Register(info.Name, info) }

// Lookup finds a registered workload.
func Lookup(name string) (Info, error) { return workloads.Lookup(name) }

// Names lists the registered workloads.
func Names() []string { return workloads.Names() }

// Declared is every registered workload's parameters, for scenario validation.
func Declared() map[string][]param.Param {
	out := map[string][]param.Param{}
	for _, info := range workloads.Values() {
		out[info.Name] = info.Params
	}
	return out
}

// DeclaredSections is every registered workload's sections, with what each must be.
func DeclaredSections() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, info := range workloads.Values() {
		out[info.Name] = info.Sections
	}
	return out
}

// DeclaredMetrics is every registered workload's metrics by name, with their units.
func DeclaredMetrics() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, info := range workloads.Values() {
		units := map[string]string{}
		for _, m := range info.Metrics {
			units[m.Name] = m.Unit
		}
		out[info.Name] = units
	}
	return out
}

// Share is an instance's part of the load when several instances share one backend.
type Share struct {
	Index, Of int
}

// Acknowledged is an instance whose every acknowledged write carries a count, so crash runs can
// tell which acknowledged writes a recovery lost.
type Acknowledged interface {
	Instance
	// DriveAcked drives like Drive and records every acknowledgement; cancelling ctx ends it.
	DriveAcked(ctx context.Context, d time.Duration) (*Result, *measure.AckLog, error)
	// Kill ends the system under test at once (SIGKILL) without waiting; Exited closes when it has.
	Kill()
	Exited() <-chan struct{}
	// Count is the count the system under test now answers with.
	Count(ctx context.Context) (int64, error)
}

// Survivor is what persisted data holds, read without the system under test.
type Survivor struct {
	Exists    bool
	Count     int64
	Counted   bool   // Count was read from the data (a workload that cannot leaves it false)
	Integrity string // "ok" or the check's report
}

// CrashChecker is a workload that can tell, from a cell's parameters, before anything starts,
// whether its crash runs can measure what a recovery lost (an app that states what it acknowledged).
type CrashChecker interface {
	CheckCrash(p Params) error
}

// DurationChecker is a workload that bounds, from a cell's parameters, the measured and warm-up
// times its driver accepts (k6 refuses a duration under 1 s); a warm-up of 0 is none.
type DurationChecker interface {
	CheckDurations(p Params, duration, warmup time.Duration) error
}

// SpaceNeeder is a workload that can tell, from a cell's parameters, before anything starts, the
// disk a cell lays out: on the backend's target, and in the cell's own directory. The runner
// checks the run has room for its largest cell before the first one.
type SpaceNeeder interface {
	SpaceNeed(p Params) (target, cellDir int64, err error)
}

// Inspector is a workload that can read what its data holds in a directory or file.
type Inspector interface {
	// Inspect reads the data the workload keeps in dir; file, if set, is a copy of it elsewhere.
	Inspect(dir, file string) Survivor
}

// ServerInspector is an Inspector that can also read what it keeps on a MySQL server a backend
// names (Target.DSN: Cloud SQL), where its directory holds nothing of it.
type ServerInspector interface {
	InspectServer(dsn string) Survivor
}

// InspectTarget reads what in keeps on the target: on its server where the target names one and
// in reads it there, else in its directory.
func InspectTarget(in Inspector, t backend.Target) Survivor {
	if s, ok := in.(ServerInspector); ok && t.DSN != "" {
		return s.InspectServer(t.DSN)
	}
	return in.Inspect(t.Dir, "")
}

// Shared is an instance that can take a share of the load while other instances of the same
// workload, on other mounts of one backend, take theirs.
type Shared interface {
	Instance
	DriveShare(ctx context.Context, d time.Duration, share Share) (*Result, error)
}

// Sharer is a workload whose instances can share one backend's data, each driving a share of the
// load (the runner's instances mode); its instances implement Shared.
type Sharer interface {
	// CheckShare refuses, before anything starts, a cell's parameters that n instances cannot
	// split between them (fewer VUs than instances).
	CheckShare(p Params, n int) error
}

// Merger is a Sharer that completes Merge's joining of its instances' results with figures only
// it knows how to join (the highest acknowledged count, a CPU share).
type Merger interface {
	MergeShares(merged *Result, parts []*Result)
}

// AckedMetric counts the writes a workload's instance acknowledged (the counter's 200 answers):
// with several instances, lost updates are those the data does not reflect.
const AckedMetric = "ok"

// LatencyHistogram is the histogram whose figures are a result's unprefixed metrics (med_ms,
// p95_ms, ...); every other histogram's carry its name as a prefix (service_med_ms).
const LatencyHistogram = "latency"

// Merge joins several instances' results of one cell: metrics and counters add up, histograms
// merge by name and their figures are recomputed from the merged histogram (a sum of medians means
// nothing), errors are concatenated, elapsed time and the last write are the latest, and a fact
// is kept only where every instance states the same (one instance's "3 of 40 checks failed" is
// not the cell's).
func Merge(parts []*Result) *Result {
	merged := NewResult()
	for _, res := range parts {
		merged.Elapsed = max(merged.Elapsed, res.Elapsed)
		for k, v := range res.Metrics {
			merged.Metrics[k] += v
		}
		for k, v := range res.Counters {
			merged.Counters[k] += v
		}
		for name, h := range res.Histograms {
			if merged.Histograms[name] == nil {
				merged.Histograms[name] = measure.NewRecorder()
			}
			merged.Histograms[name].Merge(h)
		}
		merged.Errors = append(merged.Errors, res.Errors...)
		if res.LastWrite.After(merged.LastWrite) {
			merged.LastWrite = res.LastWrite
		}
	}
	if len(parts) > 0 {
		for k, v := range parts[0].Facts {
			if slices.IndexFunc(parts, func(p *Result) bool { return p.Facts[k] != v }) < 0 {
				merged.Facts[k] = v
			}
		}
	}
	for name, h := range merged.Histograms {
		prefix := name + "_"
		if name == LatencyHistogram {
			prefix = ""
		}
		h.Summarize(merged.Elapsed).Metrics(prefix, merged.Metrics)
	}
	return merged
}
