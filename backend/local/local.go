// Package local keeps the data in a directory on local disk: the reference every other backend is
// compared with, and what a Cloud Run instance's own (ephemeral) disk gives.
package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"persistlab/backend"
	"persistlab/param"
)

// Name is the backend's name in scenarios.
const Name = "local"

// The optional capabilities the runner finds by type assertion, checked at compile time.
var (
	_ backend.Crasher = (*Backend)(nil)
)

// Options are the backend's options.
var Options = []param.Param{
	{Name: "dir", Kind: param.KindString, Help: "an existing directory whose file system holds the data (a directory is made in it for each cell); unset: the run's work directory"},
}

func init() {
	backend.RegisterInfo(backend.Info{Name: Name, Description: "a directory on local disk: the reference every other backend is compared with, and a Cloud Run instance's own (ephemeral) disk",
		Options: Options, New: New,
		NoModel: func(map[string]string) string { return "no cloud model: this machine's own disk, the reference" }})
}

// Backend is a directory on local disk.
type Backend struct {
	dir  string // persistlab makes it, and removes it on Stop unless kept
	keep bool
}

// New takes option "dir": use this existing directory's file system (a subdirectory is made in it).
func New(env backend.Env) (backend.Backend, error) {
	var s struct {
		Dir string `param:"dir"`
	}
	if err := param.Decode(Options, env.Options, &s); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	l := &Backend{dir: filepath.Join(env.WorkDir, "data"), keep: env.Keep}
	if d := s.Dir; d != "" {
		if strings.ContainsAny(d, ";#") || strings.ContainsFunc(d, unicode.IsControl) {
			// fio's job files and MariaDB's option files end a value at ';' or '#'.
			return nil, fmt.Errorf("backend %q: option dir %q: want a path without ';', '#' or control characters (fio and MariaDB would read a shorter one)", Name, d)
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("backend %q: option dir %q: want an existing directory", Name, d)
		}
		l.dir = filepath.Join(d, "persistlab-"+filepath.Base(env.WorkDir))
	}
	return l, nil
}

// Name implements backend.Backend.
func (l *Backend) Name() string { return Name }

// Start makes a fresh, empty directory.
func (l *Backend) Start(context.Context) (backend.Target, error) {
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
	}
	return backend.Target{Dir: l.dir}, nil
}

// Stats implements backend.Backend: a local disk counts nothing of its own.
func (l *Backend) Stats() backend.Stats { return nil }

// Stop removes the directory.
func (l *Backend) Stop(context.Context) error {
	if l.keep {
		return nil
	}
	return os.RemoveAll(l.dir)
}

// Versions implements backend.Backend.
func (l *Backend) Versions() map[string]string { return nil }

// Crash throws the directory away: a lost instance's local disk keeps nothing.
func (l *Backend) Crash() error { return os.RemoveAll(l.dir) }

// Recover makes a new, empty directory: there is nothing to recover from.
func (l *Backend) Recover(ctx context.Context) (backend.Target, error) { return l.Start(ctx) }
