package cgroup

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"persistlab/lib/readfile"
)

// MinQuota is the least CFS quota the kernel takes per period (cpu.cfs_quota_us or cpu.max
// refuse less with EINVAL).
const MinQuota = time.Millisecond

// CheckQuota says whether cpus CPUs per period is a CFS limit the kernel takes: at least MinQuota
// of quota per period, as NewCPU rounds the quota down to a microsecond. The error says the
// shortest period that would hold it.
func CheckQuota(cpus float64, period time.Duration) error {
	if quotaUs(cpus, period) >= MinQuota.Microseconds() {
		return nil
	}
	return fmt.Errorf("%g CPUs per %v is %dµs of quota per period: the kernel takes no CFS quota under %v per period (want a period of at least %v for %g CPUs)",
		cpus, period, quotaUs(cpus, period), MinQuota, ShortestPeriod(cpus), cpus)
}

// ShortestPeriod is the shortest CFS period, at least MinQuota, in which cpus CPUs of quota (as
// NewCPU rounds it) is still the kernel's least quota.
func ShortestPeriod(cpus float64) time.Duration {
	least := MinQuota.Microseconds()
	if !(cpus > 0) {
		return time.Duration(least) * time.Microsecond
	}
	us := max(least, int64(math.Ceil(float64(least)/cpus)))
	if quotaUs(cpus, time.Duration(us)*time.Microsecond) < least {
		us++
	}
	return time.Duration(us) * time.Microsecond
}

// quotaUs is the quota NewCPU writes for cpus CPUs per period, in µs.
func quotaUs(cpus float64, period time.Duration) int64 {
	return int64(cpus * float64(period.Microseconds()))
}

// OwnCPULimit is the CPU bandwidth limit on this process, in CPUs, and where it was read; 0 and
// "" when none is set or it cannot be read. The lowest limit of its cgroup and their parents
// binds (cgroup v2's cpu.max, v1's cpu.cfs_quota_us over cpu.cfs_period_us).
func OwnCPULimit() (float64, string) {
	data, err := readfile.Regular("/proc/self/cgroup", 64<<10)
	if err != nil {
		return 0, ""
	}
	best, where := 0.0, ""
	consider := func(cpus float64, text string) {
		if cpus > 0 && (best == 0 || cpus < best) {
			best, where = cpus, text
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			for _, dir := range dirsUp("/sys/fs/cgroup", parts[2]) {
				quota, period, ok := strings.Cut(firstLine(filepath.Join(dir, "cpu.max")), " ")
				if !ok || quota == "max" {
					continue
				}
				consider(ratio(quota, period), "cpu.max "+quota+" "+period)
			}
		case slices.Contains(strings.Split(parts[1], ","), "cpu"): // v1
			for _, mount := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/" + parts[1]} {
				for _, dir := range dirsUp(mount, parts[2]) {
					quota, period := firstLine(filepath.Join(dir, "cpu.cfs_quota_us")), firstLine(filepath.Join(dir, "cpu.cfs_period_us"))
					consider(ratio(quota, period), "cpu.cfs_quota_us "+quota+" per cpu.cfs_period_us "+period)
				}
			}
		}
	}
	return best, where
}

// dirsUp are a cgroup's directory under mount and its parents' up to mount; in a container
// whose cgroup namespace hides the path, mount is its own group.
func dirsUp(mount, path string) []string {
	var dirs []string
	path = filepath.Clean("/" + path)
	for i := 0; i < 32; i++ {
		dirs = append(dirs, filepath.Join(mount, path))
		if path == "/" {
			break
		}
		path = filepath.Dir(path)
	}
	return dirs
}

// firstLine is a small kernel file's first line, "" if it cannot be read.
func firstLine(path string) string {
	data, err := readfile.Regular(path, 4096)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line)
}

// ratio is quota over period, 0 unless both are positive whole numbers.
func ratio(quota, period string) float64 {
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return float64(q) / float64(p)
}
