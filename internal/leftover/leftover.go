// Package leftover finds and removes what a killed run left behind: its work directory, mounts
// under it (a dead gcsfuse leaves "Transport endpoint is not connected"), and processes still
// working in it. A live run holds an exclusive lock on its work directory; a directory whose lock
// nobody holds belongs to a dead run, so live runs are never touched.
package leftover

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/internal/cgroup"
	"persistlab/internal/loopdev"
	"persistlab/internal/mounts"
)

// LockName is the lock file a run keeps in its work directory.
const LockName = "persistlab.lock"

// Run is what a work directory's lock file records of the run that made it.
type Run struct {
	PID     int       `json:"pid"`
	Out     string    `json:"out"` // its results file
	Started time.Time `json:"started"`
}

// Hold locks dir for this run and records it; release unlocks and removes the lock file.
func Hold(dir string, run Run) (release func(), err error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is in use by another persistlab run (lock %s)", dir, path)
	}
	data, _ := json.Marshal(run)
	if err := f.Truncate(0); err == nil {
		f.WriteAt(data, 0)
	}
	return func() {
		os.Remove(path)
		f.Close()
	}, nil
}

// Dead is a work directory of a run that is gone.
type Dead struct {
	Dir       string
	Run       Run      // as its lock file recorded it
	Mounts    []string // still mounted under Dir
	Processes []int    // still running with Dir in their command line
	Loops     []string // loop devices whose backing file is under Dir (an emulated volume's)
}

// Find lists the dead runs' work directories among dirs and the persistlab-* directories
// directly under each root.
func Find(roots []string, dirs []string) []Dead {
	var candidates []string
	for _, root := range roots {
		matches, _ := filepath.Glob(filepath.Join(root, "persistlab-*"))
		candidates = append(candidates, matches...)
	}
	candidates = append(candidates, dirs...)
	var out []Dead
	seen := map[string]bool{}
	for _, dir := range candidates {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if d, ok := inspect(dir); ok {
			out = append(out, d)
		}
	}
	return out
}

// inspect says whether dir is a dead run's: its lock file exists and nobody holds it.
func inspect(dir string) (Dead, bool) {
	path := filepath.Join(dir, LockName)
	f, err := os.Open(path)
	if err != nil {
		return Dead{}, false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return Dead{}, false // a live run holds it
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	d := Dead{Dir: dir}
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &d.Run)
	}
	for _, m := range mounts.Under(dir) {
		d.Mounts = append(d.Mounts, m.Point)
	}
	d.Processes = processesIn(dir)
	d.Loops = loopdev.Under(dir)
	for _, m := range loopMounts(d.Loops) { // a volume mounted outside the work dir (lab volume --mount)
		if !strings.HasPrefix(m.Point, dir+"/") {
			d.Mounts = append(d.Mounts, m.Point)
		}
	}
	return d, true
}

// processesIn lists processes (not this one) whose command line names a path in dir.
func processesIn(dir string) []int {
	var pids []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, arg := range strings.Split(string(data), "\x00") {
			if arg == dir || strings.HasPrefix(arg, dir+"/") || strings.Contains(arg, "="+dir+"/") {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// Clean stops the dead run's processes (SIGKILL by pid), detaches its mounts, and removes its
// work directory.
func (d Dead) Clean() error {
	var errs []error
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
			cmd := exec.Command("umount", "-l", m.Point)
			if fuse {
				cmd = exec.Command("fusermount3", "-u", "-z", m.Point)
			}
			if out, err := cmd.CombinedOutput(); err != nil && mounts.Mounted(m.Point) {
				errs = append(errs, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(string(out))))
			}
		}
	}
	unmount(false)
	for _, m := range loopMounts(d.Loops) {
		if out, err := exec.Command("umount", "-l", m.Point).CombinedOutput(); err != nil && mounts.Mounted(m.Point) {
			errs = append(errs, fmt.Errorf("umount -l %s: %v: %s", m.Point, err, strings.TrimSpace(string(out))))
		}
	}
	for _, dev := range d.Loops {
		if err := loopdev.Detach(dev); err != nil {
			errs = append(errs, err)
		}
	}
	unmount(true)
	for _, cg := range cgroup.Recorded(d.Dir) { // an emulated instance's memory cgroup, an app's cpu cgroup
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
