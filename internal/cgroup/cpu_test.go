package cgroup

import (
	"fmt"
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

// Two sibling groups of weights 1 and 3, each with a busy process on the same CPU, split it a
// quarter and three quarters (whatever else that CPU runs takes from both alike); the group's
// file holds the weight in its version's units; a weight out of bounds is refused.
func TestCPUWeightSplitsABusyCPU(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a cpu cgroup is made by root only")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset not installed")
	}
	for _, w := range []float64{0, 0.001, 101} {
		if _, err := NewCPUWeight("persistlab-never", w, t.TempDir()); err == nil || !strings.Contains(err.Error(), "want 0.01 to 100") {
			t.Errorf("weight %g: %v", w, err)
		}
	}
	work := t.TempDir()
	var groups [2]*CPU
	for i, w := range []float64{1, 3} {
		c, err := NewCPUWeight(fmt.Sprintf("persistlab-test-weight-%d-%d", os.Getpid(), i), w, work)
		if err != nil {
			t.Skipf("no cpu cgroup here: %v", err)
		}
		defer c.Remove()
		groups[i] = c
	}
	file, want := "cpu.shares", "3072"
	if groups[1].V2() {
		file, want = "cpu.weight", "300"
	}
	if data, _ := os.ReadFile(filepath.Join(groups[1].Dir, file)); strings.TrimSpace(string(data)) != want {
		t.Errorf("%s holds %q, want %s", file, data, want)
	}
	var cmds [2]*exec.Cmd
	for i, c := range groups {
		argv := append(c.Wrap(), "taskset", "-c", "0", "/bin/sh", "-c", "while :; do :; done")
		cmds[i] = exec.Command(argv[0], argv[1:]...)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
		defer func(cmd *exec.Cmd) { cmd.Process.Kill(); cmd.Wait() }(cmds[i])
	}
	time.Sleep(2 * time.Second)
	var ticks [2]float64
	for i, cmd := range cmds {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "stat"))
		fields := strings.Fields(string(stat))
		if err != nil || len(fields) < 15 {
			t.Fatalf("stat of busy process %d: %v %q", i, err, stat)
		}
		utime, _ := strconv.ParseFloat(fields[13], 64)
		stime, _ := strconv.ParseFloat(fields[14], 64)
		ticks[i] = utime + stime
	}
	share := ticks[0] / (ticks[0] + ticks[1])
	t.Logf("weights 1 and 3 on one CPU for 2 s: %.0f and %.0f ticks, a share of %.3f", ticks[0], ticks[1], share)
	if share < 0.2 || share > 0.3 {
		t.Errorf("weight 1 against 3 on one busy CPU had a share of %.3f (%v ticks), want 0.25 within 0.05", share, ticks)
	}
}
