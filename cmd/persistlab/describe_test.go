package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/workload"
)

// `persistlab backends` lists every backend and every option it declares, with its default.
func TestBackendsListEveryOption(t *testing.T) {
	for _, markdown := range []bool{false, true} {
		var args []string
		if markdown {
			args = []string{"--markdown"}
		}
		var b strings.Builder
		if err := cmdBackends(args, &b); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		for _, name := range backend.Names() {
			info, _ := backend.Lookup(name)
			if !strings.Contains(text, name) || !strings.Contains(text, strings.Fields(info.Description)[0]) {
				t.Errorf("markdown %v: no %s: %s", markdown, name, info.Description)
			}
			for _, p := range info.Options {
				if !strings.Contains(text, p.Name) || !strings.Contains(text, p.Default) {
					t.Errorf("markdown %v: %s lacks option %s (default %q)", markdown, name, p.Name, p.Default)
				}
			}
		}
		if markdown != strings.Contains(text, "| option | kind | default | unit | help |") {
			t.Errorf("markdown %v:\n%s", markdown, text)
		}
	}
	if err := cmdBackends([]string{"gcsfuse"}, io.Discard); err == nil {
		t.Error("an argument was taken")
	}
}

// `persistlab workloads` lists every workload with every parameter, section and metric it declares.
func TestWorkloadsListEveryParameterAndMetric(t *testing.T) {
	for _, markdown := range []bool{false, true} {
		var args []string
		if markdown {
			args = []string{"--markdown"}
		}
		var b strings.Builder
		if err := cmdWorkloads(args, &b); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		for _, name := range workload.Names() {
			info, _ := workload.Lookup(name)
			if !strings.Contains(text, name+"`: "+info.Description) && !strings.Contains(text, name+": ") {
				t.Errorf("markdown %v: no %s", markdown, name)
			}
			for _, p := range info.Params {
				if !strings.Contains(text, p.Name) {
					t.Errorf("markdown %v: %s lacks parameter %s", markdown, name, p.Name)
				}
			}
			for s := range info.Sections {
				if !strings.Contains(text, s) {
					t.Errorf("markdown %v: %s lacks section %s", markdown, name, s)
				}
			}
			for _, m := range info.Metrics {
				if !strings.Contains(text, m.Name) {
					t.Errorf("markdown %v: %s lacks metric %s", markdown, name, m.Name)
				}
			}
		}
	}
}

// The usage lists every command of the table as the table dispatches it.
func TestUsageComesFromTheCommandTable(t *testing.T) {
	cmds := commands()
	text := usage(cmds)
	seen := map[string]bool{}
	for _, c := range cmds {
		if seen[c.name] || c.run == nil || c.summary == "" {
			t.Errorf("%q: twice, or without a run func or summary", c.name)
		}
		seen[c.name] = true
		if got, rest, ok := find(cmds, append(strings.Fields(c.name), "--x")); !ok || got.name != c.name || len(rest) != 1 {
			t.Errorf("%q: dispatched to %q with %v", c.name, got.name, rest)
		}
		if line := usageLine(c); strings.Contains(text, line) == c.hidden {
			t.Errorf("%q (hidden %v): usage %q", c.name, c.hidden, text)
		}
	}
	for _, want := range []string{"persistlab backends [--markdown]", "persistlab workloads [--markdown]", "persistlab lab model"} {
		if !strings.Contains(text, want) {
			t.Errorf("usage lacks %q:\n%s", want, text)
		}
	}
	for _, args := range [][]string{{"lab"}, {"app", "nope"}, {"nope"}} {
		if c, _, ok := find(cmds, args); ok {
			t.Errorf("%v: dispatched to %q", args, c.name)
		}
	}
}

// docs/backends.md and docs/workloads.md hold the tables `persistlab backends --markdown` and
// `persistlab workloads --markdown` print, between marker comments.
func TestDocsHoldTheBackendsAndWorkloadsTables(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func([]string, io.Writer) error
	}{{"backends", cmdBackends}, {"workloads", cmdWorkloads}} {
		var b strings.Builder
		if err := c.run([]string{"--markdown"}, &b); err != nil {
			t.Fatal(err)
		}
		path := "../../docs/" + c.name + ".md"
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		command := "persistlab " + c.name + " --markdown"
		if err := checkGenerated(string(data), command, b.String()); err != nil {
			t.Errorf("docs/%s.md: %v", c.name, err)
			continue
		}
		// The same check must catch a page one cell off the code's tables.
		changed := strings.Replace(string(data), "| `", "| `x", 1)
		if checkGenerated(changed, command, b.String()) == nil {
			t.Errorf("docs/%s.md with a changed table passes the check", c.name)
		}
	}
}

// checkGenerated says whether doc holds want, the output of command, between its marker comments.
func checkGenerated(doc, command, want string) error {
	begin, end := "<!-- begin: "+command+" -->", "<!-- end: "+command+" -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		return fmt.Errorf("no markers %s and %s around the output of `%s`", begin, end, command)
	}
	if strings.TrimSpace(doc[i+len(begin):j]) != strings.TrimSpace(want) {
		return fmt.Errorf("the tables differ from the code's: paste the output of `bin/%s` between %s and %s", command, begin, end)
	}
	return nil
}
