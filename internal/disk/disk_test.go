package disk

import (
	"math"
	"os/exec"
	"strings"
	"testing"
)

// A file system with less room than asked is refused, naming the need and what is free; one with
// room is not.
func TestRoomRefusesMoreThanIsFree(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	if err := Room(dir, 512<<10, "the job"); err != nil {
		t.Errorf("512 KiB on 1 MiB: %v", err)
	}
	err := Room(dir, 2<<20, "the job")
	if err == nil || !strings.Contains(err.Error(), "2.0 MiB") || !strings.Contains(err.Error(), "1.0 MiB free") {
		t.Errorf("2 MiB on 1 MiB: %v", err)
	}
}

// Needs add up, and saturate at the largest int64 rather than wrap to a small one.
func TestSumSaturates(t *testing.T) {
	if got := Sum(1, 2, 3); got != 6 {
		t.Errorf("Sum(1, 2, 3) = %d", got)
	}
	if got := Sum(math.MaxInt64/2+1, math.MaxInt64/2+1, 5); got != math.MaxInt64 {
		t.Errorf("a wrapped sum: %d", got)
	}
}
