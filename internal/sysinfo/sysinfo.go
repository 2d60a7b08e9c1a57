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
	"strconv"
	"strings"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"
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
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "unknown"
	}
	best, desc := -1, "unknown"
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		mp := unescapeMount(f[1])
		if (abs == mp || strings.HasPrefix(abs, strings.TrimSuffix(mp, "/")+"/")) && len(mp) > best {
			best, desc = len(mp), f[2]+" on "+mp+" ("+f[0]+")"
		}
	}
	return desc
}

// unescapeMount undoes the octal escapes /proc/self/mounts uses for spaces and tabs.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Versions of persistlab itself and the SQLite it is built with.
func Versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	sqliteVersion, _, sourceID := sqlite3.Version()
	v["sqlite"] = sqliteVersion + " (" + sourceID[:min(len(sourceID), 19)] + ")"
	v["persistlab"] = "dev"
	if info, ok := debug.ReadBuildInfo(); ok {
		v["persistlab"] = info.Main.Version
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				v["persistlab"] += " " + s.Value
			}
		}
	}
	if out, err := exec.Command("git", "-C", sourceDir(), "rev-parse", "--short", "HEAD").Output(); err == nil {
		v["persistlab_commit"] = strings.TrimSpace(string(out))
	}
	return v
}

func sourceDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	return filepath.Dir(exe)
}

// ProgramVersion runs `name args...` and returns its first output line, or "" if it cannot run.
func ProgramVersion(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
