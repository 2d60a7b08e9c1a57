package runner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/scenario"
)

// The instance's CPU limit: with cpu_quota (and cpu_period), the runner runs each emulated
// instance in a cpu cgroup of its own with that CFS bandwidth limit, the system under test and
// the backend's helpers (gcsfuse, Litestream) together, as a container's limit covers every
// process in it. The runner owns it, as it owns CPU placement (cpus), so that no backend or
// workload knows the other.

// Metrics of a cell run under a CPU limit, summed over its instances.
const (
	ThrottledPeriodsMetric = "cpu_throttled_periods" // CFS periods in which the instance ran out of quota
	ThrottledShareMetric   = "cpu_throttled_share"   // of the periods it was runnable in
	ThrottledSecondsMetric = "cpu_throttled_s"       // its threads' time waiting for the next period
)

var limitSeq atomic.Int64

// newLimit makes the next instance's CPU limit in the cell, recorded in its directory so that
// `persistlab clean` removes a killed run's; nil without cpu_quota.
func (l *cellLife) newLimit() (*cgroup.CPU, error) {
	k := knobsOf(l.params)
	if k.Slowdown >= MinSlowdown {
		if l.slowed != nil { // checkSlowdown refuses several instances
			return nil, fmt.Errorf("workload.%s: one instance only", SlowdownParam)
		}
		s, err := newSlowdown(k.Slowdown, l.r.res.Placement.AppCPUs, l.dir)
		if err != nil {
			return nil, err
		}
		l.slowed = s
		return s.instance, nil
	}
	if k.Quota <= 0 {
		return nil, nil
	}
	name := fmt.Sprintf("persistlab-instance-%d-%d", os.Getpid(), limitSeq.Add(1))
	c, err := cgroup.NewCPU(name, k.Quota, k.Period, l.dir)
	if err != nil {
		return nil, fmt.Errorf("workload.%s: %w", QuotaParam, err)
	}
	l.limits = append(l.limits, c)
	return c, nil
}

// wrapOf is the command prefix that runs a program inside limit c (none without a limit).
func wrapOf(c *cgroup.CPU) []string {
	if c == nil {
		return nil
	}
	return c.Wrap()
}

// limitKnob names the knob the cell's instances are held by: cpu_slowdown or cpu_quota.
func (l *cellLife) limitKnob() string {
	if l.slowed != nil {
		return SlowdownParam
	}
	return QuotaParam
}

// within puts the programs a workload runs on target inside limit c, before the backend's own
// prefix (a volume's memory cgroup); knob names what made c.
func within(target backend.Target, c *cgroup.CPU, knob string) (backend.Target, error) {
	if c == nil {
		return target, nil
	}
	if c.V2() && len(target.Wrap) > 0 {
		return target, fmt.Errorf("workload.%s: this backend runs its instance in a cgroup of its own, and under cgroup v2 a process is in one cgroup only (the CPU limit would be lost): needs cgroup v1 or no %s", knob, knob)
	}
	target.Wrap = append(wrapOf(c), target.Wrap...)
	return target, nil
}

// cpuIsV2 is cgroup.CPUIsV2; tests stand in for a machine of the other version.
var cpuIsV2 = cgroup.CPUIsV2

// checkQuotaBeside refuses, before the first cell, a CPU limit on the cells of backend entry id
// when the backend runs its instance in a cgroup of its own and this machine's cgroups are v2:
// a process is in one group only there, so one of the two limits would be lost (within).
func (r *run) checkQuotaBeside(be backend.Backend, id string) error {
	w, ok := be.(backend.InstanceWrapper)
	if !ok || !w.WrapsInstance() {
		return nil
	}
	for _, c := range r.plan.Cells {
		k, knob := knobsOf(c.Resolved), QuotaParam
		if k.Slowdown >= MinSlowdown {
			knob = SlowdownParam
		}
		if c.Backend != id || (k.Quota <= 0 && k.Slowdown < MinSlowdown) {
			continue
		}
		if v2, err := cpuIsV2(); err != nil || !v2 {
			return nil // v1 holds both limits; without a cpu controller checkKnobs refuses them
		}
		return fmt.Errorf("a backend that leaves the instance's cgroup to the runner: this one runs its instance in a cgroup of its own (the instance's memory), and under cgroup v2 a process is in one cgroup only, so %s=%s would be lost; leave out %s, or the instance's memory (instance: none, or memory: 0)", knob, c.Resolved[knob], knob)
	}
	return nil
}

// checkLeastQuota refuses a cell whose cpu_quota per cpu_period is under the kernel's least CFS
// quota (1 ms), before the first cell, naming cpu_period (or cpu_quota, when no period up to 1 s
// would hold it): the kernel would refuse it mid-run.
func (r *run) checkLeastQuota(c scenario.Cell) error {
	k := knobsOf(c.Resolved)
	if k.Quota <= 0 {
		return nil
	}
	err := cgroup.CheckQuota(k.Quota, k.Period)
	if err == nil {
		return nil
	}
	if shortest := cgroup.ShortestPeriod(k.Quota); shortest <= time.Second {
		return r.fail(knobField(PeriodParam, c.PointName), k.Period.String(), fmt.Sprintf("a period of at least %v with %s %g: %v", shortest, QuotaParam, k.Quota, err))
	}
	return r.fail(knobField(QuotaParam, c.PointName), strconv.FormatFloat(k.Quota, 'f', -1, 64), fmt.Sprintf("at least %g CPUs, 1 ms of quota in the longest %s (1s): %v", float64(cgroup.MinQuota)/float64(time.Second), PeriodParam, err))
}

// throttling sums what the cell's CPU limits did so far.
func (l *cellLife) throttling() cgroup.Throttling {
	var sum cgroup.Throttling
	for _, c := range l.limits {
		t, _ := c.Throttling()
		sum.Periods += t.Periods
		sum.Throttled += t.Throttled
		sum.Waited += t.Waited
	}
	return sum
}

// recordThrottling adds what the CPU limits did between two readings to a cell's metrics.
func (r *run) recordThrottling(before, after cgroup.Throttling, metrics map[string]float64) {
	periods := after.Periods - before.Periods
	metrics[ThrottledPeriodsMetric] = float64(after.Throttled - before.Throttled)
	if periods > 0 {
		metrics[ThrottledShareMetric] = metrics[ThrottledPeriodsMetric] / float64(periods)
	}
	metrics[ThrottledSecondsMetric] = (after.Waited - before.Waited).Seconds()
	for _, name := range []string{ThrottledPeriodsMetric, ThrottledShareMetric, ThrottledSecondsMetric} {
		r.res.Units[name] = runnerUnit(name)
	}
}

// removeLimits removes the cell's CPU limits once their processes are gone, and stops its
// spinners.
func (l *cellLife) removeLimits() error {
	var errs []error
	if l.slowed != nil {
		errs = append(errs, l.slowed.remove())
		l.slowed = nil
	}
	for _, c := range l.limits {
		errs = append(errs, c.Remove())
	}
	l.limits = nil
	return errors.Join(errs...)
}
