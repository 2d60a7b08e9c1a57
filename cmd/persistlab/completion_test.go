package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"persistlab/scenario"
)

// completionFile writes persistlab's completion script for shell to a file of the test's own.
func completionFile(t *testing.T, shell string) string {
	t.Helper()
	stdout, stderr, err := persistlab(t, "completion", shell)
	if err != nil {
		t.Fatalf("completion %s: %v: %s", shell, err, stderr)
	}
	path := filepath.Join(t.TempDir(), "persistlab."+shell)
	if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompletionScriptsParse(t *testing.T) {
	if out, err := exec.Command("bash", "-n", completionFile(t, "bash")).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
	if _, _, err := persistlab(t, "completion", "fish"); err == nil {
		t.Error("completion fish: want a refusal naming bash and zsh")
	}
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed here: its script is not checked (it runs the bash function through zsh's bashcompinit)")
	}
	if out, err := exec.Command(zsh, "-n", completionFile(t, "zsh")).CombinedOutput(); err != nil {
		t.Errorf("zsh -n: %v\n%s", err, out)
	}
}

// complete sources the bash script and asks _persistlab to complete the last of words, in an
// empty directory (no file names among the answers).
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	cmd := exec.Command("bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _persistlab; printf '%s\n' "${COMPREPLY[@]}"`, "complete", script)
	cmd.Args = append(cmd.Args, words...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("complete %q: %v\n%s", words, err, out)
	}
	return strings.Fields(string(out))
}

func TestCompletionOfCommandsSubcommandsAndScenarios(t *testing.T) {
	script := completionFile(t, "bash")
	var cloudrun []string
	for _, name := range scenario.Builtins() {
		if strings.HasPrefix(name, "cloudrun-s") {
			cloudrun = append(cloudrun, name)
		}
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"persistlab", "ru"}, []string{"run"}},
		{[]string{"persistlab", "run", "cloudrun-s"}, cloudrun},
		{[]string{"persistlab", "scenarios", "show", "cloudrun-s"}, cloudrun},
		{[]string{"persistlab", "run", "--beside", "cloudrun-s"}, cloudrun},
		{[]string{"persistlab", "scenarios", "sh"}, []string{"show"}},
		{[]string{"persistlab", "lab", ""}, []string{"serve", "volume", "volumes", "model"}},
		{[]string{"persistlab", "app", ""}, []string{"counter", "gitcommit"}}, // not the hidden hello
		{[]string{"persistlab", "lab", "volume", "--cr"}, []string{"--credit-scale"}},
		{[]string{"persistlab", "run", "cloudrun-sqlite", "--dry"}, []string{"--dry-run"}},
		{[]string{"persistlab", "run", "--backend", "lit"}, []string{"litestream"}},
		{[]string{"persistlab", "completion", ""}, []string{"bash", "zsh"}},
		{[]string{"persistlab", "run", "--vus", ""}, nil}, // a number: no file names
	} {
		if got := complete(t, script, tc.words...); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.words, got, tc.want)
		}
	}
	if len(cloudrun) < 2 {
		t.Errorf("built-ins starting cloudrun-s: %q", cloudrun)
	}
}

// Every command's flags complete to exactly those its help lists.
func TestCompletionOffersEachCommandsHelpFlags(t *testing.T) {
	script := completionFile(t, "bash")
	invocations := [][]string{{"scenarios", "show"}}
	for _, c := range commands() {
		if !c.hidden {
			invocations = append(invocations, strings.Fields(c.name))
		}
	}
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	for _, words := range invocations {
		help, _, err := persistlab(t, append(slices.Clone(words), "-h")...)
		if err != nil {
			t.Fatalf("%q -h: %v", words, err)
		}
		want := []string{"--help"}
		for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
			want = append(want, "--"+m[1])
		}
		got := complete(t, script, append(append([]string{"persistlab"}, words...), "--")...)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s --<TAB>: got %q, help lists %q", strings.Join(words, " "), got, want)
		}
	}
}
