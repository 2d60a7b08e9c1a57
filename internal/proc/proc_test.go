package proc

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestParseCPUList(t *testing.T) {
	got, err := ParseCPUList("0-2,5,7-8")
	if err != nil || !reflect.DeepEqual(got, []int{0, 1, 2, 5, 7, 8}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := ParseCPUList("a-b"); err == nil {
		t.Error("accepted a-b")
	}
}

func TestSplitCPUs(t *testing.T) {
	online, _ := OnlineCPUs()
	app, rest, err := SplitCPUs(1)
	if err != nil || len(app) != 1 || len(app)+len(rest) != len(online) || app[0] != online[len(online)-1] {
		t.Errorf("app %v rest %v err %v (online %v)", app, rest, err, online)
	}
	if _, _, err := SplitCPUs(len(online) + 1); err == nil {
		t.Error("more CPUs than online accepted")
	}
}

// Stop must end the child and everything it started (its process group), found by process id.
func TestStopEndsTheWholeProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	c, _, err := StartAndWaitFor("shell", filepath.Join(dir, "log"), os.Environ(), "ready", 10*time.Second,
		"sh", "-c", "sleep 300 & echo $! > "+pidFile+"; echo ready; trap '' TERM; wait")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, _ := strconv.Atoi(string(data[:len(data)-1]))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond) // the shell ignores TERM: Stop must escalate
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if !c.Exited() {
		t.Error("child still running")
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(grandchild, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived", grandchild)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCPUTimeGrowsWithWork(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the kernel's clock tick counts it: a busy machine only makes that take longer.
	x, after := 0, before
	for deadline := time.Now().Add(60 * time.Second); after <= before && time.Now().Before(deadline); {
		for range 1_000_000 {
			x++
		}
		after, _ = CPUTime(os.Getpid())
	}
	if after <= before {
		t.Errorf("CPU time %v -> %v after busy work (%d)", before, after, x)
	}
}

// A busy loop on one CPU shows as at least part of a CPU's share of the machine.
func TestMachineBusySeesWork(t *testing.T) {
	b0, t0, err := MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	b1, t1, err := MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	share := MachineBusy(b0, t0, b1, t1)
	cpus, _ := OnlineCPUs()
	if share <= 0 || share > 1 || share < 0.5/float64(len(cpus)) {
		t.Errorf("busy share %.3f with one CPU spinning on %d", share, len(cpus))
	}
}
