package proc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// A failed command's error names the command, how it ended and what it said, and keeps the cause.
func TestRunFailureSaysWhatFailed(t *testing.T) {
	out, err := Run(context.Background(), "sh", "-c", "echo fine; echo oops >&2; exit 3")
	if err == nil {
		t.Fatal("exit 3 returned no error")
	}
	if !strings.Contains(string(out), "oops") {
		t.Errorf("output %q lacks what the command printed", out)
	}
	want := "sh -c echo fine; echo oops >&2; exit 3: exit status 3: fine\noops"
	if err.Error() != want {
		t.Errorf("error %q; want %q", err, want)
	}
	var ce *CommandError
	if !errors.As(fmt.Errorf("context: %w", err), &ce) || ce.Args[0] != "sh" || ce.Output != "fine\noops" {
		t.Errorf("errors.As found %+v", ce)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("the cause is not the exit status 3: %v", err)
	}

	_, err = Run(context.Background(), "persistlab-no-such-program", "-x")
	if !errors.Is(err, exec.ErrNotFound) || !strings.HasPrefix(err.Error(), "persistlab-no-such-program -x: ") {
		t.Errorf("missing program: %v; want an error naming it and wrapping exec.ErrNotFound", err)
	}

	out, err = Run(context.Background(), "sh", "-c", "echo quiet")
	if err != nil || string(out) != "quiet\n" {
		t.Errorf("success: %q, %v", out, err)
	}
	if _, err := Run(context.Background(), "false"); err == nil || err.Error() != "false: exit status 1" {
		t.Errorf("silent failure: %v; want no trailing output part", err)
	}
}

// A command that prints a lot gives an error of its last lines, and of at most MaxOutputBytes.
func TestRunBoundsTheOutput(t *testing.T) {
	_, err := Run(context.Background(), "sh", "-c", "seq 1 100000; exit 1")
	var ce *CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("%v", err)
	}
	lines := strings.Split(ce.Output, "\n")
	if len(lines) != MaxOutputLines+1 || lines[0] != "..." || lines[len(lines)-1] != "100000" {
		t.Errorf("output %q; want ... and the last %d lines", ce.Output, MaxOutputLines)
	}

	_, err = RunCmdTail(exec.Command("sh", "-c", "seq 1 50; exit 1"), 3)
	if !errors.As(err, &ce) || ce.Output != "...\n48\n49\n50" {
		t.Errorf("3 lines: %q", ce.Output)
	}

	_, err = Run(context.Background(), "sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; exit 1")
	if !errors.As(err, &ce) || len(ce.Output) != MaxOutputBytes+3 || !strings.HasPrefix(ce.Output, "...x") {
		t.Errorf("one long line: %d bytes, starting %.10q", len(ce.Output), ce.Output)
	}
	if len(err.Error()) > MaxOutputBytes+200 {
		t.Errorf("error text is %d bytes", len(err.Error()))
	}
}

func TestTail(t *testing.T) {
	for _, c := range []struct {
		in    string
		lines int
		want  string
	}{
		{"  one\n", 3, "one"},
		{"a\nb\nc", 3, "a\nb\nc"},
		{"a\nb\nc\nd\n", 2, "...\nc\nd"},
		{"", 3, ""},
		{"é" + strings.Repeat("é", MaxOutputBytes/2), 0, "..." + strings.Repeat("é", MaxOutputBytes/2)},
	} {
		if got := Tail(c.in, c.lines); got != c.want {
			t.Errorf("Tail(%.20q, %d) = %.20q; want %.20q", c.in, c.lines, got, c.want)
		}
	}
}
