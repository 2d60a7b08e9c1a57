package fio

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestClientsOnTwoLoopbackServers(t *testing.T) {
	bin, logs, work := fioBin(t), t.TempDir(), t.TempDir()
	var servers []*Server
	var addrs []string
	for i := range 2 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		s, err := StartServer(context.Background(), bin, port, filepath.Join(logs, "server"+strconv.Itoa(i)+".log"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop(context.Background())
		servers, addrs = append(servers, s), append(addrs, s.Addr())
	}

	job := Job{Name: "s", Directory: t.TempDir(), RW: "randwrite", BS: 4096, Size: 1 << 20, NumJobs: 2, IODepth: 1}
	out, raw, err := RunClients(context.Background(), bin, job, work, addrs)
	if err != nil {
		t.Fatal(err)
	}
	sameAsFioOutput(t, "clients", out, raw)
	if len(out.Clients) != 2 || out.AllClients == nil {
		t.Fatalf("%d clients, fio's sum present %v; want 2 and fio's sum", len(out.Clients), out.AllClients != nil)
	}
	var totals []JobResult
	for _, c := range out.Clients {
		if addr := net.JoinHostPort(c.Hostname, strconv.Itoa(c.Port)); addr != addrs[0] && addr != addrs[1] {
			t.Errorf("client %s is neither server %v", addr, addrs)
		}
		if len(c.Jobs) != job.NumJobs || c.Total.Write.IOBytes != int64(job.NumJobs)*job.Size {
			t.Errorf("server %d: %d jobs, %d bytes; want %d jobs of %d bytes", c.Port, len(c.Jobs), c.Total.Write.IOBytes, job.NumJobs, job.Size)
		}
		totals = append(totals, c.Total)
	}
	sumsJobs(t, "over servers", out.Aggregate, totals)
	sameAsAllClients(t, out)

	for _, s := range servers {
		for range 2 {
			if err := s.Stop(context.Background()); err != nil {
				t.Errorf("stop server %d: %v", s.Port, err)
			}
		}
	}
	for _, s := range servers {
		if err := syscall.Kill(s.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("server pid %d after Stop: %v; want no such process", s.Pid(), err)
		}
		if left := processes("--server=ip:127.0.0.1," + strconv.Itoa(s.Port)); len(left) > 0 {
			t.Errorf("processes left after Stop: %q", left)
		}
	}
	if left := processes(work); len(left) > 0 {
		t.Errorf("processes left after the run: %q", left)
	}
}

func TestServerAndClientRefusals(t *testing.T) {
	bin := fioBin(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		port int
		says string
	}{{0, "1..65535"}, {65536, "1..65535"}, {busy.Addr().(*net.TCPAddr).Port, "want a free port"}} {
		if s, err := StartServer(context.Background(), bin, c.port, filepath.Join(t.TempDir(), "log")); err == nil {
			s.Stop(context.Background())
			t.Errorf("port %d: started", c.port)
		} else if !strings.Contains(err.Error(), c.says) {
			t.Errorf("port %d: %v; want an error saying %q", c.port, err, c.says)
		}
	}

	job := Job{Name: "r", Directory: t.TempDir(), RW: "read", BS: 4096, Size: 1 << 20, NumJobs: 1, IODepth: 1}
	for _, c := range []struct {
		servers []string
		says    string
	}{
		{nil, "no servers"},
		{[]string{"10.0.0.1:8765"}, "IPv4 loopback"},
		{[]string{"localhost:8765"}, "IPv4 loopback"},
		{[]string{"[::1]:8765"}, "IPv4 loopback"},
		{[]string{"127.0.0.1"}, "127.0.0.1:PORT"},
		{[]string{"127.0.0.1:0"}, "port 1..65535"},
		{[]string{"127.0.0.1:8765", "127.0.0.1:8765"}, "listed twice"},
		{[]string{"127.0.0.1:1"}, "failed to connect to 127.0.0.1:1"}, // fio's own words: nobody listens
	} {
		_, _, err := RunClients(context.Background(), bin, job, t.TempDir(), c.servers)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("servers %q: %v; want an error saying %q", c.servers, err, c.says)
		}
	}
}

func TestCancelledClientEndsServerJobs(t *testing.T) {
	bin := fioBin(t)
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartServer(context.Background(), bin, port, filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	job := Job{Name: "x", Directory: t.TempDir(), RW: "write", BS: 4096, Size: 1 << 20, NumJobs: 2, IODepth: 1,
		Runtime: time.Hour, TimeBased: true, Extra: [][2]string{{"rate_iops", "20"}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { _, _, err := RunClients(ctx, bin, job, t.TempDir(), []string{s.Addr()}); errc <- err }()
	server := "--server=ip:127.0.0.1," + strconv.Itoa(port)
	// The server, its connection process, its backend and the two job processes.
	for len(processes(server)) < 5 {
		select {
		case err := <-errc:
			t.Fatalf("client ended before it was cancelled: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	// fio's job processes are the ones in sessions of their own (fio calls setsid() in each, a
	// moment after it forks them).
	var tree, jobs map[int]proc
	for deadline := time.Now().Add(60 * time.Second); len(jobs) < job.NumJobs && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tree, jobs = map[int]proc{}, map[int]proc{}
		grow(tree, s.Pid())
		for pid, p := range tree {
			if sid, err := unix.Getsid(pid); err == nil && sid == pid {
				jobs[pid] = p
			}
		}
	}
	if len(jobs) != job.NumJobs {
		t.Fatalf("%d job processes under the server; want %d", len(jobs), job.NumJobs)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled client: %v; want context.Canceled", err)
	}
	// Without its client the server ends the jobs (fio's runtime would end them only after an hour).
	for deadline := time.Now().Add(60 * time.Second); len(live(jobs)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job processes %v still alive 60 s after their client was cancelled", live(jobs))
		}
	}
	if err := s.Stop(context.Background()); err != nil || len(live(tree)) > 0 {
		t.Errorf("stop: %v; alive after: %v", err, live(tree))
	}
}
