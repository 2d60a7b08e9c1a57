package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"persistlab/report"
	"persistlab/results"
)

// readmeBlocks are README.md's fenced blocks of one language, in order, each with the heading it
// sits under.
func readmeBlocks(t *testing.T, lang string) (blocks, headings []string) {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := ""
	var block []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case !in && strings.HasPrefix(line, "## "):
			heading = strings.TrimPrefix(line, "## ")
		case !in && line == "```"+lang:
			in, block = true, nil
		case in && line == "```":
			in = false
			blocks, headings = append(blocks, strings.Join(block, "\n")), append(headings, heading)
		case in:
			block = append(block, line)
		}
	}
	return blocks, headings
}

// Every command README.md shows runs as written, in order, in a directory laid out as a checkout
// (bin/persistlab, examples/): the own-app example verbatim on local, gcsfuse and Litestream, and
// the commands after it. `make demo` and `make test` are left out: a test cannot run the tests, and
// the demo is the make target itself.
func TestREADMECommandsRunAsWritten(t *testing.T) {
	yamls, yamlHeadings := readmeBlocks(t, "yaml")
	if len(yamls) != 1 || yamlHeadings[0] != "Your own app" {
		t.Fatalf("README.md: %d yaml blocks under %q, want the own-app scenario alone", len(yamls), yamlHeadings)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Abs("../../examples")
	for link, target := range map[string]string{"bin/persistlab": binary, "examples": examples} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "my-app.yaml"), []byte(yamls[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks, _ := readmeBlocks(t, "sh")
	var commands []string
	for _, b := range blocks {
		for _, line := range strings.Split(b, "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "make ") {
				commands = append(commands, line)
			}
		}
	}
	if len(commands) < 5 {
		t.Fatalf("README.md's commands: %q", commands)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ownApp := false
	for _, c := range commands {
		cmd := exec.CommandContext(ctx, "bash", "-c", c)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		if strings.Contains(c, "run my-app.yaml") {
			checkOwnApp(t, dir, string(out))
			ownApp = true
		}
	}
	if !ownApp {
		t.Errorf("README.md runs no my-app.yaml: %q", commands)
	}
	if left := processesUsing(dir); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

// checkOwnApp reads the own-app run's results: every cell of local, gcsfuse and Litestream
// answered, and the run said what its answer was.
func checkOwnApp(t *testing.T, dir, output string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "out", "my-app-*.json"))
	if len(files) != 1 {
		t.Fatalf("the own-app run's results: %v\n%s", files, output)
	}
	r, err := report.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusComplete || !r.Scenario.QuickRun || len(r.Cells) == 0 {
		t.Fatalf("own app: status %s, quick %v, %d cells\n%s", r.Status, r.Scenario.QuickRun, len(r.Cells), output)
	}
	ran := map[string]bool{}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("ok") == 0 {
			t.Errorf("own app: cell %d on %s: %q, %v answers", c.Index, c.Backend, c.Failure, c.M("ok"))
		}
		ran[c.Backend] = true
	}
	if !ran["local"] || !ran["gcsfuse"] || !ran["litestream"] || len(ran) != 3 {
		t.Errorf("own app ran on %v, want local, gcsfuse and litestream", ran)
	}
	if !regexp.MustCompile(`(?m)^ANSWER$`).MatchString(output) {
		t.Errorf("the own-app run printed no answer:\n%s", output)
	}
}

// README.md's advise blocks are what advise says from the results each names: its command, run with
// --no-run on the committed directory, prints the block's lines (the answer and the ranking).
func TestREADMEAdviseBlockIsWhatAdviseSays(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// Each block, and the paragraph under it, which states the exit status.
	blocks := regexp.MustCompile("(?s)<!-- advise-output begin: (docs/runs/[^ ]+) -->\n```text\n\\$ bin/persistlab (advise [^\n]+)\n(.*?)\n```\n<!-- advise-output end -->\n\n(.*?)\n\n").FindAllSubmatch(data, -1)
	if len(blocks) == 0 {
		t.Fatal("README.md holds no advise block between <!-- advise-output begin: DIR --> and <!-- advise-output end -->")
	}
	for _, m := range blocks {
		dir, want := string(m[1]), string(m[3])
		stdout := adviseAsREADMESays(t, dir, string(m[2]), string(m[4]))
		got := strings.Split(stdout, "\n")
		wantLines := strings.Split(want, "\n")
		if len(got) < len(wantLines) || strings.Join(got[:len(wantLines)], "\n") != want {
			t.Errorf("README.md's advise block of %s differs from what advise says now; its first %d lines are:\n%s", dir, len(wantLines), strings.Join(got[:min(len(got), len(wantLines))], "\n"))
		}
	}
}

// adviseAsREADMESays runs a README advise command with --no-run on the directory it names, and
// returns what it prints; the run must find every cell measured there, and said, the text beside
// the command, must state its exit status ("Exit 0").
func adviseAsREADMESays(t *testing.T, dir, command, said string) string {
	t.Helper()
	args := append(shellWords(t, command), "--dir", filepath.Join("../..", dir), "--no-run")
	stdout, stderr, err := persistlab(t, args...)
	code := exitCode(err)
	if code != 0 && code != 4 {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
	}
	if strings.Contains(stderr, "not measured") {
		t.Fatalf("%s no longer holds what advise would run (its scenarios changed): run the README's command again into a new docs/runs directory\n%s", dir, stderr)
	}
	stated := ""
	if m := regexp.MustCompile(`\b[Ee]xit (\d)\b`).FindStringSubmatch(said); m != nil {
		stated = m[1]
	}
	if stated != strconv.Itoa(code) {
		t.Errorf("README.md beside the advise command of %s states exit %q; advise exits %d:\n%s", dir, stated, code, said)
	}
	return stdout
}

// shellWords splits a command line of plain and single-quoted words.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	for _, m := range regexp.MustCompile(`'([^']*)'|(\S+)`).FindAllStringSubmatch(line, -1) {
		if m[2] != "" {
			words = append(words, m[2])
		} else {
			words = append(words, m[1])
		}
	}
	return words
}

// README.md's paragraphs that quote an advise answer in prose (each after an advise-prose marker
// naming its directory) quote what advise says from that directory: every figure with a decimal
// point and every number of three digits or more is in its output, and the exit status stated is
// its own.
func TestREADMEAdviseProseIsWhatAdviseSays(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	paragraphs := regexp.MustCompile("(?s)<!-- advise-prose: (docs/runs/[^ ]+) -->\n(.*?)\n\n").FindAllSubmatch(data, -1)
	if len(paragraphs) == 0 {
		t.Fatal("README.md holds no paragraph after <!-- advise-prose: DIR -->")
	}
	for _, m := range paragraphs {
		dir, text := string(m[1]), strings.Join(strings.Fields(string(m[2])), " ")
		command := regexp.MustCompile("`(advise [^`]+)`").FindStringSubmatch(text)
		if command == nil {
			t.Fatalf("the paragraph of %s names no `advise ...` command:\n%s", dir, text)
		}
		stdout := adviseAsREADMESays(t, dir, command[1], text)
		for _, figure := range regexp.MustCompile(`\$?\b(\d+\.\d+|[1-9]\d{2,})\b`).FindAllString(text, -1) {
			if !strings.Contains(stdout, figure) {
				t.Errorf("the paragraph of %s quotes %s, which advise does not say:\n%s", dir, figure, stdout)
			}
		}
	}
}
