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

// abandon lets go of the lock as a killed run does: the lock file stays, nobody holds it.
func abandon(l *Lock) {
	l.mu.Lock()
	l.done = true
	l.f.Close()
	l.mu.Unlock()
}

func startSleep(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", append([]string{"60"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// exited waits up to 5 s for cmd to end.
func exited(cmd *exec.Cmd) bool {
	done := make(chan struct{})
	go func() { cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// Clean kills the processes the run recorded, never one that merely names the run's directory
// in its command line (a user's tail -f on a log), and removes the directory persistlab made,
// never the directory the user gave it to work in.
func TestCleanTouchesOnlyWhatTheRunRecorded(t *testing.T) {
	user := t.TempDir()
	if err := os.WriteFile(filepath.Join(user, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := CreateTemp(user, "persistlab-test-", Run{PID: os.Getpid(), Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	ours := startSleep(t)
	l.Record(ours.Process.Pid)
	theirs := startSleep(t, filepath.Join(l.Dir(), "app.log")) // sleep ignores it; the path is in its command line
	abandon(l)

	dead := Find(nil, []string{user})
	if len(dead) != 1 || dead[0].Dir != l.Dir() || !dead[0].Made {
		t.Fatalf("found %+v, want the run's directory %s alone", dead, l.Dir())
	}
	if got := dead[0].Processes; len(got) != 1 || got[0] != ours.Process.Pid {
		t.Fatalf("processes to stop %v, want the recorded %d alone", got, ours.Process.Pid)
	}
	if err := dead[0].Clean(); err != nil {
		t.Fatal(err)
	}
	if !exited(ours) {
		t.Error("the recorded process still runs")
	}
	if err := theirs.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("a process that only names the directory was stopped: %v", err)
	}
	if _, err := os.Stat(l.Dir()); !os.IsNotExist(err) {
		t.Errorf("the run's own directory: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(user, "notes.txt")); err != nil || string(data) != "mine" {
		t.Errorf("the user's file: %q %v", data, err)
	}
}

// A recorded pid whose start time differs is another process that got the pid after ours ended.
func TestARecordedPidReusedIsNotOurs(t *testing.T) {
	l, err := CreateTemp(t.TempDir(), "persistlab-test-", Run{})
	if err != nil {
		t.Fatal(err)
	}
	other := startSleep(t)
	l.Record(other.Process.Pid)
	l.run.Processes[0].Start-- // ours started a tick earlier: the pid was reused since
	l.write()
	abandon(l)
	dead := Find([]string{filepath.Dir(l.Dir())}, nil)
	if len(dead) != 1 || len(dead[0].Processes) != 0 {
		t.Fatalf("found %+v, want the directory with no live process of its own", dead)
	}
	if err := dead[0].Clean(); err != nil {
		t.Fatal(err)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process that reused the pid was stopped: %v", err)
	}
}

// A lock file that does not say persistlab made its directory (an older persistlab's, or one
// copied there) leaves the directory and everything in it alone.
func TestCleanLeavesADirectoryItDidNotMake(t *testing.T) {
	user := t.TempDir()
	os.WriteFile(filepath.Join(user, "notes.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(user, LockName), []byte(`{"pid":1,"out":"","started":"2026-01-01T00:00:00Z"}`), 0o644)
	dead := Find(nil, []string{user})
	if len(dead) != 1 || dead[0].Made {
		t.Fatalf("found %+v", dead)
	}
	if err := dead[0].Clean(); err == nil {
		t.Error("Clean of a directory persistlab did not make said nothing")
	}
	if _, err := os.Stat(filepath.Join(user, "notes.txt")); err != nil {
		t.Errorf("the user's file: %v", err)
	}
}

// A live run's directory is never a leftover; a released one with nothing mounted keeps no lock.
func TestLiveRunsAreNotLeftovers(t *testing.T) {
	parent := t.TempDir()
	l, err := Create(filepath.Join(parent, "w"), Run{})
	if err != nil {
		t.Fatal(err)
	}
	if !Live(l.Dir()) || len(Find(nil, []string{l.Dir()})) != 0 {
		t.Error("a live run's directory was taken for a leftover")
	}
	if _, err := Create(l.Dir(), Run{}); err == nil {
		t.Error("Create took a directory that exists")
	}
	l.Release()
	if _, err := os.Stat(filepath.Join(l.Dir(), LockName)); !os.IsNotExist(err) {
		t.Errorf("lock after release: %v", err)
	}
}

// A record anyone else could have written (a lock file or directory writable by others, a
// directory that is a link) is no record: clean touches nothing there.
func TestARecordOthersCouldWriteIsNotTrusted(t *testing.T) {
	for _, spoil := range []func(l *Lock) string{
		func(l *Lock) string { os.Chmod(filepath.Join(l.Dir(), LockName), 0o666); return l.Dir() },
		func(l *Lock) string { os.Chmod(l.Dir(), 0o777); return l.Dir() },
		func(l *Lock) string {
			link := filepath.Join(t.TempDir(), "persistlab-link")
			os.Symlink(l.Dir(), link)
			return link
		},
	} {
		l, err := CreateTemp(t.TempDir(), "persistlab-test-", Run{})
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(l.Dir(), "data"), []byte("x"), 0o644)
		dir := spoil(l)
		abandon(l)
		dead := Find(nil, []string{dir})
		for _, d := range dead {
			if d.Made {
				t.Errorf("%s: taken for persistlab's", dir)
			}
			d.Clean()
			d.Close()
		}
		if _, err := os.Stat(filepath.Join(l.Dir(), "data")); err != nil {
			t.Errorf("%s: removed: %v", dir, err)
		}
	}
}

// A recorded process group is stopped whole while its leader is the recorded process; once the
// leader has ended, its group's id may be another's, and the members are named, not stopped.
func TestProcessGroupsOnlyWhileTheirLeaderLives(t *testing.T) {
	for _, leaderDies := range []bool{false, true} {
		l, err := CreateTemp(t.TempDir(), "persistlab-test-", Run{})
		if err != nil {
			t.Fatal(err)
		}
		leader := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
		leader.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, _ := leader.StdoutPipe()
		if err := leader.Start(); err != nil {
			t.Fatal(err)
		}
		var member int
		fmt.Fscan(out, &member)
		t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL); leader.Process.Kill(); leader.Wait() })
		l.Record(leader.Process.Pid)
		if leaderDies {
			leader.Process.Kill()
			leader.Wait()
		}
		abandon(l)
		dead := Find(nil, []string{filepath.Dir(l.Dir())})
		if len(dead) != 1 {
			t.Fatalf("found %+v", dead)
		}
		if err := dead[0].Clean(); err != nil {
			t.Fatal(err)
		}
		dead[0].Close()
		memberAlive := func() bool {
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(member) + "/stat")
			return err == nil && !strings.Contains(string(stat), ") Z ")
		}
		deadline := time.Now().Add(10 * time.Second)
		for !leaderDies && memberAlive() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if leaderDies && (!memberAlive() || !slices.Contains(dead[0].Strays, member)) {
			t.Errorf("leader gone: the member %d was stopped (alive %v) or not named (strays %v)", member, memberAlive(), dead[0].Strays)
		}
		if !leaderDies && memberAlive() {
			t.Errorf("leader alive: the member %d of its group still runs", member)
		}
	}
}
