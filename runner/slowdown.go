package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/scenario"
)

// The instance's slower CPU: with cpu_slowdown f, an instance pinned to one CPU (cpus: 1) runs in
// a cpu cgroup of weight 1 beside a busy spinner on that CPU in a sibling cgroup of weight f-1,
// so that whenever the instance wants the CPU the scheduler gives it 1/f of it. A request then
// takes about f times as long alone and back to back alike, as on a CPU f times slower; a CFS
// quota (cpu_quota) gives the same CPU time but lets a request alone run at full speed on quota
// left over from idle time (bench/instance; docs/calibrate.md). The spinners run for the whole
// cell, from before the backend starts, and are stopped by their process ids.

// SlowdownParam is the runner's knob for the weight method.
const SlowdownParam = "cpu_slowdown"

// Bounds of cpu_slowdown: its spinners' weight, f-1, must be one the cgroups hold.
const (
	MinSlowdown = 1 + cgroup.MinCPUWeight
	MaxSlowdown = 1 + cgroup.MaxCPUWeight
)

// spinnerScript keeps one CPU busy forever, doing nothing else: a shell loop of builtins.
const spinnerScript = "while :; do :; done"

// slowdown is a cell's slower CPU: the instance's group, the spinners' group and the spinners.
type slowdown struct {
	instance, spinning *cgroup.CPU
	spinners           []*proc.Child
}

// newSlowdown makes the two groups and starts one spinner pinned to each of cpus (checkSlowdown
// allows one), recorded as every process the run starts is (so clean stops a killed run's), in a
// cgroup recorded in dir (so clean empties it).
func newSlowdown(factor float64, cpus []int, dir string) (*slowdown, error) {
	if len(cpus) == 0 {
		return nil, fmt.Errorf("workload.%s: the instance is not pinned (cpus: 0): a spinner slows the CPUs the instance is pinned to", SlowdownParam)
	}
	name := fmt.Sprintf("persistlab-instance-%d-%d", os.Getpid(), limitSeq.Add(1)) // the quota's sequence: no name twice
	s := &slowdown{}
	var err error
	if s.instance, err = cgroup.NewCPUWeight(name, 1, dir); err != nil {
		return nil, fmt.Errorf("workload.%s: %w", SlowdownParam, err)
	}
	if s.spinning, err = cgroup.NewCPUWeight(name+"-spinners", factor-1, dir); err != nil {
		return nil, errors.Join(fmt.Errorf("workload.%s: %w", SlowdownParam, err), s.remove())
	}
	for _, cpu := range cpus {
		argv := append(s.spinning.Wrap(), "taskset", "-c", strconv.Itoa(cpu), "/bin/sh", "-c", spinnerScript)
		c, err := proc.Start("CPU spinner", filepath.Join(dir, "cpu-spinner.log"), nil, argv...)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("workload.%s: %w", SlowdownParam, err), s.remove())
		}
		s.spinners = append(s.spinners, c)
	}
	// The wrapper moves each spinner into its group before it spins: wait for that, so that a
	// spinner that failed to start fails the cell before it runs unslowed.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		in, err := s.spinning.Members()
		if err == nil && len(in) == len(s.spinners) {
			break
		}
		if err := s.stillSpinning(); err != nil || time.Now().After(deadline) {
			return nil, errors.Join(fmt.Errorf("workload.%s: the CPU spinners did not start in their cgroup %s (see %s)", SlowdownParam, s.spinning.Dir, filepath.Join(dir, "cpu-spinner.log")), s.remove())
		}
	}
	return s, nil
}

// stillSpinning says whether every spinner ran to the end: one that exited early left the
// instance a whole CPU for part of the cell.
func (s *slowdown) stillSpinning() error {
	for _, c := range s.spinners {
		if c.Exited() {
			return fmt.Errorf("workload.%s: a CPU spinner (pid %d) exited while the cell ran: the instance had its CPU to itself for part of it", SlowdownParam, c.Pid())
		}
	}
	return nil
}

// spinnersCPU is the CPU time the cell's spinners have taken so far (0 without cpu_slowdown).
func (l *cellLife) spinnersCPU() time.Duration {
	if l.slowed == nil {
		return 0
	}
	var sum time.Duration
	for _, c := range l.slowed.spinners {
		if t, err := proc.CPUTime(c.Pid()); err == nil {
			sum += t
		}
	}
	return sum
}

// remove stops the spinners, by their process ids, and removes both groups.
func (s *slowdown) remove() error {
	var errs []error
	for _, c := range s.spinners {
		errs = append(errs, c.Kill())
	}
	s.spinners = nil
	for _, g := range []*cgroup.CPU{s.spinning, s.instance} {
		if g != nil {
			errs = append(errs, g.Remove())
		}
	}
	return errors.Join(errs...)
}

// checkSlowdown refuses, before anything starts, a cpu_slowdown the weight cannot honour: a value
// between none and the least weight, an instance not pinned, another CPU limit beside it, or
// several instances (each would get 1/(f+n-1), not 1/f).
func (r *run) checkSlowdown(c scenario.Cell) error {
	k := knobsOf(c.Resolved)
	if k.Slowdown == 0 || k.Slowdown == 1 {
		return nil
	}
	field, value := knobField(SlowdownParam, c.PointName), c.Resolved[SlowdownParam]
	switch {
	case k.Slowdown < MinSlowdown:
		return r.fail(field, value, fmt.Sprintf("0 or 1 (none), or %g to %g times slower", MinSlowdown, MaxSlowdown))
	case k.Quota > 0:
		return r.fail(field, value, fmt.Sprintf("no %s beside it (%s): one way of slowing the CPU at a time", QuotaParam, c.Resolved[QuotaParam]))
	case k.Instances > 1 || r.modeOf(c) == ModeInstances:
		return r.fail(field, value, "one instance: the spinners' weight is set against one instance's")
	}
	// One CPU: a cgroup's weight is split over the CPUs its threads run on, so with n spinners
	// on n CPUs a request alone would get n/(f+n-1) of its CPU, not 1/f.
	if n := PinnedCPUs(r.spec.Workload.Params); n != 1 {
		return r.fail(field, value, fmt.Sprintf("cpus: 1 beside it (not %d): the spinner slows the one CPU the instance is pinned to", n))
	}
	if online, err := proc.OnlineCPUs(); err != nil || len(online) < 2 {
		return r.fail(field, value, "0 on a machine of one CPU: the spinner would take the CPU persistlab's driver and the lab run on")
	}
	if err := cgroup.CheckCPU(); err != nil {
		return r.fail(field, value, "0 on this machine: "+err.Error())
	}
	return nil
}
