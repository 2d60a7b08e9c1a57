package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OutPath checks where a run may write its results before any cell runs, and returns the path to
// write: a symlink is followed to its target; a device, FIFO, socket or directory is refused (the
// file is replaced by renaming a new one over it); an existing results file is refused unless
// force, so an early Ctrl-C cannot destroy a complete earlier result.
func OutPath(path string, force bool) (string, error) {
	return OutputPath("--out", path, force)
}

// OutputPath is OutPath for any output a flag names (--html, --csv): one rule for all outputs.
func OutputPath(flag, path string, force bool) (string, error) {
	if path == "" {
		return "", fmt.Errorf(`%s "": want a file path`, flag)
	}
	resolved := path
	for i := 0; i < 40; i++ { // a link to a file not yet written is followed too
		st, err := os.Lstat(resolved)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(resolved)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", flag, path, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(resolved), target)
		}
		resolved = target
	}
	if abs, err := filepath.Abs(resolved); err == nil {
		resolved = abs // recorded for persistlab clean, which runs from anywhere
	}
	st, err := os.Stat(resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if dir := filepath.Dir(resolved); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", fmt.Errorf("%s %s: %w", flag, path, err)
			}
		}
		return resolved, nil
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", flag, path, err)
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%s %s: %s is not a regular file (%s): want a new path or a file to replace", flag, path, resolved, st.Mode().Type())
	case !force:
		return "", fmt.Errorf("%s %s: the file exists: want a new path, or --force to replace it", flag, path)
	}
	return resolved, nil
}

// Lock takes an exclusive lock named after path (PATH.lock beside it) so two runs cannot write one
// results file or share one work directory; unlock releases and removes it.
func Lock(path string) (unlock func(), err error) {
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is in use by another persistlab run (lock %s)", path, lockPath)
	}
	return func() {
		os.Remove(lockPath)
		f.Close()
	}, nil
}
