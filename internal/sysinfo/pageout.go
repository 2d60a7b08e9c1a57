package sysinfo

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"persistlab/lib/readfile"
)

// DamonAdmin is where the kernel's DAMON sysfs interface lives.
const DamonAdmin = "/sys/kernel/mm/damon/admin"

// MaxKdamonds bounds how many kdamonds, contexts, schemes and filters are read.
const MaxKdamonds = 64

// PageOutPolicies describes each running DAMON scheme (under root, normally DamonAdmin) that pages
// memory out: a machine whose idle page cache is taken back after some seconds (as cloud hosts do
// to their VMs) serves from the disk what an instance of the same memory would serve from its page
// cache. One line per scheme, for the results file and the report; none where DAMON is absent or
// off. It only reads.
func PageOutPolicies(root string) []string {
	var out []string
	for k := range Kdamonds(root) {
		if KdamondState(root, k) == "on" {
			out = append(out, KdamondPageOut(root, k)...)
		}
	}
	return out
}

// Kdamonds is how many kdamonds DAMON's sysfs under root has (at most MaxKdamonds; 0 without DAMON).
func Kdamonds(root string) int { return count(filepath.Join(root, "kdamonds", "nr_kdamonds")) }

// KdamondState is kdamond k's state ("on", "off"; "" if it cannot be read).
func KdamondState(root string, k int) string {
	return read(KdamondStateFile(root, k))
}

// KdamondStateFile is the file that reads and sets kdamond k's state.
func KdamondStateFile(root string, k int) string {
	return filepath.Join(root, "kdamonds", strconv.Itoa(k), "state")
}

// KdamondPageOut describes kdamond k's page-out schemes as its sysfs files set them, whether it
// runs or not: one line per scheme, none if it has none.
func KdamondPageOut(root string, k int) []string {
	var out []string
	kd := filepath.Join(root, "kdamonds", strconv.Itoa(k))
	for c := 0; c < count(filepath.Join(kd, "contexts", "nr_contexts")); c++ {
		ctx := filepath.Join(kd, "contexts", strconv.Itoa(c))
		aggr := number(filepath.Join(ctx, "monitoring_attrs", "intervals", "aggr_us"))
		for s := 0; s < count(filepath.Join(ctx, "schemes", "nr_schemes")); s++ {
			sch := filepath.Join(ctx, "schemes", strconv.Itoa(s))
			if read(filepath.Join(sch, "action")) != "pageout" {
				continue
			}
			idle := number(filepath.Join(sch, "access_pattern", "age", "min")) * aggr / 1e6
			what := "memory"
			if excludesAnon(sch) {
				what = "page cache"
			}
			line := fmt.Sprintf("kdamond %d (DAMON, %s): pages out %s idle for %.0f s or more", k, read(filepath.Join(ctx, "operations")), what, idle)
			if q, per := number(filepath.Join(sch, "quotas", "bytes")), number(filepath.Join(sch, "quotas", "reset_interval_ms")); q > 0 && per > 0 {
				line += fmt.Sprintf(", up to %.0f MiB per %.0f ms", q/(1<<20), per)
			}
			out = append(out, line)
		}
	}
	return out
}

// excludesAnon says whether a scheme has a filter that keeps anonymous memory out of its action,
// so that only file pages (the page cache) are paged out.
func excludesAnon(scheme string) bool {
	for _, dir := range []string{"filters", "ops_filters", "core_filters"} {
		for i := 0; i < count(filepath.Join(scheme, dir, "nr_filters")); i++ {
			f := filepath.Join(scheme, dir, strconv.Itoa(i))
			if read(filepath.Join(f, "type")) == "anon" && read(filepath.Join(f, "matching")) == "Y" && read(filepath.Join(f, "allow")) == "N" {
				return true
			}
		}
	}
	return false
}

// read is a small sysfs file's first line, "" if it cannot be read.
func read(path string) string {
	data, err := readfile.Regular(path, 4096)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line)
}

func number(path string) float64 {
	v, err := strconv.ParseFloat(read(path), 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// count is a sysfs count, bounded by MaxKdamonds.
func count(path string) int {
	return int(min(number(path), MaxKdamonds))
}
