// Package sysinfo describes the machine a run happened on and the versions of the components it
// used, so that a results file says how to reproduce it.
package sysinfo

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"

	"persistlab/internal/mounts"
	"persistlab/internal/proc"
)

// Machine is the hardware and operating system of a run.
type Machine struct {
	Hostname    string            `json:"hostname"`
	CPUModel    string            `json:"cpu_model"`
	Cores       int               `json:"cores"`
	MemoryBytes uint64            `json:"memory_bytes"`
	Kernel      string            `json:"kernel"`
	OS          string            `json:"os"`
	FileSystems map[string]string `json:"file_systems,omitempty"` // directory -> "fstype on mountpoint (device)"
	// PageOut: the kernel's running policies that page out idle memory (PageOutPolicies).
	PageOut []string `json:"page_out,omitempty"`
	// PageOutPaused: the page-out policies the run paused before its first cell and restored
	// after it (run --pause-host-pageout), as they read while they ran; PageOut, read once they
	// were paused, no longer lists them.
	PageOutPaused []string `json:"page_out_paused,omitempty"`
	// Programs: the path of each program persistlab found and ran (gcsfuse, k6, ...), by name,
	// beside its version in the results' versions.
	Programs map[string]string `json:"programs,omitempty"`
}

// Describe reads the machine; dirs are directories whose file systems the run depends on.
func Describe(dirs ...string) Machine {
	m := Machine{Cores: runtime.NumCPU(), FileSystems: map[string]string{}}
	m.Hostname, _ = os.Hostname()
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		m.Kernel = unix.ByteSliceToString(uts.Sysname[:]) + " " + unix.ByteSliceToString(uts.Release[:]) + " " + unix.ByteSliceToString(uts.Machine[:])
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		m.MemoryBytes = uint64(si.Totalram) * uint64(si.Unit)
	}
	m.CPUModel = firstValue("/proc/cpuinfo", "model name")
	m.OS = strings.Trim(firstValue("/etc/os-release", "PRETTY_NAME"), `"`)
	for _, d := range dirs {
		m.FileSystems[d] = FileSystemOf(d)
	}
	m.PageOut = PageOutPolicies(DamonAdmin)
	return m
}

// firstValue finds the first "key: value" or "key=value" line in a file.
func firstValue(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, sep := range []string{":", "="} { // /proc/cpuinfo uses ":", /etc/os-release "="
			if name, v, ok := strings.Cut(sc.Text(), sep); ok && strings.TrimSpace(name) == key {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}

// FileSystemOf names the file system that holds dir, from the longest matching mount point.
func FileSystemOf(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "unknown"
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	m, ok := mounts.Of(abs)
	if !ok {
		return "unknown"
	}
	return m.Type + " on " + m.Point + " (" + m.Device + ")"
}

// Versions of persistlab itself and the SQLite it is built with.
func Versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	sqliteVersion, _, sourceID := sqlite3.Version()
	v["sqlite"] = sqliteVersion + " (" + sourceID[:min(len(sourceID), 19)] + ")"
	v["persistlab"] = "dev"
	commit, dirty := buildCommit, false
	if info, ok := debug.ReadBuildInfo(); ok {
		v["persistlab"] = info.Main.Version
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v["persistlab"] += " " + s.Value
				if commit == "" {
					commit = s.Value[:min(len(s.Value), 7)]
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if commit != "" && dirty && !strings.HasSuffix(commit, "-dirty") {
		commit += "-dirty"
	}
	if commit != "" { // unstamped builds record none: the checkout a binary sits in may hold other code
		v["persistlab_commit"] = commit
	}
	return v
}

// buildCommit is the commit the binary was built from, stamped by the Makefile's build
// (-ldflags -X), as builds with -buildvcs=false carry no VCS information of their own.
var buildCommit string

// ProgramVersion runs `name args...` and returns its first output line, or "" if it cannot run.
// Only the output's first versionBytes are held: the rest is read and dropped.
func ProgramVersion(name string, args ...string) string {
	out := proc.NewLimitedBuffer(name, versionBytes)
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil && len(out.Bytes()) == 0 {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	return line
}

// versionBytes is how much of a version probe's output is held: its first line is read.
const versionBytes = 64 << 10
