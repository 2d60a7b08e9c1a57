package cgroup

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/lib/readfile"
)

// An app's cgroup holds the app and everything it starts: a process stays in its parent's cgroup
// whatever process group or session it moves to (a daemon that called setsid, children left
// running when the app's first process exited), so stopping what is in the cgroup stops them
// all. The cgroup only holds processes: no controller is set in it, so the instance's limits
// (a cpu or memory cgroup of its own) still apply.

// groupRecordName begins the name of the file recording an app's cgroup in a work directory, one
// per group; Recorded finds them.
const groupRecordName = "persistlab.app.cgroup"

// GroupWait bounds how long Close waits for the killed processes of a group to be gone.
const GroupWait = 10 * time.Second

// maxMembers bounds the process ids read from a cgroup at once (killing reads it again until it
// is empty).
const maxMembers = 1 << 16

// Group is an app's cgroup.
type Group struct {
	Dir    string
	record string
}

// groupRoots are where an app's cgroup may be made, first found first: the unified hierarchy
// (cgroup v2, or a v1 machine's unified mount, which holds processes without controllers), then
// v1's pids hierarchy. Tests stand in other roots.
var groupRoots = []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/pids"}

var groupSeq atomic.Int64

func groupRoot() (string, error) {
	for _, root := range groupRoots {
		var st unix.Statfs_t
		if unix.Statfs(root, &st) != nil {
			continue
		}
		if st.Type == unix.CGROUP2_SUPER_MAGIC || st.Type == unix.CGROUP_SUPER_MAGIC {
			if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err == nil {
				return root, nil
			}
		}
	}
	return "", fmt.Errorf("no cgroup hierarchy to hold an app's processes in (cgroup v2, or v1's pids; looked at %s)", strings.Join(groupRoots, ", "))
}

// NewGroup makes a cgroup for an app started with the command prefix wrap (the instance's, which
// may put it in a cgroup of its own), and records it in recordDir before it exists, so that
// `persistlab clean` finds it after a kill. In the unified hierarchy the group is made inside the
// instance's cgroup when wrap names one there: a process is in one cgroup of a hierarchy only,
// and one outside would escape the instance's limits.
func NewGroup(recordDir string, wrap []string) (*Group, error) {
	root, err := groupRoot()
	if err != nil {
		return nil, err
	}
	parent := root
	if dir := innermost(wrap); strings.HasPrefix(dir, root+"/") {
		parent = dir
	}
	var random [4]byte
	rand.Read(random[:])
	// Unique beyond this process: a later run may get this pid while a killed run's group stays.
	name := fmt.Sprintf("persistlab-app-%d-%d-%x", os.Getpid(), groupSeq.Add(1), random)
	g := &Group{Dir: filepath.Join(parent, name), record: filepath.Join(recordDir, groupRecordName+"."+name)}
	if err := os.WriteFile(g.record, []byte(g.Dir), 0o644); err != nil {
		return nil, err
	}
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		os.Remove(g.record)
		return nil, fmt.Errorf("cgroup %s: %w", g.Dir, err)
	}
	return g, nil
}

// innermost is the last cgroup a command prefix of this package's (wrap) moves a program into,
// "" if it names none.
func innermost(prefix []string) string {
	var dir string
	for i := 0; i+3 < len(prefix); i++ {
		if w := wrap(prefix[i+3]); prefix[i] == w[0] && prefix[i+1] == w[1] && prefix[i+2] == w[2] {
			dir = prefix[i+3]
		}
	}
	return dir
}

// Wrap is a command prefix that runs a program inside the group, as Memory.Wrap does; nil for no
// group.
func (g *Group) Wrap() []string {
	if g == nil {
		return nil
	}
	return wrap(g.Dir)
}

// Members lists the processes in the group (at most maxMembers).
func (g *Group) Members() ([]int, error) {
	return members(g.Dir)
}

// WaitEmpty waits until the group holds no process (what its first process left running, a
// daemon, has ended by itself), at most wait or until ctx ends. It returns how long it waited and
// whether the group emptied; a group whose members cannot be read counts as not empty, no group
// (nil) as empty.
func (g *Group) WaitEmpty(ctx context.Context, wait time.Duration) (time.Duration, bool) {
	if g == nil {
		return 0, true
	}
	start := time.Now()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		pids, err := g.Members()
		if errors.Is(err, fs.ErrNotExist) || (err == nil && len(pids) == 0) {
			return time.Since(start), true
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-timer.C:
			return time.Since(start), false
		case <-tick.C:
		}
	}
}

// Kill sends SIGKILL to every process in the group, without waiting (a crash).
func (g *Group) Kill() {
	if g != nil {
		killTree(g.Dir, 0)
	}
}

// Close kills what is still in the group, waits (at most wait) until it is empty, and removes it
// and its record. A group that does not empty in time stays, recorded for clean: a *StuckError.
func (g *Group) Close(wait time.Duration) error {
	if g == nil {
		return nil
	}
	if err := Empty(g.Dir, wait); err != nil {
		return err
	}
	os.Remove(g.record)
	return nil
}

// StuckError is a cgroup that still held processes (or could not be removed) when the time to
// empty it was up. It stays, recorded in the work directory, for `persistlab clean`.
type StuckError struct {
	Dir    string
	Left   []int // the processes still in it
	Waited time.Duration
	Err    error // why the last removal failed
}

func (e *StuckError) Error() string {
	why := ""
	if e.Err != nil {
		why = " (" + e.Err.Error() + ")"
	}
	return fmt.Sprintf("cgroup %s: still holds processes %v after %v of SIGKILL%s: left for persistlab clean", e.Dir, e.Left, e.Waited, why)
}

func (e *StuckError) Unwrap() error { return e.Err }

// maxDepth bounds how deep Empty goes into the cgroups under one (an app's group inside an
// instance's, and what the app itself may have made there).
const maxDepth = 8

// Empty stops every process in the cgroup at dir and in the cgroups under it, and removes them,
// waiting at most wait for the processes to be gone. Only a cgroup persistlab makes is touched
// (ours): every process in one is by construction one persistlab started, or started by one of
// those. A cgroup already gone is empty. It fails with a *StuckError when the time is up.
func Empty(dir string, wait time.Duration) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if !ours(dir) {
		return fmt.Errorf("cgroup %s: not a cgroup persistlab makes: left alone", dir)
	}
	deadline := time.Now().Add(wait)
	for {
		killTree(dir, 0)
		err := removeTree(dir, 0)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			left, _ := members(dir)
			return &StuckError{Dir: dir, Left: left, Waited: wait, Err: err}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killTree sends SIGKILL to every process in the cgroup at dir and in those under it: by the
// kernel (cgroup.kill, cgroup v2 from Linux 5.14), which also catches a process forked meanwhile,
// or else to each member in turn (a loop of Empty's catches those).
func killTree(dir string, depth int) {
	if f, err := os.OpenFile(filepath.Join(dir, "cgroup.kill"), os.O_WRONLY, 0); err == nil {
		_, err = f.WriteString("1")
		f.Close()
		if err == nil {
			return
		}
	}
	if entries, err := os.ReadDir(dir); err == nil && depth < maxDepth {
		for _, e := range entries {
			if e.IsDir() {
				killTree(filepath.Join(dir, e.Name()), depth+1)
			}
		}
	}
	killMembers(dir)
}

// killBatch is how many processes killMembers holds a pidfd of at once.
const killBatch = 256

// killMembers sends SIGKILL to each process in the cgroup at dir. Each is held by a pidfd and
// checked to be a member still before the signal: a pid freed and reused meanwhile by a process
// outside the group is never signalled.
func killMembers(dir string) {
	pids, _ := members(dir)
	for len(pids) > 0 {
		batch := pids[:min(killBatch, len(pids))]
		pids = pids[len(batch):]
		fds := make(map[int]int, len(batch)) // pid -> pidfd, -1 where the kernel has none
		for _, pid := range batch {
			if pid == os.Getpid() {
				continue
			}
			fd, err := unix.PidfdOpen(pid, 0)
			switch {
			case errors.Is(err, unix.ENOSYS):
				fds[pid] = -1
			case err == nil:
				fds[pid] = fd
			}
		}
		now, _ := members(dir)
		for _, pid := range now {
			fd, held := fds[pid]
			switch {
			case !held:
			case fd >= 0:
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			default:
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		for _, fd := range fds {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}
}

// removeTree removes the cgroup at dir, the cgroups under it first.
func removeTree(dir string, depth int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if depth < maxDepth {
		for _, e := range entries {
			if e.IsDir() {
				if err := removeTree(filepath.Join(dir, e.Name()), depth+1); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
		}
	}
	return os.Remove(dir)
}

// members lists the processes in the cgroup at dir (not those under it), at most maxMembers.
func members(dir string) ([]int, error) {
	f, err := readfile.Open(filepath.Join(dir, "cgroup.procs"), maxMembers*8) // a pid is at most 7 digits
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for len(pids) < maxMembers && sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
