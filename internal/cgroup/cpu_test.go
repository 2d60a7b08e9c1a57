package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A busy process under half a CPU of quota never gets more than half a CPU, on however many
// cores, and the group counts the periods it was throttled in; removing the group leaves nothing
// behind. (How soon it reaches its quota depends on what else the machine runs: it runs until
// throttled a few times, and only the bound is asserted.)
func TestCPUQuotaThrottlesABusyProcess(t *testing.T) {
	work := t.TempDir()
	c, err := NewCPU("persistlab-test-"+strconv.Itoa(os.Getpid()), 0.5, DefaultCPUPeriod, work)
	if err != nil {
		t.Skipf("no cpu cgroup here: %v", err)
	}
	if got := Recorded(work); len(got) != 1 || got[0] != c.Dir {
		t.Errorf("recorded %v, want %s", got, c.Dir)
	}
	cmd := exec.Command(c.Wrap()[0], append(c.Wrap()[1:], "/bin/sh", "-c", "while :; do :; done")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	var th Throttling
	for deadline := started.Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if th, err = c.Throttling(); err != nil || th.Throttled >= 5 {
			break
		}
	}
	stat, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "stat"))
	elapsed := time.Since(started).Seconds()
	cmd.Process.Kill()
	cmd.Wait()
	fields := strings.Fields(string(stat))
	if len(fields) < 15 {
		t.Fatalf("stat of the busy process: %q", stat)
	}
	utime, _ := strconv.ParseFloat(fields[13], 64)
	stime, _ := strconv.ParseFloat(fields[14], 64)
	cpu := (utime + stime) / 100 // clock ticks (USER_HZ 100)
	if th, err = c.Throttling(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%.2f s busy under 0.5 CPU: %.2f s of CPU; throttled in %d of %d periods, %v waited", elapsed, cpu, th.Throttled, th.Periods, th.Waited)
	// At most the quota over the time it ran, plus one period's quota and a tick of rounding.
	if limit := 0.5*elapsed + 0.05 + 0.01; cpu > limit || th.Throttled < 5 || th.Waited <= 0 {
		t.Errorf("under half a CPU for %.2f s: %.2f s of CPU (at most %.2f), throttled in %d of %d periods, waited %v", elapsed, cpu, limit, th.Throttled, th.Periods, th.Waited)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", c.Dir, err)
	}
}

func TestCPUQuotaRefusesNonsense(t *testing.T) {
	for _, c := range []struct {
		cpus   float64
		period time.Duration
	}{{0, DefaultCPUPeriod}, {-1, DefaultCPUPeriod}, {1, 0}, {1, 2 * time.Second}} {
		if _, err := NewCPU("persistlab-never", c.cpus, c.period, t.TempDir()); err == nil || !strings.Contains(err.Error(), "want CPUs above 0") {
			t.Errorf("%v CPUs per %v: %v", c.cpus, c.period, err)
		}
	}
}
