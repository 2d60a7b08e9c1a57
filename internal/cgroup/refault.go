package cgroup

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"persistlab/lib/readfile"
)

// VMStat is the kernel's counters for the whole machine.
const VMStat = "/proc/vmstat"

// maxStatBytes bounds how much of a memory.stat, memory.events or vmstat file is read.
const maxStatBytes = 64 << 10

// PageCache is what a page cache did so far: the file pages read again after they were evicted
// (refaults; a cgroup's, or the whole machine's), and, for a memory cgroup, how many times its
// usage reached its limit (the instance's own reclaim, which refaults too).
type PageCache struct {
	RefaultPages int64
	LimitHits    int64
	HasLimit     bool // LimitHits was read: a memory cgroup's
}

// MemoryPageCache reads a memory cgroup's page cache counters: memory.stat's
// total_workingset_refault_file (cgroup v1, the cgroup and those under it) or
// workingset_refault_file (v2, hierarchical already), and memory.failcnt (v1) or memory.events'
// max (v2).
func MemoryPageCache(dir string) (PageCache, error) {
	stat, err := statFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return PageCache{}, err
	}
	pc := PageCache{}
	var ok bool
	if pc.RefaultPages, ok = stat["total_workingset_refault_file"]; !ok {
		if pc.RefaultPages, ok = stat["workingset_refault_file"]; !ok {
			return PageCache{}, fmt.Errorf("%s/memory.stat has no workingset_refault_file (a kernel before 5.9?)", dir)
		}
	}
	if data, err := readfile.Regular(filepath.Join(dir, "memory.failcnt"), maxStatBytes); err == nil {
		pc.LimitHits, err = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		pc.HasLimit = err == nil && pc.LimitHits >= 0
	} else if events, err := statFile(filepath.Join(dir, "memory.events")); err == nil {
		pc.LimitHits, pc.HasLimit = events["max"]
	}
	return pc, nil
}

// MachinePageCache reads the whole machine's refaults from vmstat (normally VMStat).
func MachinePageCache(vmstat string) (PageCache, error) {
	stat, err := statFile(vmstat)
	if err != nil {
		return PageCache{}, err
	}
	n, ok := stat["workingset_refault_file"]
	if !ok {
		return PageCache{}, fmt.Errorf("%s has no workingset_refault_file (a kernel before 5.9?)", vmstat)
	}
	return PageCache{RefaultPages: n}, nil
}

// statFile reads "name value" lines; values that are not counts are left out.
func statFile(path string) (map[string]int64, error) {
	data, err := readfile.Regular(path, maxStatBytes)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); ok && err == nil && n >= 0 {
			out[name] = n
		}
	}
	return out, nil
}
