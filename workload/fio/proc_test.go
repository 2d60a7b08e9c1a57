package fio

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A process tree that ignores SIGTERM, with one process in a session of its own as fio's job
// processes are: stopTree must SIGKILL every one of them by pid.
func TestStopTreeKillsWhatIgnoresSIGTERM(t *testing.T) {
	defer func(g time.Duration) { grace = g }(grace)
	grace = 200 * time.Millisecond
	// Ignored signals stay ignored across exec, so the sleeps ignore SIGTERM too.
	cmd := exec.Command("sh", "-c", `trap "" TERM; setsid sleep 60 & sleep 60 & wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	set := map[int]proc{}
	for deadline := time.Now().Add(10 * time.Second); len(set) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell started %d processes; want 3", len(set))
		}
		grow(set, cmd.Process.Pid)
	}
	sessions := map[int]bool{}
	for pid := range set {
		sid, _ := unix.Getsid(pid)
		sessions[sid] = true
	}
	if len(sessions) != 2 {
		t.Fatalf("processes in %d sessions; want 2 (one setsid)", len(sessions))
	}
	if left := stopTree(context.Background(), cmd.Process.Pid, done); len(left) > 0 {
		t.Errorf("stopTree left %v alive", left)
	}
	if alive := live(set); len(alive) > 0 {
		t.Errorf("processes %v alive after stopTree", alive)
	}
}
