package counter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/scenario"
	"persistlab/workload"
	"persistlab/workload/counter"
)

// The counter app and its preparation run in a cgroup of their own: a daemon either starts (here
// a wrapper of the test's stand-in app starts one, in a session of its own) ends when the app is
// stopped, or killed, and nothing of the group is left.
func TestTheAppsDaemonsEndWithIt(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(fmt.Sprintf("kill=%v", kill), func(t *testing.T) {
			dir, cellDir := t.TempDir(), t.TempDir()
			pidFile, self := filepath.Join(dir, "pids"), filepath.Join(dir, "app.sh")
			script := fmt.Sprintf("#!/bin/sh\nsetsid sleep 1234 >/dev/null 2>&1 & echo $! >> %s\nexec %s \"$@\"\n", pidFile, os.Args[0])
			if err := os.WriteFile(self, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			w, err := counter.New(scenario.Workload{Type: counter.Name})
			if err != nil {
				t.Fatal(err)
			}
			in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir()}, CellDir: cellDir,
				Params: workload.Resolve(counter.Params, nil, nil), Self: self})
			if err != nil {
				t.Fatal(err)
			}
			daemons := map[int]uint64{}
			data, _ := os.ReadFile(pidFile)
			for _, f := range strings.Fields(string(data)) {
				pid, _ := strconv.Atoi(f)
				if start, err := proc.StartTime(pid); err == nil {
					daemons[pid] = start
				}
			}
			t.Cleanup(func() {
				for pid, start := range daemons {
					if running(pid, start) {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			if len(daemons) != 2 {
				t.Errorf("daemons %v (%q), want the preparation's and the app's", daemons, data)
			}
			if recorded := cgroup.Recorded(cellDir); len(recorded) != 1 {
				t.Errorf("recorded cgroups %v, want the app's", recorded)
			}
			allGone := func(when string) {
				t.Helper()
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					left := 0
					for pid, start := range daemons {
						if running(pid, start) {
							left++
						}
					}
					if left == 0 {
						break
					}
				}
				for pid, start := range daemons {
					if running(pid, start) {
						t.Errorf("%s: daemon %d still runs", when, pid)
					}
				}
			}
			if kill { // a crash: every process of the app dies at once
				acked := in.(workload.Acknowledged)
				acked.Kill()
				<-acked.Exited()
				allGone("after Kill")
			}
			if err := in.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			allGone("after Stop")
			if left := cgroup.Recorded(cellDir); len(left) > 0 {
				t.Errorf("cgroups left: %v", left)
			}
		})
	}
}

// running says whether the process with that start time still runs (not a zombie).
func running(pid int, start uint64) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	now, err2 := proc.StartTime(pid)
	return err == nil && err2 == nil && now == start && !strings.Contains(string(stat), ") Z ")
}
