package main

import (
	"regexp"
	"strings"
	"testing"
)

// Every command, subcommand and group answers -h and --help on standard output with its usage,
// flags, examples and exit statuses, and exits 0; nothing goes to standard error.
func TestEveryCommandHasHelp(t *testing.T) {
	var invocations [][]string
	groups := map[string]bool{}
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		words := strings.Fields(c.name)
		invocations = append(invocations, words)
		if len(words) > 1 && !groups[words[0]] {
			groups[words[0]] = true
			invocations = append(invocations, words[:1])
		}
	}
	invocations = append(invocations, []string{"scenarios", "show"})
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	for _, words := range invocations {
		for _, h := range []string{"-h", "--help"} {
			name := strings.Join(words, " ")
			stdout, stderr, err := persistlab(t, append(append([]string{}, words...), h)...)
			if err != nil || stderr != "" {
				t.Errorf("%s %s: %v, stderr %q", name, h, err, stderr)
				continue
			}
			if !strings.HasPrefix(stdout, "usage: persistlab "+words[0]) {
				t.Errorf("%s %s: stdout begins %q", name, h, firstLine(stdout))
			}
			if !groups[name] && !strings.Contains(stdout, "\nexit status:\n  0  ") {
				t.Errorf("%s %s: no exit statuses in\n%s", name, h, stdout)
			}
			for _, m := range flagLine.FindAllStringSubmatch(stdout, -1) {
				if strings.Contains(m[1], "_") {
					t.Errorf("%s: flag -%s: flags are kebab-case", name, m[1])
				}
			}
			for _, line := range strings.Split(stdout, "\n") {
				if e, ok := strings.CutPrefix(line, "  persistlab "); ok && !groups[name] && !strings.HasPrefix(e, words[0]) {
					t.Errorf("%s: an example of another command: %s", name, line)
				}
			}
		}
	}
}

// A flag the command does not know is a mistake on standard error, which says where the flags are.
func TestAFlagMistakeGoesToStandardError(t *testing.T) {
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--bogus")
	if err == nil || stdout != "" {
		t.Fatalf("err %v, stdout %q", err, stdout)
	}
	if !strings.Contains(stderr, "-bogus") || !strings.Contains(stderr, "persistlab run -h") {
		t.Errorf("stderr %q", stderr)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
