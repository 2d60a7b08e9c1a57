// Package disk checks a file system has room for what a workload is about to lay out, so that a
// run stops with a clear message before it starts instead of failing halfway with ENOSPC.
package disk

import (
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// Free is the space an unprivileged writer may still use on the file system holding dir.
func Free(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// Room refuses when the file system holding dir has less than need bytes free; what says what
// needs them (for the message).
func Room(dir string, need int64, what string) error {
	free, err := Free(dir)
	if err != nil {
		return fmt.Errorf("free space of %s: %w", dir, err)
	}
	if free < need {
		return fmt.Errorf("%s needs about %s, and %s has %s free: make it smaller, or free space", what, Bytes(need), dir, Bytes(free))
	}
	return nil
}

// Bytes writes n in binary units, as people read them.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Sum adds byte counts, saturating at math.MaxInt64 rather than wrapping: a need that large is
// refused all the same.
func Sum(ns ...int64) int64 {
	var total int64
	for _, n := range ns {
		if n > math.MaxInt64-total {
			return math.MaxInt64
		}
		total += n
	}
	return total
}
