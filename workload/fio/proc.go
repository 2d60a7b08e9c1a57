package fio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// grace is how long fio gets after SIGTERM before SIGKILL: fio tells its jobs to stop and reports,
// and a fio server's connection process notices within its 1 s poll. A variable for tests.
var grace = 5 * time.Second

// proc is one process, named by pid and start time so that a pid reused by another process after
// this one ended is never signalled.
type proc struct {
	pid   int
	start string // clock ticks after boot (/proc/PID/stat field 22)
}

// stat reads a process's state, parent and start time.
func stat(pid int) (state string, ppid int, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, "", false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if len(f) < 20 {
		return "", 0, "", false
	}
	ppid, _ = strconv.Atoi(string(f[1]))
	return string(f[0]), ppid, string(f[19]), true
}

// alive: still running (a zombie is dead, only not yet reaped) and still the same process.
func (p proc) alive() bool {
	state, _, start, ok := stat(p.pid)
	return ok && start == p.start && state != "Z" && state != "X"
}

func (p proc) signal(sig syscall.Signal) {
	if p.alive() {
		_ = syscall.Kill(p.pid, sig)
	}
}

// grow adds the roots and every live descendant of them to set. fio's job processes call setsid(),
// so they leave fio's process group: a signal to the group would miss them, and SIGKILL to fio
// alone orphans them, still running. Parent links find them while their parent lives.
func grow(set map[int]proc, roots ...int) {
	children := map[int][]int{}
	paths, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range paths {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		if _, ppid, _, ok := stat(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	for queue := roots; len(queue) > 0; queue = queue[1:] {
		pid := queue[0]
		state, _, start, ok := stat(pid)
		if !ok || state == "Z" || state == "X" {
			continue
		}
		if _, seen := set[pid]; !seen {
			set[pid] = proc{pid: pid, start: start}
		}
		queue = append(queue, children[pid]...)
	}
}

// live lists the processes of set still alive.
func live(set map[int]proc) []int {
	var pids []int
	for _, p := range set {
		if p.alive() {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// stopTree stops root, whose end closes rootDone, and its descendants, each by pid: SIGTERM, then
// SIGKILL to whatever still lives after grace or when ctx ends. It returns the processes still
// alive after that (none, unless the kernel holds one in an uninterruptible wait).
func stopTree(ctx context.Context, root int, rootDone <-chan struct{}) []int {
	set := map[int]proc{}
	grow(set, root)
	for _, p := range set {
		p.signal(syscall.SIGTERM)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	if waitTree(ctx, t.C, set, rootDone) {
		return nil
	}
	grow(set, live(set)...)
	for _, p := range set {
		p.signal(syscall.SIGKILL)
	}
	<-rootDone
	waitTree(context.Background(), time.After(grace), set, rootDone)
	return live(set)
}

// waitTree waits until root is done and nothing in set is alive, adding processes they fork
// meanwhile; false if stop or ctx came first.
func waitTree(ctx context.Context, stop <-chan time.Time, set map[int]proc, rootDone <-chan struct{}) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		alive := live(set)
		grow(set, alive...)
		select {
		case <-rootDone:
			if len(alive) == 0 {
				return true
			}
		default:
		}
		select {
		case <-ctx.Done():
			return false
		case <-stop:
			return false
		case <-tick.C:
		}
	}
}
