// Package tools finds the real programs persistlab drives (gcsfuse, Litestream, k6, ...): where
// the user said, on PATH, or where scripts/setup installs them beside the persistlab binary's
// checkout; never in the working directory, which may be anyone's.
package tools

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// installDirs are where scripts/setup puts programs, relative to the checkout.
var installDirs = []string{".tools/bin", ".venv/bin"}

// ToolsVariable names directories to look in before PATH, a list like PATH's (every entry
// absolute): the Makefile and the tests' helper (toolstest) set it to the checkout's install
// directories.
const ToolsVariable = "PERSISTLAB_TOOLS"

// Find returns the path of program and records it (Found): $PERSISTLAB_<NAME> if set, then the
// directories of $PERSISTLAB_TOOLS, then PATH, then the install directories beside persistlab's
// executable (its directory's and its parent's: bin/persistlab in a checkout finds the
// checkout's .tools/bin and .venv/bin).
func Find(program string) (string, error) {
	p, err := find(program)
	if err == nil {
		foundMu.Lock()
		found[program] = p
		foundMu.Unlock()
	}
	return p, err
}

func find(program string) (string, error) {
	env := "PERSISTLAB_" + strings.ToUpper(program)
	if p := os.Getenv(env); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", fmt.Errorf("%s=%q: not an executable file", env, p)
		}
		return filepath.Abs(p)
	}
	dirs, err := toolDirs()
	if err != nil {
		return "", err
	}
	if p := executableIn(dirs, program); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath(program); err == nil {
		return p, nil
	}
	var beside []string
	for _, root := range besideExecutable() {
		for _, d := range installDirs {
			beside = append(beside, filepath.Join(root, d))
		}
	}
	if p := executableIn(beside, program); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s not found in $%s, on PATH or in .tools/bin or .venv/bin beside persistlab's executable (run scripts/setup; or set %s, or %s to the checkout's .tools/bin:.venv/bin)",
		program, ToolsVariable, env, ToolsVariable)
}

// toolDirs are the directories of $PERSISTLAB_TOOLS; a relative one would depend on the working
// directory, and is refused.
func toolDirs() ([]string, error) {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv(ToolsVariable)) {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%s entry %q: not an absolute directory (a relative one would be looked up in the working directory)", ToolsVariable, d)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// executableIn is the first executable file named program in dirs, or "".
func executableIn(dirs []string, program string) string {
	for _, d := range dirs {
		p := filepath.Join(d, program)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// FindDir returns the checkout's directory rel (examples, say): $PERSISTLAB_<REL> if set, else
// rel beside persistlab's executable (in its directory or its parent), never in the working
// directory.
func FindDir(rel string) (string, error) {
	env := "PERSISTLAB_" + strings.ToUpper(rel)
	if p := os.Getenv(env); p != "" {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%s=%q: not a directory", env, p)
		}
		return filepath.Abs(p)
	}
	for _, root := range besideExecutable() {
		p := filepath.Join(root, rel)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found beside persistlab's executable (a checkout of persistlab has it; or set %s)", rel, env)
}

// besideExecutable are where a checkout holding persistlab's executable may be: the
// executable's directory and its parent (bin/persistlab).
func besideExecutable() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	dir := filepath.Dir(exe)
	return []string{dir, filepath.Dir(dir)}
}

var (
	foundMu sync.Mutex
	found   = map[string]string{}
)

// Found is each program Find has found in this process, by name: the paths a results file
// records beside their versions.
func Found() map[string]string {
	foundMu.Lock()
	defer foundMu.Unlock()
	return maps.Clone(found)
}

// Pinned prefixes argv with taskset so the program and all its threads run on cpus.
func Pinned(cpus []int, argv ...string) []string {
	if len(cpus) == 0 {
		return argv
	}
	list := make([]string, len(cpus))
	for i, c := range cpus {
		list[i] = strconv.Itoa(c)
	}
	return append([]string{"taskset", "-c", strings.Join(list, ",")}, argv...)
}

// EnvWithout returns the environment without the named variables.
func EnvWithout(names ...string) []string {
	var out []string
next:
	for _, kv := range os.Environ() {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
