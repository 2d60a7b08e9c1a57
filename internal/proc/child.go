package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
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

// StartAndWaitFor starts the process and waits until a line of its stdout contains marker,
// returning that line. It fails if the process exits first or timeout passes.
func StartAndWaitFor(name, logPath string, env []string, marker string, timeout time.Duration, args ...string) (*Child, string, error) {
	pr, pw := io.Pipe()
	c, err := start(name, logPath, env, pw, args...)
	if err != nil {
		return nil, "", err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), marker) {
				select {
				case found <- sc.Text():
				default:
				}
			}
		}
	}()
	go func() { <-c.done; pw.Close() }()
	select {
	case line := <-found:
		go io.Copy(io.Discard, pr) // keep draining so the child never blocks on stdout
		return c, line, nil
	case <-c.done:
		return nil, "", fmt.Errorf("%s exited before it was ready (%v); see %s", name, c.err, logPath)
	case <-time.After(timeout):
		c.Stop(context.Background())
		return nil, "", fmt.Errorf("%s not ready after %v; see %s", name, timeout, logPath)
	}
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
