// Package cgroup makes memory cgroups that bound an emulated instance's memory, page cache
// included, so that a workload on an emulated volume reads from the volume, not from this
// machine's far larger page cache, and cpu cgroups that limit an app's CPU as a container's
// limit does, and cgroups that hold an app and everything it starts (Group). Both cgroup v1 and
// v2 are handled.
package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/lib/readfile"
)

// RecordName is the file in a work directory that names the cgroup made for it, so that
// `persistlab clean` can remove a killed run's.
const RecordName = "persistlab.cgroup"

// Memory is a memory cgroup.
type Memory struct {
	Dir string
}

// root is where memory cgroups are made, and the file that sets their limit.
func root() (dir, limitFile string, err error) {
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err == nil {
		return "/sys/fs/cgroup/memory", "memory.limit_in_bytes", nil
	}
	if data, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil && strings.Contains(string(data), "memory") {
		return "/sys/fs/cgroup", "memory.max", nil
	}
	return "", "", errors.New("no memory cgroup controller (cgroup v1 memory, or v2 with memory enabled) on this machine")
}

// NewMemory makes a memory cgroup named name holding at most limit bytes, and records it in
// workDir.
func NewMemory(name string, limit int64, workDir string) (*Memory, error) {
	base, limitFile, err := root()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", dir, err)
	}
	m := &Memory{Dir: dir}
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		m.Remove()
		return nil, fmt.Errorf("cgroup %s: limit %d: %w", dir, limit, err)
	}
	if err := os.WriteFile(filepath.Join(workDir, RecordName), []byte(dir), 0o644); err != nil {
		m.Remove()
		return nil, err
	}
	return m, nil
}

// Wrap is a command prefix that runs a program inside the cgroup: the shell moves itself into it,
// then becomes the program (same pid, so signals and process groups work as without it).
func (m *Memory) Wrap() []string { return wrap(m.Dir) }

// wrap is the command prefix that moves a program into the cgroup at dir before it runs.
func wrap(dir string) []string {
	return []string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}
}

// Remove deletes the cgroup once the processes in it are gone (it waits a little for them).
func (m *Memory) Remove() error {
	return Remove(m.Dir)
}

// Remove stops what is still in a cgroup persistlab made and deletes it (Empty), waiting up to a
// few seconds for its processes to be gone.
func Remove(dir string) error {
	return Empty(dir, 5*time.Second)
}

// ours says whether a recorded path names a cgroup persistlab makes: a persistlab-* directory
// in a controller's hierarchy, nothing that a "..", a link or a stray prefix could turn elsewhere.
func ours(path string) bool {
	if path != filepath.Clean(path) || !strings.HasPrefix(path, "/sys/fs/cgroup/") || !strings.HasPrefix(filepath.Base(path), "persistlab-") {
		return false
	}
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	var fs unix.Statfs_t
	return unix.Statfs(path, &fs) == nil && (fs.Type == unix.CGROUP_SUPER_MAGIC || fs.Type == unix.CGROUP2_SUPER_MAGIC)
}

// Recorded lists the cgroups recorded under dir (a killed run's work directory): an instance's
// memory cgroup, its cpu cgroups, its apps' cgroups. A record another user could have written
// names nothing.
func Recorded(dir string) []string {
	var found []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isRecord(d.Name()) && trustedRecord(path) {
			if data, err := readfile.Regular(path, maxRecordBytes); err == nil && ours(strings.TrimSpace(string(data))) {
				found = append(found, strings.TrimSpace(string(data)))
			}
		}
		if err == nil && d.IsDir() && path != dir && (strings.HasPrefix(d.Name(), "mnt") || d.Name() == "fuse") {
			return filepath.SkipDir // a mount point: maybe dead, and not ours to walk
		}
		return nil
	})
	return found
}

// maxRecordBytes bounds a record's size: one path.
const maxRecordBytes = 4096

func isRecord(name string) bool {
	return name == RecordName || strings.HasPrefix(name, cpuRecordName+".") || strings.HasPrefix(name, groupRecordName+".")
}

// trustedRecord says whether a record file could only have been written by this user or root:
// a regular file (not a link) that no one else may write.
func trustedRecord(path string) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o022 != 0 {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && (int(sys.Uid) == os.Geteuid() || sys.Uid == 0)
}
