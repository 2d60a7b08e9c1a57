package leftover

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A cgroup an app of a run ran in, recorded in the run's work directory, with a process still in
// it (a daemon of the app's: recorded by no pid): after a SIGKILL of the run, or a run that ended
// with the cgroup still there, clean finds it, kills what is in it and removes it and the
// directory.
func TestCleanEmptiesAndRemovesARecordedCgroup(t *testing.T) {
	var root string
	for _, r := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup/pids"} {
		if _, err := os.Stat(filepath.Join(r, "cgroup.procs")); err == nil {
			root = r
			break
		}
	}
	if root == "" {
		t.Skip("no cgroup hierarchy to hold a process here")
	}
	for _, killed := range []bool{true, false} {
		t.Run(fmt.Sprintf("killed=%v", killed), func(t *testing.T) {
			l, err := CreateTemp(t.TempDir(), "persistlab-test-", Run{PID: os.Getpid(), Started: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			cell := filepath.Join(l.Dir(), "cell-000-local-r1")
			os.Mkdir(cell, 0o755)
			group := filepath.Join(root, fmt.Sprintf("persistlab-app-test-%d-%v", os.Getpid(), killed))
			if err := os.Mkdir(group, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(group) })
			name := "persistlab.app.cgroup." + filepath.Base(group)
			if err := os.WriteFile(filepath.Join(cell, name), []byte(group), 0o644); err != nil {
				t.Fatal(err)
			}
			daemon := exec.Command("/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, group, "sleep", "600")
			daemon.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := daemon.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
			for deadline := time.Now().Add(10 * time.Second); !inCgroup(group, daemon.Process.Pid) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if killed {
				abandon(l)
			} else if kept := l.Release(); !kept {
				t.Fatal("released with a recorded cgroup still there: the lock went, and clean would not find it")
			}
			dead := Find(nil, []string{l.Dir()})
			if len(dead) != 1 || !dead[0].Made || !slices.Equal(dead[0].Cgroups, []string{group}) {
				t.Fatalf("found %+v, want the run's directory with its cgroup %s", dead, group)
			}
			err = dead[0].Clean()
			dead[0].Close()
			if err != nil {
				t.Fatal(err)
			}
			if !exited(daemon) {
				t.Error("the process in the recorded cgroup still runs")
			}
			if _, err := os.Stat(group); !os.IsNotExist(err) {
				t.Errorf("the cgroup: %v", err)
			}
			if _, err := os.Stat(l.Dir()); !os.IsNotExist(err) {
				t.Errorf("the run's directory: %v", err)
			}
		})
	}
}

func inCgroup(group string, pid int) bool {
	data, _ := os.ReadFile(filepath.Join(group, "cgroup.procs"))
	return slices.Contains(strings.Fields(string(data)), strconv.Itoa(pid))
}
