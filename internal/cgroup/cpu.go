package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultCPUPeriod is the CFS bandwidth period container runtimes set with a CPU limit (Docker's
// --cpus and Kubernetes' limits write cpu.cfs_period_us = 100000, the kernel's default).
const DefaultCPUPeriod = 100 * time.Millisecond

// CPU is a cpu cgroup whose CFS bandwidth limit lets its processes run cpus x period of CPU time
// in each period, on any cores: a container's CPU limit. Work beyond the quota waits for the
// next period (throttling), where pinning to cores never stalls a process this way.
type CPU struct {
	Dir string
	v2  bool
}

// NewCPU makes a cpu cgroup named name limited to cpus CPUs per period, and records it in
// workDir (a file of its own, beside a memory cgroup's record and other cpu cgroups').
func NewCPU(name string, cpus float64, period time.Duration, workDir string) (*CPU, error) {
	if cpus <= 0 || period < time.Millisecond || period > time.Second {
		return nil, fmt.Errorf("cgroup %s: a CPU limit of %g CPUs per %v: want CPUs above 0 and a period of 1 ms to 1 s", name, cpus, period)
	}
	if err := CheckQuota(cpus, period); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", name, err)
	}
	periodUs, quotaUs := period.Microseconds(), quotaUs(cpus, period)
	base, v2, err := cpuRoot()
	if err != nil {
		return nil, err
	}
	c := &CPU{Dir: filepath.Join(base, name), v2: v2}
	if err := os.Mkdir(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", c.Dir, err)
	}
	set := func(file, value string) error {
		if err := os.WriteFile(filepath.Join(c.Dir, file), []byte(value), 0o644); err != nil {
			c.Remove()
			return fmt.Errorf("cgroup %s: %s = %s: %w", c.Dir, file, value, err)
		}
		return nil
	}
	if c.v2 {
		if err := set("cpu.max", fmt.Sprintf("%d %d", quotaUs, periodUs)); err != nil {
			return nil, err
		}
	} else {
		if err := set("cpu.cfs_period_us", strconv.FormatInt(periodUs, 10)); err != nil {
			return nil, err
		}
		if err := set("cpu.cfs_quota_us", strconv.FormatInt(quotaUs, 10)); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(workDir, cpuRecordName+"."+name), []byte(c.Dir), 0o644); err != nil {
		c.Remove()
		return nil, err
	}
	return c, nil
}

// Bounds of a relative CPU weight (NewCPUWeight): what both cgroup versions hold (v2's cpu.weight
// takes 1 to 10000, its default 100; v1's cpu.shares 2 to 262144, its default 1024).
const (
	MinCPUWeight = 0.01
	MaxCPUWeight = 100.0
)

// NewCPUWeight makes a cpu cgroup named name whose CPU weight is weight times the default one
// (cgroup v2's cpu.weight 100, v1's cpu.shares 1024), and records it in workDir as NewCPU does.
// A weight sets no limit: it says how the scheduler splits a CPU between groups that both want
// it (sibling groups of weights 1 and 3 on one busy CPU: a quarter and three quarters).
func NewCPUWeight(name string, weight float64, workDir string) (*CPU, error) {
	if !(weight >= MinCPUWeight && weight <= MaxCPUWeight) {
		return nil, fmt.Errorf("cgroup %s: a CPU weight of %g: want %g to %g times the default", name, weight, MinCPUWeight, MaxCPUWeight)
	}
	base, v2, err := cpuRoot()
	if err != nil {
		return nil, err
	}
	c := &CPU{Dir: filepath.Join(base, name), v2: v2}
	file, value := "cpu.shares", strconv.FormatInt(int64(math.Round(weight*1024)), 10)
	if v2 {
		file, value = "cpu.weight", strconv.FormatInt(int64(math.Round(weight*100)), 10)
	}
	if err := os.Mkdir(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", c.Dir, err)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, file), []byte(value), 0o644); err != nil {
		c.Remove()
		return nil, fmt.Errorf("cgroup %s: %s = %s: %w", c.Dir, file, value, err)
	}
	if err := os.WriteFile(filepath.Join(workDir, cpuRecordName+"."+name), []byte(c.Dir), 0o644); err != nil {
		c.Remove()
		return nil, err
	}
	return c, nil
}

// CheckCPU says whether this machine can make cpu cgroups with a bandwidth limit.
func CheckCPU() error {
	_, _, err := cpuRoot()
	return err
}

// CPUIsV2 says whether cpu cgroups are made in the unified hierarchy (cgroup v2), where a process
// is in one group only.
func CPUIsV2() (bool, error) {
	_, v2, err := cpuRoot()
	return v2, err
}

// cpuRoot is where cpu cgroups are made.
func cpuRoot() (dir string, v2 bool, err error) {
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil {
		return "/sys/fs/cgroup/cpu", false, nil
	}
	if data, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil && strings.Contains(string(data), "cpu") {
		return "/sys/fs/cgroup", true, nil
	}
	return "", false, errors.New("no cpu cgroup controller (cgroup v1 cpu, or v2 with cpu enabled) on this machine")
}

// cpuRecordName begins the name of the file naming a cpu cgroup in a work directory, one file per
// group (several app instances may share a directory); Recorded finds them.
const cpuRecordName = "persistlab.cpu.cgroup"

// V2 says the group is in the unified hierarchy (cgroup v2), where a process is in one group only:
// wrapping a program in a second group there takes it out of this one.
func (c *CPU) V2() bool { return c.v2 }

// Wrap is a command prefix that runs a program inside the cgroup, as Memory.Wrap does.
func (c *CPU) Wrap() []string { return wrap(c.Dir) }

// Throttling is what the CFS bandwidth limit did: periods with the group runnable, periods in
// which it ran out of quota, and the time its threads waited for the next period.
type Throttling struct {
	Periods, Throttled int64
	Waited             time.Duration
}

// Throttling reads the group's counters so far.
func (c *CPU) Throttling() (Throttling, error) {
	f, err := os.Open(filepath.Join(c.Dir, "cpu.stat"))
	if err != nil {
		return Throttling{}, err
	}
	defer f.Close()
	var t Throttling
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseInt(value, 10, 64)
		switch name {
		case "nr_periods":
			t.Periods = n
		case "nr_throttled":
			t.Throttled = n
		case "throttled_time": // v1, ns
			t.Waited = time.Duration(n)
		case "throttled_usec": // v2
			t.Waited = time.Duration(n) * time.Microsecond
		}
	}
	return t, sc.Err()
}

// Members lists the processes in the group.
func (c *CPU) Members() ([]int, error) { return members(c.Dir) }

// Remove deletes the cgroup once the processes in it are gone.
func (c *CPU) Remove() error { return Remove(c.Dir) }
