package counter

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/internal/proc"
	"persistlab/scenario"
	"persistlab/workload"
)

// A preparation that hangs is killed with what it started once prepareTimeout passes, and the
// start fails saying so, with the end of its log.
func TestPrepareThatHangsIsKilled(t *testing.T) {
	defer func(was time.Duration) { prepareTimeout = was }(prepareTimeout)
	prepareTimeout = time.Second
	dir := t.TempDir()
	pidFile, self := filepath.Join(dir, "pid"), filepath.Join(dir, "persistlab")
	script := "#!/bin/sh\necho migrating \"$@\"\nsleep 120 & echo $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(self, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	cellDir := t.TempDir()
	_, err = w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir()}, CellDir: cellDir, Params: params(nil), Self: self})
	if err == nil {
		t.Fatal("started")
	}
	for _, want := range []string{"did not end within 1s", filepath.Join(cellDir, "prepare.log"), "migrating app counter"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid <= 0 {
		t.Fatalf("pid file %q", data)
	}
	started, _ := proc.StartTime(pid)
	defer func() { // the test's own sleep, by pid and start time, if the check below fails
		if s, err := proc.StartTime(pid); err == nil && s == started {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if s, _ := proc.StartTime(pid); err != nil || s != started || strings.Contains(string(status), "State:\tZ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the preparation's sleep (pid %d) outlived its timeout", pid)
		}
	}
}
