package runner

import (
	"fmt"
	"slices"
	"time"

	"persistlab/backend"
	"persistlab/cost"
	"persistlab/param"
	"persistlab/results"
	"persistlab/scenario"
	"persistlab/workload"
)

// The runner's own parameters. They apply to every workload, which neither declares nor reads
// them: CPU placement reaches a workload as workload.Env.CPUs, the CPU limit as the target's
// Wrap, and several instances as shares of the load (workload.Sharer).
const (
	CPUsParam      = "cpus"
	InstancesParam = scenario.InstancesParam // also the scenario's top-level instances:
	QuotaParam     = "cpu_quota"
	PeriodParam    = "cpu_period"
)

// Knobs declares the runner's parameters, once; scenarios set and sweep them as a workload's.
var Knobs = []param.Param{
	{Name: CPUsParam, Kind: param.KindInt, Default: "0", Min: 0, Max: 1024, Unit: "CPUs", Help: "pin the system under test (app, database server, git, fio) to this many CPUs, the last ones online (0: not pinned); persistlab's own driver runs on the others"},
	{Name: InstancesParam, Kind: param.KindInt, Default: "1", Min: 1, Max: 8, Help: "instances of the system under test sharing one backend, each on its own mount, the load split between them (also the scenario's top-level instances:)"},
	{Name: QuotaParam, Kind: param.KindFloat, Default: "0", Min: 0, Max: 1024, Unit: "CPUs", Help: "a container's CPU limit on each instance (the system under test and the backend's helpers: gcsfuse, Litestream): this many CPUs of time per cpu_period on any cores (CFS bandwidth; 0: none)"},
	{Name: PeriodParam, Kind: param.KindDuration, Default: "100ms", Min: 0.001, Max: 1, Help: "the CFS period of cpu_quota (100ms: as Docker and Kubernetes set it)"},
	{Name: SlowdownParam, Kind: param.KindFloat, Default: "0", Min: 0, Max: MaxSlowdown, Unit: "times", Help: "a CPU this many times slower for one instance pinned to one CPU (cpus: 1; no cpu_quota): a busy spinner on that CPU, in a cgroup whose weight leaves the instance 1/cpu_slowdown of it whenever it wants it, alone or busy (0 or 1: none)"},
}

// IsKnob says whether name is one of the runner's parameters.
func IsKnob(name string) bool {
	_, ok := param.Find(Knobs, name)
	return ok
}

// Known is what this build can run, for scenario validation: every workload's parameters and the
// runner's.
func Known() scenario.Known {
	declared := workload.Declared()
	for name, params := range declared {
		declared[name] = append(slices.Clone(params), Knobs...)
	}
	return scenario.Known{Workloads: declared, Metrics: declaredMetrics(), Sections: workload.DeclaredSections(),
		PriceLists: cost.PriceListNames(), Backends: backend.Names()}
}

// RunnerMetrics are what the runner adds to a cell whatever its workload: the machine's load,
// several instances' lost updates, a CPU limit's throttling, a volume's page cache read again.
var RunnerMetrics = []workload.Metric{
	{Name: MachineCPUMetric, Unit: "share", Help: "the machine's busy CPU time while the cell was measured (less cpu_slowdown's spinners', which take their CPUs by design)"},
	{Name: InstancesParam, Unit: "count", Help: "instances that shared the backend (instances mode)"},
	{Name: CountDeltaMetric, Unit: "count", Help: "what the data's count grew by while several instances ran (instances mode, workloads that can count their data)"},
	{Name: LostUpdatesMetric, Unit: "count", Help: "acknowledged writes the data does not reflect after several instances stopped (instances mode)"},
	{Name: ThrottledPeriodsMetric, Unit: "count", Help: "CFS periods in which an instance ran out of cpu_quota"},
	{Name: ThrottledShareMetric, Unit: "share", Help: "of the periods an instance was runnable in, those it was throttled in"},
	{Name: ThrottledSecondsMetric, Unit: "s", Help: "the instances' threads' time waiting for the next CFS period"},
	{Name: results.RefaultBytesMetric, Unit: "bytes", Help: "page cache read again after it was evicted, while the cell was measured (a volume with its model in effect; from the instance's memory cgroup, else the whole machine's)"},
	{Name: results.MemoryLimitHitsMetric, Unit: "count", Help: "times the instance's memory reached its limit while the cell was measured (its own reclaim, which refaults too)"},
}

// runnerUnit is the unit RunnerMetrics declares for name.
func runnerUnit(name string) string {
	for _, m := range RunnerMetrics {
		if m.Name == name {
			return m.Unit
		}
	}
	return ""
}

// declaredMetrics is every workload's metrics with the runner's beside them.
func declaredMetrics() map[string]map[string]string {
	out := workload.DeclaredMetrics()
	for _, units := range out {
		for _, m := range RunnerMetrics {
			if _, own := units[m.Name]; !own {
				units[m.Name] = m.Unit
			}
		}
	}
	return out
}

// knobs are a cell's runner parameters, read (cpus is placed once per run, from the scenario).
type knobs struct {
	Instances int           `param:"instances"`
	Quota     float64       `param:"cpu_quota"`    // CPUs; 0: no limit
	Period    time.Duration `param:"cpu_period"`   // of the quota
	Slowdown  float64       `param:"cpu_slowdown"` // times; 0 or 1: none
}

// knobsOf reads a cell's runner parameters; the plan has checked them, and a cell it did not
// check (a value it would refuse) runs with the defaults.
func knobsOf(p workload.Params) knobs {
	var k knobs
	if err := param.Decode(Knobs, p, &k); err != nil {
		k = knobs{}
		param.Decode(Knobs, nil, &k)
	}
	return k
}

// PinnedCPUs is a scenario's cpus, read as its declaration reads it: the CPUs the system under
// test is pinned to for the whole run (0: not pinned). The plan has checked the value; one it
// would refuse reads as 0.
func PinnedCPUs(params map[string]string) int {
	var k struct {
		CPUs int `param:"cpus"`
	}
	if param.Decode(Knobs, params, &k) != nil {
		return 0
	}
	return k.CPUs
}

// knobField names a runner parameter in an error at a sweep point.
func knobField(name, point string) string {
	if point == "" {
		return "workload." + name
	}
	return fmt.Sprintf("workload.%s (at %s)", name, point)
}
