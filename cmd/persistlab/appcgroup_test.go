package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/internal/cgroup"
	"persistlab/report"
	"persistlab/results"
)

// An app under a CPU limit that starts a daemon (setsid) keeps the limit's cgroup busy until the
// daemon ends: the cell is measured and kept (exit 0), the daemon is stopped with the app, and no
// cgroup of the run, the app's or the limit's, is left.
func TestAnAppsDaemonUnderACPULimitEndsWithTheCell(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	if err := cgroup.CheckCPU(); err != nil {
		t.Skip(err)
	}
	work := t.TempDir()
	pidFile, groupsFile := filepath.Join(work, "daemon.pid"), filepath.Join(work, "daemon.cgroup")
	spec := filepath.Join(work, "daemon.yaml")
	os.WriteFile(spec, []byte(`name: app-daemon
workload:
  type: http
  command: [sh, -c, "setsid sleep 1234 >/dev/null 2>&1 & echo $! > `+pidFile+`; cat /proc/$!/cgroup > `+groupsFile+`; exec python3 -m http.server --bind {host} {port} --directory {dir}"]
  cpus: 0
  cpu_quota: 0.5
backends: [{name: local}]
sweep: {vus: 1}
duration: 1s
warmup: 0s
`), 0o644)
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", spec, "--out", out)
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	t.Cleanup(func() { // the daemon, if the run failed to stop it
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); pid > 0 && err == nil && strings.Contains(string(stat), "1234") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || r.Status != results.StatusComplete || len(r.Cells) != 1 || r.Cells[0].Failure != "" || r.Cells[0].M("ok") < 1 || len(r.Notes) != 0 {
		t.Fatalf("%v %+v", err, r)
	}
	if pid <= 0 {
		t.Fatalf("no daemon pid in %s: %q", pidFile, data)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			break
		}
	}
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Errorf("the app's daemon %d still runs: %s", pid, stat)
	}
	// The daemon's cgroups as it saw them: the limit's and the app's, persistlab's, all gone.
	f, err := os.Open(groupsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ours := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || !strings.Contains(parts[2], "persistlab-") {
			continue
		}
		ours++
		hierarchy := parts[1]
		switch {
		case hierarchy == "":
			hierarchy = "unified"
		case strings.HasPrefix(hierarchy, "name="):
			continue
		}
		for _, dir := range []string{filepath.Join("/sys/fs/cgroup", hierarchy, parts[2]), filepath.Join("/sys/fs/cgroup", parts[2])} {
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("cgroup %s is still there", dir)
			}
		}
	}
	if ours < 2 {
		t.Errorf("the daemon ran in %d of persistlab's cgroups, want the CPU limit's and the app's", ours)
	}
}
