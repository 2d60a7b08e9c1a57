// Package tools finds the real programs persistlab drives (gcsfuse, Litestream, fio, ...): on
// PATH, or where scripts/setup installs them beside the persistlab binary's checkout.
package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// installDirs are where scripts/setup puts programs, relative to the checkout.
var installDirs = []string{".tools/bin", ".venv/bin"}

// Find returns the path of program: $PERSISTLAB_<NAME> if set, then PATH, then the checkout's
// install directories (found from the executable's and the working directory's parents).
func Find(program string) (string, error) {
	env := "PERSISTLAB_" + strings.ToUpper(program)
	if p := os.Getenv(env); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", fmt.Errorf("%s=%q: not an executable file", env, p)
		}
		return p, nil
	}
	if p, err := exec.LookPath(program); err == nil {
		return p, nil
	}
	for _, root := range checkoutRoots() {
		for _, d := range installDirs {
			p := filepath.Join(root, d, program)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s not found on PATH or in .tools/bin or .venv/bin (run scripts/setup, or set %s)", program, env)
}

// FindDir returns the checkout's directory rel (examples, say), found as Find finds the install
// directories: from the executable's and the working directory's parents.
func FindDir(rel string) (string, error) {
	for _, root := range checkoutRoots() {
		p := filepath.Join(root, rel)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("%s not found beside persistlab's executable or the working directory (a checkout of persistlab has it)", rel)
}

// checkoutRoots are where a persistlab checkout may be: the executable's and the working
// directory's parents.
func checkoutRoots() []string {
	var roots []string
	if exe, err := os.Executable(); err == nil {
		roots = append(roots, ancestors(filepath.Dir(exe))...)
	}
	if wd, err := os.Getwd(); err == nil {
		roots = append(roots, ancestors(wd)...)
	}
	return roots
}

func ancestors(dir string) []string {
	var out []string
	for i := 0; i < 4; i++ {
		out = append(out, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return out
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
