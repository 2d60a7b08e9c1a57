package cgroup

import (
	"bufio"
	"context"
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

	"golang.org/x/sys/unix"
)

// withRoot makes root the only place groups are made for the test, skipping where it is no
// cgroup hierarchy.
func withRoot(t *testing.T, root string) {
	t.Helper()
	var st unix.Statfs_t
	if unix.Statfs(root, &st) != nil || (st.Type != unix.CGROUP2_SUPER_MAGIC && st.Type != unix.CGROUP_SUPER_MAGIC) {
		t.Skipf("%s: no cgroup hierarchy here", root)
	}
	saved := groupRoots
	groupRoots = []string{root}
	t.Cleanup(func() { groupRoots = saved })
}

// startIn starts `sh -c script` through prefix, and reads the pids the script prints on its
// first line.
func startIn(t *testing.T, prefix []string, script string) (*exec.Cmd, []int) {
	t.Helper()
	args := append(slices.Clone(prefix), "/bin/sh", "-c", script)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	var pids []int
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		pids = append(pids, pid)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			if running(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, pids
}

// running says whether pid is a live process (not a zombie).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// A group holds everything its app starts, a daemon in a session of its own too; Close kills
// them all, waits for them, and removes the group and its record; in the unified hierarchy (the
// kernel's cgroup.kill) and in v1's pids one (SIGKILL to each member) alike.
func TestGroupEndsEverythingItsAppStarted(t *testing.T) {
	for _, root := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
		t.Run(root, func(t *testing.T) {
			withRoot(t, root)
			work := t.TempDir()
			g, err := NewGroup(work, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := Recorded(work); len(got) != 1 || got[0] != g.Dir || filepath.Dir(g.Dir) != root {
				t.Errorf("recorded %v, want %s, made in %s", got, g.Dir, root)
			}
			cmd, pids := startIn(t, g.Wrap(), "setsid sleep 600 & echo $$ $!; exec sleep 600")
			members, err := g.Members()
			if err != nil || !slices.Contains(members, pids[0]) || !slices.Contains(members, pids[1]) {
				t.Errorf("members %v (%v), want the app %d and its daemon %d", members, err, pids[0], pids[1])
			}
			if err := g.Close(GroupWait); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if running(pids[1]) {
				t.Errorf("the daemon %d still runs", pids[1])
			}
			if _, err := os.Stat(g.Dir); !os.IsNotExist(err) {
				t.Errorf("%s: %v", g.Dir, err)
			}
			if left, _ := os.ReadDir(work); len(left) != 0 {
				t.Errorf("left in the work directory: %v", left)
			}
		})
	}
}

// Kill (a crash) ends every member at once, without waiting.
func TestGroupKillEndsEveryMember(t *testing.T) {
	work := t.TempDir()
	g, err := NewGroup(work, nil)
	if err != nil {
		t.Skip(err)
	}
	defer g.Close(GroupWait)
	cmd, pids := startIn(t, g.Wrap(), "setsid sleep 600 & echo $$ $!; exec sleep 600")
	g.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); running(pids[1]) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if running(pids[1]) {
		t.Errorf("the daemon %d outlived Kill", pids[1])
	}
}

// WaitEmpty waits for a daemon the app left running to end by itself, and no longer than it is
// told to: a daemon that outlives the wait is reported, still running, until Close.
func TestWaitEmptyWaitsForWhatTheAppLeftRunning(t *testing.T) {
	work := t.TempDir()
	g, err := NewGroup(work, nil)
	if err != nil {
		t.Skip(err)
	}
	defer g.Close(GroupWait)
	cmd, pids := startIn(t, g.Wrap(), "setsid sleep 0.3 & echo $$ $!")
	cmd.Wait() // the app ended; its daemon runs on
	waited, empty := g.WaitEmpty(context.Background(), time.Minute)
	if !empty || running(pids[1]) {
		t.Fatalf("WaitEmpty: empty %v after %v, daemon %d running %v", empty, waited, pids[1], running(pids[1]))
	}

	cmd, pids = startIn(t, g.Wrap(), "setsid sleep 600 & echo $$ $!")
	cmd.Wait()
	const wait = 100 * time.Millisecond
	if waited, empty := g.WaitEmpty(context.Background(), wait); empty || waited < wait || !running(pids[1]) {
		t.Errorf("a daemon outliving the wait: empty %v after %v (want false after %v at least), daemon running %v", empty, waited, wait, running(pids[1]))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, empty := g.WaitEmpty(ctx, time.Minute); empty {
		t.Error("an ended context: WaitEmpty says empty while the daemon runs")
	}
	if err := g.Close(GroupWait); err != nil || running(pids[1]) {
		t.Errorf("Close: %v; daemon running %v", err, running(pids[1]))
	}
}

// In the unified hierarchy a process is in one cgroup only: an app started in an instance's
// cgroup gets its group inside it, keeping the instance's limits; emptying the instance's
// cgroup ends and removes both.
func TestGroupNestsInTheInstancesCgroup(t *testing.T) {
	const root = "/sys/fs/cgroup/unified"
	withRoot(t, root)
	instance := filepath.Join(root, fmt.Sprintf("persistlab-test-%d", os.Getpid()))
	if err := os.Mkdir(instance, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Empty(instance, GroupWait) })
	g, err := NewGroup(t.TempDir(), append(wrap(instance), "taskset", "-c", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(g.Dir) != instance {
		t.Errorf("group %s, want it inside %s", g.Dir, instance)
	}
	// A group for a program outside any cgroup of the hierarchy is made at its root.
	if other, err := NewGroup(t.TempDir(), wrap("/sys/fs/cgroup/cpu/persistlab-elsewhere")); err != nil || filepath.Dir(other.Dir) != root {
		t.Errorf("%v %v", other, err)
	} else {
		other.Close(GroupWait)
	}
	cmd, pids := startIn(t, append(wrap(instance), g.Wrap()...), "setsid sleep 600 & echo $$ $!; exec sleep 600")
	if members, _ := g.Members(); !slices.Contains(members, pids[1]) {
		t.Errorf("members %v, want the daemon %d", members, pids[1])
	}
	if err := Empty(instance, GroupWait); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if running(pids[1]) {
		t.Errorf("the daemon %d still runs", pids[1])
	}
	for _, dir := range []string{g.Dir, instance} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

// Empty touches only a cgroup persistlab makes; one already gone is empty.
func TestEmptyTouchesOnlyOurCgroups(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "persistlab-app-1")
	os.Mkdir(dir, 0o755)
	if err := Empty(dir, time.Second); err == nil || !strings.Contains(err.Error(), "not a cgroup persistlab makes") {
		t.Errorf("a directory outside the cgroup hierarchies: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("removed: %v", err)
	}
	if err := Empty("/sys/fs/cgroup/unified/persistlab-never-made", time.Second); err != nil {
		t.Errorf("a cgroup that is gone: %v", err)
	}
}

// A record another user could have written (writable by others, or a link) names nothing.
func TestRecordedTrustsOnlyItsOwnRecords(t *testing.T) {
	work := t.TempDir()
	g, err := NewGroup(work, nil)
	if err != nil {
		t.Skip(err)
	}
	defer g.Close(GroupWait)
	if got := Recorded(work); len(got) != 1 {
		t.Fatalf("recorded %v", got)
	}
	os.Chmod(g.record, 0o666)
	if got := Recorded(work); len(got) != 0 {
		t.Errorf("a record anyone may write: %v", got)
	}
	os.Chmod(g.record, 0o644)
	link := filepath.Join(work, groupRecordName+".link")
	os.Rename(g.record, filepath.Join(t.TempDir(), "elsewhere"))
	os.Symlink(filepath.Join(filepath.Dir(link), "elsewhere"), link)
	if got := Recorded(work); len(got) != 0 {
		t.Errorf("a record that is a link: %v", got)
	}
}
