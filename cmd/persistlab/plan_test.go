package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --dry-run prints the plan, its estimate and how to shorten a long one, and exits 0 having
// made nothing: no results file, no work directory, an existing results file left as it was.
func TestRunDryRunPrintsThePlanAndRunsNothing(t *testing.T) {
	dir := t.TempDir()
	out, work := filepath.Join(dir, "r.json"), filepath.Join(dir, "work")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--dry-run", "--out", out, "--workdir", work)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if !strings.HasPrefix(lines[0], "plan: 90 cells (3 backends x 10 points x 3 repeats), about ") {
		t.Errorf("first line %q", lines[0])
	}
	for _, want := range []string{"a shorter run: --quick, the scenario's short variant (12 cells, about ", "backends gcsfuse, litestream, local; sweep vus 2..20/2", "nothing was run (--dry-run)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	for _, p := range []string{out, work} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a dry run made %s", p)
		}
	}
	// A short plan needs no advice; an existing results file is neither refused nor touched.
	if err := os.WriteFile(out, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err = persistlab(t, "run", "cloudrun-sqlite", "--quick", "--dry-run", "--out", out)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "plan: 12 cells") || strings.Contains(stdout, "a shorter run") {
		t.Errorf("quick dry run:\n%s", stdout)
	}
	if data, _ := os.ReadFile(out); string(data) != "{}" {
		t.Errorf("the dry run changed %s: %q", out, data)
	}
}

// A run says its plan and estimate on standard error before the first cell, and its tables stay
// on standard output alone.
func TestRunPrintsThePlanEstimateFirst(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "500ms", "--warmup", "0s", "--repeat", "1",
		"--out", filepath.Join(dir, "r.json"), "--workdir", filepath.Join(dir, "w"))
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if first, _, _ := strings.Cut(stderr, "\n"); !strings.HasPrefix(first, "plan: 1 cell (1 backend x 1 point x 1 repeat), about ") || !strings.Contains(first, "0.5 s of load") {
		t.Errorf("stderr opens with %q", first)
	}
	if strings.Contains(stdout, "plan:") || !strings.Contains(stdout, "backend local") {
		t.Errorf("stdout:\n%s", stdout)
	}
}
