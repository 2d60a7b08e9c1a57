package proc

import (
	"context"
	"os/exec"
	"strings"
	"unicode/utf8"
)

// The most of a failed command's output a CommandError keeps: its last lines, and of those at
// most the last bytes.
const (
	MaxOutputLines = 10
	MaxOutputBytes = 4 << 10
)

// CommandError is a command that failed: its command line, the end of what it printed, and why
// it failed (an *exec.ExitError, or the error that kept it from starting). Its text is
// "losetup -d /dev/loop3: exit status 1: losetup: /dev/loop3: detach failed: ...".
type CommandError struct {
	Args   []string // the command line, program first
	Output string   // the end of its output, trimmed and bounded (Tail); "" if it printed nothing
	Err    error
}

func (e *CommandError) Error() string {
	s := strings.Join(e.Args, " ") + ": " + e.Err.Error()
	if e.Output != "" {
		s += ": " + e.Output
	}
	return s
}

func (e *CommandError) Unwrap() error { return e.Err }

// Run runs a short command (as Command makes it: it dies with persistlab and is not in the
// terminal's process group) and returns its combined stdout and stderr. If it fails, the error is
// a *CommandError keeping the last MaxOutputLines lines of that output.
func Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return RunCmd(Command(ctx, name, args...))
}

// RunCmd is Run for a command already made (with its Dir, Env or Stdin set); its Stdout and
// Stderr must be unset.
func RunCmd(cmd *exec.Cmd) ([]byte, error) {
	return RunCmdTail(cmd, MaxOutputLines)
}

// RunCmdTail is RunCmd keeping the last lines lines of the output in its error.
func RunCmdTail(cmd *exec.Cmd, lines int) ([]byte, error) {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, &CommandError{Args: cmd.Args, Output: Tail(string(out), lines), Err: err}
	}
	return out, nil
}

// Tail is the end of a command's output as an error shows it: trimmed, its last lines lines
// (MaxOutputLines if lines <= 0) and of those at most the last MaxOutputBytes bytes, with "..."
// where something was cut.
func Tail(out string, lines int) string {
	if lines <= 0 {
		lines = MaxOutputLines
	}
	s, mark := strings.TrimSpace(out), ""
	if all := strings.Split(s, "\n"); len(all) > lines {
		s, mark = strings.Join(all[len(all)-lines:], "\n"), "...\n"
	}
	if len(s) > MaxOutputBytes {
		i := len(s) - MaxOutputBytes
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		s, mark = s[i:], "..."
	}
	return mark + s
}
