package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plant writes an executable named name in each of dirs under root.
func plant(t *testing.T, root, name string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, name), []byte("#!/bin/sh\necho planted\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A k6 (or examples directory) planted under the working directory, or under its parents, is
// never found: only what the user named, PATH and the executable's checkout are searched.
func TestFindIgnoresTheWorkingDirectory(t *testing.T) {
	root := t.TempDir()
	plant(t, root, "k6", ".venv/bin", ".tools/bin")
	if err := os.MkdirAll(filepath.Join(root, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	wd := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	t.Setenv("PATH", "")
	t.Setenv("PERSISTLAB_TOOLS", "")
	t.Setenv("PERSISTLAB_K6", "")
	t.Setenv("PERSISTLAB_EXAMPLES", "")
	if p, err := Find("k6"); err == nil {
		t.Errorf("Find found %s under the working directory", p)
	}
	if p, err := FindDir("examples"); err == nil {
		t.Errorf("FindDir found %s under the working directory", p)
	}
	t.Chdir(root)
	if p, err := Find("k6"); err == nil {
		t.Errorf("Find found %s in the working directory", p)
	}
}

// $PERSISTLAB_TOOLS is a list of absolute directories searched in order; a relative entry, which
// would be the working directory's, is refused by name. What Find returns it records.
func TestFindLooksInPersistlabTools(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	plant(t, second, "persistlab-test-tool", ".")
	t.Setenv("PATH", "")
	t.Setenv(ToolsVariable, first+string(filepath.ListSeparator)+second)
	p, err := Find("persistlab-test-tool")
	if want := filepath.Join(second, "persistlab-test-tool"); err != nil || p != want {
		t.Fatalf("Find: %q, %v; want %s", p, err, want)
	}
	if Found()["persistlab-test-tool"] != p {
		t.Errorf("Found: %v; want the path recorded", Found())
	}
	t.Setenv(ToolsVariable, "rel/bin")
	if _, err := Find("persistlab-test-tool"); err == nil || !strings.Contains(err.Error(), `"rel/bin"`) || !strings.Contains(err.Error(), ToolsVariable) {
		t.Errorf("a relative entry: %v; want it refused by name", err)
	}
}
