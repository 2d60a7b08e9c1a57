package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// run refuses a results file it cannot claim before anything starts, naming the flag, and leaves
// no lock behind: an existing --out, and an existing results file of the scenario run --beside
// (refused once --out's own lock is taken).
func TestRunRefusesResultsFilesItCannotClaim(t *testing.T) {
	work := t.TempDir()
	taken, fresh := filepath.Join(work, "taken.json"), filepath.Join(work, "fresh.json")
	for _, p := range []string{taken, filepath.Join(work, "fresh.beside.json")} {
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	short := []string{"run", "cloudrun-sqlite", "--backend", "local", "--vus", "2", "--duration", "1s", "--repeat", "1", "--workdir", filepath.Join(work, "w")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", taken}, "persistlab run: --out " + taken + ": the file exists"},
		{[]string{"--out", fresh, "--beside", "cloudrun-sqlite-rails"}, "persistlab run: --beside: "},
	} {
		_, stderr, err := persistlab(t, append(short, c.args...)...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.HasPrefix(stderr, c.want) || !strings.Contains(stderr, "the file exists") {
			t.Errorf("%v: %v, stderr %q, want %q", c.args, err, stderr, c.want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(work, "*"))
	if len(left) != 2 {
		t.Errorf("the refused runs left %v", left)
	}
}
