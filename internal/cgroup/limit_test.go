package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The period is the shortest at which the quota, as NewCPU rounds it to a microsecond, is still
// the kernel's least: one microsecond less and it would not be.
func TestShortestPeriodHoldsTheLeastQuota(t *testing.T) {
	least := MinQuota.Microseconds()
	for cpus := 0.01; cpus < 64; cpus *= 1.013 {
		p := ShortestPeriod(cpus)
		us := p.Microseconds()
		if CheckQuota(cpus, p) != nil || (us > least && CheckQuota(cpus, p-time.Microsecond) == nil) {
			t.Fatalf("%g CPUs: period %d µs, quota %d µs", cpus, us, quotaUs(cpus, p))
		}
	}
}

// A limit under the kernel's least quota is refused before a cgroup is made, saying the period
// that would hold it, instead of the kernel's EINVAL from the quota file.
func TestCheckQuotaRefusesUnderTheLeast(t *testing.T) {
	if err := CheckQuota(0.25, 4*time.Millisecond); err != nil {
		t.Errorf("0.25 CPUs per 4ms: %v", err)
	}
	err := CheckQuota(0.25, 3*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "750µs of quota per period") || !strings.Contains(err.Error(), "at least 4ms for 0.25 CPUs") {
		t.Errorf("0.25 CPUs per 3ms: %v", err)
	}
	name := fmt.Sprintf("persistlab-test-least-%d", os.Getpid())
	if _, err := NewCPU(name, 0.1, 5*time.Millisecond, t.TempDir()); err == nil || !strings.Contains(err.Error(), "under 1ms per period") {
		t.Errorf("0.1 CPUs per 5ms: %v", err)
	}
	if root, _, err := cpuRoot(); err == nil {
		if _, err := os.Stat(root + "/" + name); !os.IsNotExist(err) {
			t.Errorf("a refused limit left %s/%s: %v", root, name, err)
		}
	}
}

// ownLimitEnv makes the test binary print its own CPU limit and exit (run inside a cgroup).
const ownLimitEnv = "PERSISTLAB_TEST_OWN_CPU_LIMIT"

func TestMain(m *testing.M) {
	if os.Getenv(ownLimitEnv) != "" {
		cpus, where := OwnCPULimit()
		fmt.Printf("%g|%s\n", cpus, where)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A process in a cpu cgroup of 0.5 CPU per 2 ms reads that limit as its own, and where.
func TestOwnCPULimitReadsTheGroupsLimit(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a cpu cgroup is made by root only")
	}
	c, err := NewCPU("persistlab-test-own-"+strconv.Itoa(os.Getpid()), 0.5, 2*time.Millisecond, t.TempDir())
	if err != nil {
		t.Skipf("no cpu cgroup here: %v", err)
	}
	defer c.Remove()
	argv := append(c.Wrap(), os.Args[0], "-test.run=^$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), ownLimitEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	cpus, where, _ := strings.Cut(strings.TrimSpace(string(out)), "|")
	if cpus != "0.5" || !strings.Contains(where, "1000") || !strings.Contains(where, "2000") {
		t.Errorf("inside 0.5 CPU per 2ms: read %s CPUs from %q", cpus, where)
	}
}
