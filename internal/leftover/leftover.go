// Package leftover keeps the record of what a run made and started, and removes what a killed
// run left behind from that record alone. A run works in a directory it created itself (the lock
// file says so, by path) and records the process id and start time of every process it starts.
// A live run holds an exclusive lock on its lock file; a lock nobody holds is a dead run's.
// Clean removes a directory only if the record says persistlab created it, kills only recorded
// processes that still have their recorded start time (and their process groups) and the
// processes in the cgroups it recorded there, and unmounts only mounts inside that directory or
// of loop devices whose image lies in it.
package leftover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/internal/cgroup"
	"persistlab/internal/damon"
	"persistlab/internal/loopdev"
	"persistlab/internal/mounts"
	"persistlab/internal/proc"
)

// LockName is the lock file a run keeps in its work directory.
const LockName = "persistlab.lock"

// maxRecorded bounds the processes one record keeps (a run starts a handful per cell; beyond
// this the oldest, long gone, make room).
const maxRecorded = 4096

// maxLockBytes bounds how much of a lock file is read.
const maxLockBytes = 1 << 20

// Run is what a work directory's lock file records of the run that made it.
type Run struct {
	PID     int       `json:"pid"`
	Out     string    `json:"out"` // its results file
	Started time.Time `json:"started"`
	// Made is the directory persistlab created for the run (absolute): only then is the whole
	// directory its own to remove.
	Made string `json:"made,omitempty"`
	// Boot is the kernel's boot id: a recorded start time means nothing after a reboot.
	Boot      string    `json:"boot,omitempty"`
	Processes []Process `json:"processes,omitempty"`
}

// Process is a process a run started, by pid and start time (clock ticks after boot, from
// /proc/PID/stat) so that a pid the kernel reused is never taken for it.
type Process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Lock is a live run's hold on its work directory and its record of what it started.
type Lock struct {
	dir  string
	mu   sync.Mutex
	f    *os.File
	run  Run
	done bool
	kept bool // Release kept the lock file: something is still attached
}

// Create makes the directory path (its parent must exist; path must not) for a run and locks
// it; the record says persistlab made it.
func Create(path string, run Run) (*Lock, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(abs, 0o755); err != nil {
		return nil, err
	}
	return hold(abs, run)
}

// resolved is dir with every symlink resolved: the kernel names a loop device's image by its real
// path, and the record must name the directory as the kernel will.
func resolved(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Abs(real)
}

// CreateTemp makes a new directory in parent (the system's temporary directory if "") named
// pattern with a random suffix, as os.MkdirTemp does, and locks it.
func CreateTemp(parent, pattern string, run Run) (*Lock, error) {
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return nil, err
	}
	return hold(dir, run)
}

func hold(made string, run Run) (*Lock, error) {
	dir, err := resolved(made)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockName)
	// Only this user may write the record clean trusts (and only it may hold the lock).
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is in use by another persistlab run (lock %s)", dir, path)
	}
	run.Made, run.Boot = dir, proc.BootID()
	l := &Lock{dir: dir, f: f, run: run}
	if err := l.write(); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return l, nil
}

// Dir is the run's work directory.
func (l *Lock) Dir() string { return l.dir }

// Record adds a process the run started to the record, with its start time.
func (l *Lock) Record(pid int) {
	start, err := proc.StartTime(pid)
	if err != nil {
		return // already gone: nothing to stop later
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	if len(l.run.Processes) >= maxRecorded { // the ended make room first
		l.run.Processes = slices.DeleteFunc(l.run.Processes, func(p Process) bool {
			start, err := proc.StartTime(p.PID)
			return err != nil || start != p.Start
		})
		if len(l.run.Processes) >= maxRecorded {
			l.run.Processes = l.run.Processes[1:]
		}
	}
	l.run.Processes = append(l.run.Processes, Process{PID: pid, Start: start})
	_ = l.write()
}

// write rewrites the lock file with the record (the caller holds mu or owns l alone).
func (l *Lock) write() error {
	data, err := json.Marshal(l.run)
	if err != nil {
		return err
	}
	// Written over the old record, then cut to length: a kill between the two leaves a whole
	// record (with a tail of the old one, which JSON reading stops before), never an empty file.
	if _, err := l.f.WriteAt(append(data, '\n'), 0); err != nil {
		return err
	}
	return l.f.Truncate(int64(len(data) + 1))
}

// Release unlocks the directory. The lock file goes with it unless something of the run is
// still mounted or attached there, a cgroup recorded there is still there, or page-out policies
// it paused are still recorded there (not restored): then it stays, so that clean finds the
// directory, and Release says so (kept): the directory must not be removed.
func (l *Lock) Release() (kept bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return l.kept
	}
	l.done = true
	if len(mounts.Under(l.dir)) > 0 || len(loopdev.Under(l.dir)) > 0 || len(cgroup.Recorded(l.dir)) > 0 || pausedPageOut(l.dir) {
		l.kept = true
	} else {
		os.Remove(filepath.Join(l.dir, LockName))
	}
	l.f.Close()
	return l.kept
}

// Dead is a work directory of a run that is gone.
type Dead struct {
	Dir       string
	Run       Run      // as its lock file recorded it
	Made      bool     // persistlab created Dir: it may be removed whole
	Mounts    []string // still mounted under Dir, or of its loop devices elsewhere
	Processes []int    // recorded processes still running (with their recorded start times)
	// Strays are members of a recorded process group whose leader is gone: the group id may have
	// been reused since, so they are named, never stopped.
	Strays []int
	Loops  []string // loop devices whose backing file is under Dir (an emulated volume's)
	// Cgroups are the cgroups recorded under Dir that are still there: an instance's, an app's.
	Cgroups []string
	// PageOut are the page-out policies the run paused (run --pause-host-pageout) and did not
	// restore: Clean turns their kdamonds on again.
	PageOut []string
	lock    *os.File // held from Find until Close: no run takes the directory meanwhile
}

// Close lets go of the dead run's lock (after Clean, or when it is only described).
func (d Dead) Close() {
	if d.lock != nil {
		d.lock.Close()
	}
}

// Find lists the dead runs' work directories among dirs and the persistlab-* directories
// directly under each root and each of dirs.
func Find(roots []string, dirs []string) []Dead {
	var candidates []string
	for _, root := range append(append([]string(nil), roots...), dirs...) {
		matches, _ := filepath.Glob(filepath.Join(root, "persistlab-*"))
		candidates = append(candidates, matches...)
	}
	candidates = append(candidates, dirs...)
	var out []Dead
	seen := map[string]bool{}
	for _, dir := range candidates {
		abs, err := filepath.Abs(dir)
		if err != nil || seen[abs] {
			continue
		}
		seen[abs] = true
		if d, ok := inspect(abs); ok {
			out = append(out, d)
		}
	}
	return out
}

// Live says whether a live run holds dir's lock.
func Live(dir string) bool {
	f, err := os.Open(filepath.Join(dir, LockName))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return true
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// trusted says whether a file or directory could only have been written by this user (or root):
// not a link, owned by us, writable by no one else. A record anyone could write is no record.
func trusted(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && st.Mode()&os.ModeSymlink == 0 && st.Mode().Perm()&0o022 == 0 &&
		(int(sys.Uid) == os.Geteuid() || sys.Uid == 0)
}

// inspect says whether dir is a dead run's: its lock file is a regular file nobody holds. The
// lock stays held in the Dead it returns, until Close.
func inspect(dir string) (Dead, bool) {
	path := filepath.Join(dir, LockName)
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return Dead{}, false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return Dead{}, false
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return Dead{}, false // a live run holds it
	}
	d := Dead{Dir: dir, lock: f}
	if data, err := io.ReadAll(io.LimitReader(f, maxLockBytes)); err == nil {
		_ = json.NewDecoder(bytes.NewReader(data)).Decode(&d.Run) // a longer old record may trail it
	}
	dirSt, err1 := os.Lstat(dir)
	lockSt, err2 := f.Stat()
	d.Made = d.Run.Made == dir && err1 == nil && err2 == nil && dirSt.IsDir() && trusted(dirSt) && trusted(lockSt)
	if !d.Made {
		return d, true // an older persistlab's, or a lock file made or copied by someone else: nothing is ours to touch
	}
	for _, m := range mounts.Under(dir) {
		d.Mounts = append(d.Mounts, m.Point)
	}
	d.Processes, d.Strays = d.Run.alive()
	d.Loops = loopdev.Under(dir)
	d.Cgroups = cgroup.Recorded(dir)
	if rec, ok := damon.Recorded(dir); ok {
		d.PageOut = rec.Policies()
	}
	for _, m := range loopMounts(d.Loops) { // a volume mounted outside the work dir (lab volume --mount)
		if !strings.HasPrefix(m.Point, dir+"/") {
			d.Mounts = append(d.Mounts, m.Point)
		}
	}
	return d, true
}

// alive lists the recorded processes still running as themselves, and the members of their
// process groups while the group's leader is still the recorded process. A pid now held by a
// process with another start time was reused: neither it nor its group is ours. Members of a
// group whose leader has ended are strays: the group id may be another's by now.
func (r Run) alive() (pids, strays []int) {
	if len(r.Processes) == 0 || r.Boot == "" || r.Boot != proc.BootID() {
		return nil, nil
	}
	leaders := map[int]bool{}  // recorded and still itself
	orphaned := map[int]bool{} // recorded, ended: its group's members are not to be trusted
	starts := map[int]uint64{}
	for _, p := range r.Processes {
		start, err := proc.StartTime(p.PID)
		switch {
		case err == nil && start == p.Start:
			leaders[p.PID], starts[p.PID] = true, p.Start
		case err != nil:
			orphaned[p.PID], starts[p.PID] = true, p.Start
		}
	}
	for _, id := range proc.All() {
		if id.PID == os.Getpid() {
			continue
		}
		switch {
		case leaders[id.PID]:
			pids = append(pids, id.PID)
		case leaders[id.Group] && id.Start >= starts[id.Group]:
			pids = append(pids, id.PID)
		case orphaned[id.Group] && id.Start >= starts[id.Group]:
			strays = append(strays, id.PID)
		}
	}
	return pids, strays
}

// Clean stops the dead run's recorded processes (SIGKILL by pid), detaches its mounts and loop
// devices, stops what is in its recorded cgroups (SIGKILL: every process there is one the run
// started, or one of theirs) and removes them, turns on again the kdamonds the run paused
// (damon.Restore), and removes its work directory: only when persistlab made that directory.
func (d Dead) Clean() error {
	if !d.Made {
		return fmt.Errorf("%s: its lock file does not say persistlab made this directory (an older persistlab's run?): nothing removed; remove %s yourself once nothing uses it", d.Dir, LockName)
	}
	var errs []error
	if _, err := damon.Restore(d.Dir); err != nil { // first: the machine's own policy, whatever else fails
		errs = append(errs, err)
	}
	d.Processes, d.Strays = d.Run.alive() // again: time has passed since Find
	for _, pid := range d.Processes {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill %d: %w", pid, err))
		}
	}
	// File systems first (an emulated volume's sits on a loop device over a FUSE file), then the
	// loop devices, found before any unmount since a detached FUSE mount hides their paths, then
	// FUSE mounts; deepest first within each.
	unmount := func(fuse bool) {
		for _, m := range mounts.Under(d.Dir) {
			if strings.HasPrefix(m.Type, "fuse") != fuse {
				continue
			}
			var err error
			if fuse {
				err = mounts.Detach(m.Point)
			} else {
				_, err = proc.Run(context.Background(), "umount", "-l", m.Point)
			}
			if err != nil && mounts.Mounted(m.Point) {
				errs = append(errs, err)
			}
		}
	}
	unmount(false)
	for _, m := range loopMounts(d.Loops) {
		if _, err := proc.Run(context.Background(), "umount", "-l", m.Point); err != nil && mounts.Mounted(m.Point) {
			errs = append(errs, err)
		}
	}
	for _, dev := range d.Loops {
		if err := loopdev.Detach(dev, d.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	unmount(true)
	for _, cg := range cgroup.Recorded(d.Dir) { // an instance's memory or cpu cgroup, an app's
		if err := cgroup.Remove(cg); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if left := mounts.Under(d.Dir); len(left) > 0 {
		return fmt.Errorf("%s still has %d mounts; not removed", d.Dir, len(left))
	}
	return os.RemoveAll(d.Dir)
}

// loopMounts are the mounts, anywhere, of the given loop devices.
func loopMounts(loops []string) []mounts.Mount {
	var out []mounts.Mount
	for _, m := range mounts.Table() {
		for _, dev := range loops {
			if m.Device == dev {
				out = append(out, m)
			}
		}
	}
	return out
}

// pausedPageOut says whether dir still records page-out policies its run paused.
func pausedPageOut(dir string) bool {
	_, ok := damon.Recorded(dir)
	return ok
}
