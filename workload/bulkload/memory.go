package bulkload

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"persistlab/internal/proc"
	"persistlab/param"
)

// PoolShare is the largest share of memory the buffer pool may take: mariadbd needs the rest for
// its threads, log buffer and the load's sort and packet buffers. Assumed: 80% is the usual rule
// of thumb for a dedicated database server, not a figure measured here; it moves only which
// buffer_pool values are refused before a run. A larger pool does not start, or is killed.
const PoolShare = 0.8

// machineMemory is this machine's memory (MemTotal); a variable for tests.
var machineMemory = func() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: MemTotal %q", rest)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/meminfo: no MemTotal")
}

// checkPool refuses a buffer pool larger than PoolShare of memory bytes (what holds: "this
// machine", "the instance").
func checkPool(value string, pool, memory int64, what string) error {
	if limit := int64(float64(memory) * PoolShare); pool > limit {
		return &param.FieldError{Field: "workload.buffer_pool", Value: value,
			Allowed: fmt.Sprintf("at most %s: %.0f%% of %s's %s of memory, the rest is mariadbd's own", humanSize(limit), PoolShare*100, what, humanSize(memory))}
	}
	return nil
}

// instanceMemory is the memory limit of the cgroup a program started with wrap runs in (the
// emulated instance's), 0 if it has none. Read from inside: the workload knows no backend's cgroups.
func instanceMemory(ctx context.Context, wrap []string) (int64, error) {
	args := append(append([]string{}, wrap...), "cat", "/proc/self/cgroup")
	out, err := proc.Output(exec.CommandContext(ctx, args[0], args[1:]...), 64<<10) // a few lines
	if err != nil {
		return 0, fmt.Errorf("read the instance's cgroup: %w", err)
	}
	return cgroupMemoryLimit("/sys/fs/cgroup", string(out)), nil
}

// cgroupMemoryLimit is the smallest memory limit on the path of the cgroups /proc/PID/cgroup
// names (v1's memory controller or v2's unified tree under root), 0 if none is set.
func cgroupMemoryLimit(root, procCgroup string) int64 {
	var limit int64
	for _, line := range strings.Split(procCgroup, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var base, file string
		switch {
		case f[0] == "0" && f[1] == "":
			base, file = root, "memory.max"
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			base, file = filepath.Join(root, "memory"), "memory.limit_in_bytes"
		default:
			continue
		}
		for dir := path.Clean(f[2]); ; dir = path.Dir(dir) {
			if b, err := os.ReadFile(filepath.Join(base, dir, file)); err == nil {
				// "max" (v2) and v1's near-2^63 mean none.
				if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n < 1<<60 && (limit == 0 || n < limit) {
					limit = n
				}
			}
			if dir == "/" || dir == "." {
				break
			}
		}
	}
	return limit
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	default:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
}
