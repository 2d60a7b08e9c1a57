package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/internal/leftover"
)

// The run's work directory is always one it creates: --workdir itself when new, a directory of
// its own inside --workdir when that exists, never one a live run holds; a scenario's name, which
// may hold '/' or '..', only ever names a directory inside the parent.
func TestMakeWorkDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	parent := t.TempDir()
	fresh := filepath.Join(parent, "fresh")
	lock, err := makeWorkDir(fresh, "s", leftover.Run{})
	if err != nil || lock.Dir() != fresh {
		t.Fatalf("a new --workdir: %v %v", lock, err)
	}
	if _, err := makeWorkDir(fresh, "s", leftover.Run{}); err == nil || !strings.Contains(err.Error(), "in use by another persistlab run") {
		t.Errorf("a live run's --workdir: %v", err)
	}
	lock.Release()
	inside, err := makeWorkDir(parent, "../../etc/x", leftover.Run{})
	if err != nil || filepath.Dir(inside.Dir()) != parent || !strings.HasPrefix(filepath.Base(inside.Dir()), "persistlab-.._.._etc_x-") {
		t.Fatalf("an existing --workdir: %v %v", inside, err)
	}
	inside.Release()
	temp, err := makeWorkDir("", "a/b", leftover.Run{})
	if err != nil || filepath.Dir(temp.Dir()) != os.Getenv("TMPDIR") {
		t.Fatalf("a temporary work dir: %v %v", temp, err)
	}
	temp.Release()
	// Never inside another run's directory (clean removes that whole), nor at a path fio or
	// MariaDB would cut short.
	other, err := makeWorkDir(filepath.Join(parent, "other"), "s", leftover.Run{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := makeWorkDir(filepath.Join(other.Dir(), "sub", "w"), "s", leftover.Run{}); err == nil || !strings.Contains(err.Error(), "another persistlab run's work directory") {
		t.Errorf("a --workdir inside another run's: %v", err)
	}
	other.Release()
	if _, err := makeWorkDir(filepath.Join(parent, "run#2"), "s", leftover.Run{}); err == nil || !strings.Contains(err.Error(), "';', '#'") {
		t.Errorf("a --workdir with '#': %v", err)
	}
	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := makeWorkDir(file, "s", leftover.Run{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as --workdir: %v", err)
	}
}
