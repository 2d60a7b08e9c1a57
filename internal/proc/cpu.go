// Package proc owns the processes persistlab starts: CPU pinning, CPU accounting, and children
// that are stopped by process id and die with persistlab.
package proc

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// OnlineCPUs lists the CPUs the kernel has online, from /sys (not the current affinity mask, so a
// pinned parent can still hand its child a different CPU).
func OnlineCPUs() ([]int, error) {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		n := runtime.NumCPU()
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = i
		}
		return cpus, nil
	}
	return ParseCPUList(strings.TrimSpace(string(data)))
}

// ParseCPUList reads the kernel's list format, e.g. "0-3,6".
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("cpu list %q: %w", s, err)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// SplitCPUs gives the system under test the last n online CPUs and the load driver the rest, so
// the two do not share a core (on Cloud Run the load came from elsewhere). rest is empty when n
// takes every CPU.
func SplitCPUs(n int) (app, rest []int, err error) {
	online, err := OnlineCPUs()
	if err != nil {
		return nil, nil, err
	}
	if n < 1 || n > len(online) {
		return nil, nil, fmt.Errorf("cpus %d: this machine has %d online CPUs, want 1 to %d", n, len(online), len(online))
	}
	return online[len(online)-n:], online[:len(online)-n], nil
}

// PinSelf binds every thread of this process to cpus (threads started later inherit it) and sets
// GOMAXPROCS to match.
func PinSelf(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin to CPUs %v: %w", cpus, err)
	}
	for _, t := range tasks {
		tid, _ := strconv.Atoi(t.Name())
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pin thread %d to CPUs %v: %w", tid, cpus, err)
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every Linux architecture Go
// supports (the kernel exports a fixed USER_HZ to user space).
const clockTicks = 100

// CPUTime is the user and system time a process has used so far, with its children that it has
// waited for.
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after its closing parenthesis are fixed.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	var ticks int64
	for _, f := range fields[11:15] { // utime, stime, cutime, cstime
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// MachineCPU is the machine's CPU time so far, busy and in all (every CPU, from /proc/stat): two
// readings give the share of the machine a cell kept busy.
func MachineCPU() (busy, total time.Duration, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: no cpu line")
	}
	var all, idle int64
	for i, f := range fields[1:] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		if i >= 8 { // guest and guest_nice are already counted in user and nice
			break
		}
		all += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	tick := time.Second / clockTicks
	return time.Duration(all-idle) * tick, time.Duration(all) * tick, nil
}

// MachineBusy is the share of the machine's CPU time that was busy between two readings.
func MachineBusy(busy0, total0, busy1, total1 time.Duration) float64 {
	if total1 <= total0 {
		return 0
	}
	return max(0, float64(busy1-busy0)/float64(total1-total0)) // busy1 may have a share taken out
}
