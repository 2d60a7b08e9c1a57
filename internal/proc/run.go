package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The most of a failed command's output a CommandError keeps: its last lines, and of those at
// most the last bytes.
const (
	MaxOutputLines = 10
	MaxOutputBytes = 4 << 10
)

// MaxRunOutput bounds the output Run returns: it runs short commands whose few lines are read.
const MaxRunOutput = 1 << 20

// runWaitDelay is how long Run waits, after its command has ended, for whatever the command left
// behind holding its output to let go.
const runWaitDelay = 10 * time.Second

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
// terminal's process group) and returns its combined stdout and stderr, at most MaxRunOutput
// bytes. If it fails, the error is a *CommandError keeping the last MaxOutputLines lines of that
// output; if it printed more than MaxRunOutput, the error's cause is a *TooLongError.
func Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return RunCmd(Command(ctx, name, args...))
}

// RunCmd is Run for a command already made (with its Dir, Env or Stdin set); its Stdout and
// Stderr must be unset.
func RunCmd(cmd *exec.Cmd) ([]byte, error) {
	return RunCmdTail(cmd, MaxOutputLines)
}

// RunCmdTail is RunCmd keeping the last lines lines of the output in its error. Memory holds at
// most MaxRunOutput bytes of the output and its tail, however much the command prints.
func RunCmdTail(cmd *exec.Cmd, lines int) ([]byte, error) {
	out := NewLimitedBuffer(strings.Join(cmd.Args, " "), MaxRunOutput)
	end := NewTailWriter(tailBytes)
	both := io.MultiWriter(end, out) // neither fails: the command is read to its end
	cmd.Stdout, cmd.Stderr = both, both
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = runWaitDelay
	}
	err := cmd.Run()
	if err == nil {
		err = out.Err()
	}
	if err != nil {
		return out.Bytes(), &CommandError{Args: cmd.Args, Output: end.Tail(lines), Err: err}
	}
	return out.Bytes(), nil
}

// Output runs cmd (its Stdout and Stderr unset) and returns its stdout, at most limit bytes. If
// it fails or prints more, the error is a *CommandError keeping the end of its stderr (and, for
// too much, a *TooLongError as its cause). Memory holds at most limit bytes and that end.
func Output(cmd *exec.Cmd, limit int) ([]byte, error) {
	out, errs := NewLimitedBuffer(strings.Join(cmd.Args, " "), limit), NewTailWriter(tailBytes)
	cmd.Stdout, cmd.Stderr = out, errs
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = runWaitDelay
	}
	err := cmd.Run()
	if err == nil {
		err = out.Err()
	}
	if err != nil {
		return out.Bytes(), &CommandError{Args: cmd.Args, Output: errs.Tail(MaxOutputLines), Err: err}
	}
	return out.Bytes(), nil
}

// RunLogged runs cmd with its stdout and stderr appended to the file logPath, as long as it
// prints; its Stdout and Stderr must be unset. If it fails, the error is a *CommandError keeping
// the last lines lines of what it printed (read back from the log's end, within a bound). The
// command writes to the file itself, so nothing it prints passes through memory, and a process
// it leaves behind holding the file never keeps RunLogged waiting.
func RunLogged(cmd *exec.Cmd, logPath string, lines int) error {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: log: %w", strings.Join(cmd.Args, " "), err)
	}
	defer log.Close()
	st, err := log.Stat()
	if err != nil {
		return fmt.Errorf("%s: log: %w", strings.Join(cmd.Args, " "), err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		end, tailErr := fileTail(logPath, st.Size(), lines)
		if tailErr != nil {
			end = "(its log " + logPath + " does not read: " + tailErr.Error() + ")"
		}
		return &CommandError{Args: cmd.Args, Output: end, Err: err}
	}
	return nil
}

// RunDiscarded runs cmd keeping of its output only the last lines lines for its error, in memory
// bounded whatever it prints.
func RunDiscarded(cmd *exec.Cmd, lines int) error {
	end := NewTailWriter(tailBytes)
	cmd.Stdout, cmd.Stderr = end, end
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = runWaitDelay
	}
	if err := cmd.Run(); err != nil {
		return &CommandError{Args: cmd.Args, Output: end.Tail(lines), Err: err}
	}
	return nil
}

// OutputOf is the end of the output a *CommandError in err's chain keeps, or err's text if none.
func OutputOf(err error) string {
	if ce, ok := errors.AsType[*CommandError](err); ok {
		return ce.Output
	}
	return err.Error()
}

// Tail is the end of a command's output as an error shows it: trimmed, its last lines lines
// (MaxOutputLines if lines <= 0) and of those at most the last MaxOutputBytes bytes, with "..."
// where something was cut.
func Tail(out string, lines int) string {
	return tail(out, lines, false)
}

// tail is Tail of output whose start is already cut (cut): a first line the cut left partial is
// left out, unless it is the only one.
func tail(out string, lines int, cut bool) string {
	if lines <= 0 {
		lines = MaxOutputLines
	}
	partial, mark := false, ""
	if cut {
		out = out[runeStart(out, 0):]
		partial, mark = !strings.HasPrefix(out, "\n"), "...\n"
	}
	all := strings.Split(strings.TrimSpace(out), "\n")
	if partial {
		if len(all) > 1 {
			all = all[1:]
		} else {
			mark = "..."
		}
	}
	if len(all) > lines {
		all, mark = all[len(all)-lines:], "...\n"
	}
	s := strings.Join(all, "\n")
	if len(s) > MaxOutputBytes {
		s, mark = s[runeStart(s, len(s)-MaxOutputBytes):], "..."
	}
	return mark + s
}
