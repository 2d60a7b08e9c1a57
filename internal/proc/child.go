package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Child is a process persistlab started and must stop. It runs in its own process group so that
// anything it starts is stopped with it, and gets SIGKILL if persistlab itself dies.
type Child struct {
	Name string
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start runs name with args, its stdout and stderr appended to logPath.
func Start(name string, logPath string, env []string, args ...string) (*Child, error) {
	return start(name, logPath, env, nil, args...)
}

// StartPiped runs name with args, its stderr appended to logPath and its stdout, not logged, to
// be read from the returned reader, which ends when the child and whatever it started with that
// stdout have exited. The caller closes the reader.
func StartPiped(name, logPath string, env []string, args ...string) (*Child, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	c, err := start(name, logPath, env, w, args...)
	w.Close() // the child holds its own copy
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return c, r, nil
}

// start runs a child with stderr to logPath and stdout there too, or: to an *os.File stdout
// alone, or to another stdout as well as the log.
func start(name, logPath string, env []string, stdout io.Writer, args ...string) (*Child, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stderr = log
	cmd.Stdout = log
	if f, ok := stdout.(*os.File); ok {
		cmd.Stdout = f
	} else if stdout != nil {
		cmd.Stdout = io.MultiWriter(log, stdout)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, args[0], err)
	}
	Started(cmd)
	c := &Child{Name: name, Cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		log.Close()
		close(c.done)
	}()
	return c, nil
}

// MaxMarkerLine is how much of each line of a child's stdout StartAndWaitFor searches for its
// marker and returns: the rest of a longer line is read and dropped.
const MaxMarkerLine = 64 << 10

// StartAndWaitFor starts the process and waits until a line of its stdout contains marker (in
// the line's first MaxMarkerLine bytes), returning that line (those bytes). It fails if the
// process exits first or timeout passes. Its stdout goes to logPath too and is read to its end,
// however long its lines, so the child never blocks on it.
func StartAndWaitFor(name, logPath string, env []string, marker string, timeout time.Duration, args ...string) (*Child, string, error) {
	finder := &markerFinder{marker: []byte(marker), found: make(chan string, 1)}
	c, err := start(name, logPath, env, finder, args...)
	if err != nil {
		return nil, "", err
	}
	select {
	case line := <-finder.found:
		return c, line, nil
	case <-c.done:
		select { // the marker's line may be the last thing it printed
		case line := <-finder.found:
			return c, line, nil
		default:
		}
		return nil, "", fmt.Errorf("%s exited before it was ready (%v); see %s", name, c.err, logPath)
	case <-time.After(timeout):
		c.Stop(context.Background())
		return nil, "", fmt.Errorf("%s not ready after %v; see %s", name, timeout, logPath)
	}
}

// markerFinder is written a child's stdout and sends the first line holding marker on found.
// It holds at most MaxMarkerLine bytes of a line, and never fails a write.
type markerFinder struct {
	marker []byte
	found  chan string // buffered: one line
	line   []byte      // the current line's first bytes
	done   bool
}

func (f *markerFinder) Write(p []byte) (int, error) {
	n := len(p)
	for !f.done && len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		part := p
		if end >= 0 {
			part = p[:end]
		}
		if room := MaxMarkerLine - len(f.line); room > 0 {
			f.line = append(f.line, part[:min(room, len(part))]...)
		}
		if end < 0 {
			break
		}
		if bytes.Contains(f.line, f.marker) {
			f.found <- string(f.line)
			f.done, f.line = true, nil
			break
		}
		f.line, p = f.line[:0], p[end+1:]
	}
	return n, nil
}

// Pid is the child's process id.
func (c *Child) Pid() int { return c.Cmd.Process.Pid }

// Exited reports whether the process has ended.
func (c *Child) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Done is closed when the process has ended.
func (c *Child) Done() <-chan struct{} { return c.done }

// Stop sends SIGTERM to the child's process group, waits up to 10 s (or until ctx ends), then
// sends SIGKILL. It is safe to call more than once.
func (c *Child) Stop(ctx context.Context) error {
	if c.Exited() {
		return nil
	}
	pgid := c.Pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	grace, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	select {
	case <-c.done:
		return nil
	case <-grace.Done():
	}
	return c.Kill()
}

// SignalKill sends SIGKILL to the child's process group without waiting: a process blocked in a
// FUSE call cannot exit until its file system daemon is gone, so crash runs kill both first and
// wait afterwards.
func (c *Child) SignalKill() {
	if !c.Exited() {
		_ = syscall.Kill(-c.Pid(), syscall.SIGKILL)
	}
}

// Kill sends SIGKILL to the child's process group and waits for the child.
func (c *Child) Kill() error {
	if c.Exited() {
		return nil
	}
	if err := syscall.Kill(-c.Pid(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", c.Name, c.Pid(), err)
	}
	<-c.done
	return nil
}
