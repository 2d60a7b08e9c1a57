package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"persistlab/internal/leftover"
	"persistlab/param"
	"persistlab/scenario"
)

// fioJSONDir checks and makes run --fio-json's directory: for a fio scenario, a new or empty
// directory, or one with files only with --force (the cells' files replace those of their
// names). It returns the directory's absolute path, which the cells' facts record.
func fioJSONDir(dir string, spec *scenario.Spec, force bool) (string, error) {
	if spec.Workload.Type != "fio" {
		return "", &param.FieldError{Field: "--fio-json", Value: dir, Allowed: "a fio scenario's flag (" + spec.Name + "'s workload is " + spec.Workload.Type + ", which writes no fio report)"}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--fio-json %s: %w", dir, err)
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return "", fmt.Errorf("--fio-json %s: %w", dir, err)
		}
	case err != nil:
		return "", fmt.Errorf("--fio-json %s: %w (want a directory)", dir, err)
	case len(entries) > 0 && !force:
		return "", fmt.Errorf("--fio-json %s: the directory holds %d file(s): want a new or empty directory, or --force to replace the cells' files", dir, len(entries))
	}
	return abs, nil
}

// makeWorkDir creates the run's own work directory and locks it: a new temporary directory, or
// --workdir itself when it does not exist yet, or a new directory inside --workdir when it does
// (what a directory held before the run is never persistlab's to remove).
func makeWorkDir(workDir, scenarioName string, run leftover.Run) (*leftover.Lock, error) {
	pattern := "persistlab-" + safeName(scenarioName) + "-"
	if workDir == "" {
		if tmp := os.TempDir(); strings.ContainsAny(tmp, ";#\n\r\x00") {
			return nil, fmt.Errorf("TMPDIR %q: want a path without ';', '#' or control characters (fio and MariaDB read them as the end of a value), or --workdir", tmp)
		}
		return leftover.CreateTemp("", pattern, run)
	}
	if strings.ContainsAny(workDir, ";#\n\r\x00") {
		// fio's job files and MariaDB's option files end a line's value at ';' or '#': a path
		// holding one would point them at another directory.
		return nil, fmt.Errorf("--workdir %q: want a path without ';', '#' or control characters (fio and MariaDB read them as the end of a value)", workDir)
	}
	if leftover.Live(workDir) {
		return nil, fmt.Errorf("--workdir %s is in use by another persistlab run", workDir)
	}
	if abs, err := filepath.Abs(workDir); err == nil {
		for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
			if _, err := os.Lstat(filepath.Join(dir, leftover.LockName)); err == nil {
				return nil, fmt.Errorf("--workdir %s: inside %s, another persistlab run's work directory (clean removes that whole): want a directory outside it", workDir, dir)
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	st, err := os.Stat(workDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(workDir), 0o755); err != nil {
			return nil, fmt.Errorf("--workdir %s: %w", workDir, err)
		}
		lock, err := leftover.Create(workDir, run)
		if err != nil {
			return nil, fmt.Errorf("--workdir %s: %w", workDir, err)
		}
		return lock, nil
	case err != nil:
		return nil, fmt.Errorf("--workdir %s: %w", workDir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("--workdir %s: not a directory", workDir)
	}
	lock, err := leftover.CreateTemp(workDir, pattern, run)
	if err != nil {
		return nil, fmt.Errorf("--workdir %s: %w", workDir, err)
	}
	fmt.Fprintf(os.Stderr, "persistlab: --workdir %s exists; this run works in %s\n", workDir, lock.Dir())
	return lock, nil
}

// safeName keeps a name's letters, digits, dots, dashes and underscores for a directory name.
func safeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// defaultOut is a results file no earlier run wrote: out/NAME-TIME.json, NAME the scenario's
// (safeName).
func defaultOut(name string, now time.Time) string {
	safe := strings.TrimLeft(safeName(name), ".")
	if safe == "" {
		safe = "run"
	}
	return filepath.Join("out", safe+"-"+now.UTC().Format("20060102-150405")+".json")
}
