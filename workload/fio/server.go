package fio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	iproc "persistlab/internal/proc"
)

// serverReady bounds how long a fio server may take to accept connections.
const serverReady = 30 * time.Second

// Server is a fio server (fio --server) on loopback, which runs the jobs fio clients send it.
type Server struct {
	Port int
	pid  int
	done chan struct{}
}

// StartServer runs `fio --server=ip:127.0.0.1,PORT` with its output appended to logPath and
// returns once it accepts TCP connections. It listens on loopback only: a fio server runs any job
// sent to it, as the user persistlab runs as.
func StartServer(ctx context.Context, bin string, port int, logPath string) (*Server, error) {
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("fio server port %d: want 1..65535 (FreePort finds a free one)", port)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fio server port %d: want a free port: %w", port, err)
	}
	ln.Close()
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("fio server log: %w", err)
	}
	cmd := exec.Command(bin, "--server=ip:127.0.0.1,"+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start fio server %s: %w", bin, err)
	}
	iproc.Started(cmd)
	s := &Server{Port: port, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // how it ended is in its log; Stop only needs to know that it has
		log.Close()
		close(s.done)
	}()
	if err := s.waitReady(ctx, addr); err != nil {
		_ = s.Stop(context.Background())
		return nil, fmt.Errorf("fio server on %s: %w; see %s", addr, err, logPath)
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, addr string) error {
	deadline := time.NewTimer(serverReady)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			if s.exited() {
				return errors.New("exited before it was ready (another program took the port?)")
			}
			return nil
		}
		select {
		case <-s.done:
			return errors.New("exited before it accepted connections")
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("not accepting connections after %v", serverReady)
		case <-tick.C:
		}
	}
}

// Addr is the server's address for RunClients: 127.0.0.1:PORT.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// Pid is the server's process id; it leads a process group of its own and its forks.
func (s *Server) Pid() int { return s.pid }

func (s *Server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Stop ends the server and the processes it forked, each by pid: SIGTERM, then SIGKILL after a
// grace period or when ctx ends. It returns once none of them is left, and is safe to call again.
// (A server that died on its own leaves its forks to its process group and their sessions.)
func (s *Server) Stop(ctx context.Context) error {
	if s.exited() {
		return nil
	}
	if left := stopTree(ctx, s.pid, s.done); len(left) > 0 {
		return fmt.Errorf("fio server (pid %d): processes %v still alive after SIGKILL", s.pid, left)
	}
	return nil
}

// FreePort returns a TCP port free on loopback just now, for StartServer.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free loopback port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// RunClients sends the job to every server (fio --client=ip:H,P job.fio ... for each) and returns
// the parsed report, with each server's results in Clients, and fio's raw JSON+.
//
// Each server runs the job as written, with its directory= on the server's own machine. Servers
// on one machine therefore share the job's files: fio prefixes generated file names with the
// client's address, which is the same for all of them. Cancelling ctx stops the fio client; the
// servers end the jobs they lose their client for.
func RunClients(ctx context.Context, bin string, job Job, workDir string, servers []string) (*Output, []byte, error) {
	if err := job.Validate(); err != nil {
		return nil, nil, err
	}
	if len(servers) == 0 {
		return nil, nil, errors.New("fio clients: no servers; want one or more 127.0.0.1:PORT")
	}
	seen := map[string]bool{}
	var hosts []string
	for _, s := range servers {
		host, port, err := loopback(s)
		if err != nil {
			return nil, nil, err
		}
		if seen[s] {
			return nil, nil, fmt.Errorf("fio server %q: listed twice; want each server once", s)
		}
		seen[s] = true
		hosts = append(hosts, "--client=ip:"+host+","+strconv.Itoa(port))
	}
	path, err := writeJob(job, workDir)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"--output-format=json+"}
	for _, h := range hosts {
		args = append(args, h, path)
	}
	stdout, stderr, err := runFio(ctx, bin, workDir, args...)
	return finish(fmt.Sprintf("fio job %q on %d servers", job.Name, len(servers)), stdout, stderr, err)
}

// loopback checks a server address: an IPv4 loopback address and a port.
func loopback(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	port, perr := strconv.Atoi(p)
	if err != nil || ip == nil || ip.To4() == nil || !ip.IsLoopback() || perr != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("fio server %q: want 127.0.0.1:PORT (IPv4 loopback, port 1..65535): fio servers run any job sent to them", addr)
	}
	return ip.String(), port, nil
}
