package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"persistlab/scenario"
)

// persistlabEnv runs the binary with COLUMNS set to columns ("" leaves it unset).
func persistlabEnv(t *testing.T, columns string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COLUMNS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if columns != "" {
		cmd.Env = append(cmd.Env, "COLUMNS="+columns)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// persistlab scenarios fits the terminal's width ($COLUMNS, else 100 off a terminal): no line is
// wider, every scenario keeps its whole name (what show takes), and show prints what the list
// abbreviates.
func TestScenariosFitTheTerminal(t *testing.T) {
	for _, columns := range []string{"", "140", "80", "60", "30"} {
		stdout, stderr, err := persistlabEnv(t, columns, "scenarios")
		if err != nil {
			t.Fatalf("COLUMNS=%s: %v: %s", columns, err, stderr)
		}
		width := 100
		if columns != "" {
			width, _ = strconv.Atoi(columns)
		}
		lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("COLUMNS=%q: a line of %d characters, over %d: %q", columns, n, width, l)
			}
		}
		if !strings.HasPrefix(lines[0], "NAME") {
			t.Errorf("COLUMNS=%q: header %q", columns, lines[0])
		}
		for _, name := range scenario.Builtins() {
			found := false
			for _, l := range lines[1:] {
				found = found || l == name || strings.HasPrefix(l, name+" ")
			}
			if !found {
				t.Errorf("COLUMNS=%q: no line for %s:\n%s", columns, name, stdout)
			}
		}
	}
	stdout, _, err := persistlabEnv(t, "", "scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "gcsfuse-cache ") || !strings.Contains(stdout, "SWEEP") || !strings.Contains(stdout, "scenarios show NAME") {
		t.Errorf("100 columns:\n%s", stdout)
	}
	full, _, err := persistlab(t, "scenarios", "show", "gcsfuse-fio")
	if err != nil || !strings.Contains(full, "read/128KiB/128KiB/0") {
		t.Errorf("show prints the sweep in full: %v\n%s", err, full)
	}
}

// A sweep reads in a few words: an axis as written when short, else its count of values.
func TestScenariosSweepSummary(t *testing.T) {
	sweep := scenario.Sweep{
		{Name: "vus", Text: "2..20/2", Values: []string{"2", "4", "6", "8", "10", "12", "14", "16", "18", "20"}},
		{Name: "rw", Text: "[read, write, randread, randwrite]", Values: []string{"read", "write", "randread", "randwrite"}},
	}
	if got := sweepSummary(sweep); got != "vus 2..20/2 x rw 4 values" {
		t.Errorf("%q", got)
	}
	if got := shorten("gcsfuse litestream litestream-0.3.13 local", 22, true); got != "gcsfuse litestream +2" {
		t.Errorf("a list shortened: %q", got)
	}
	if got := shorten("Cloud Run SQLite: GCS mount vs Litestream", 16, false); got != "Cloud Run SQL..." {
		t.Errorf("a text shortened: %q", got)
	}
}
