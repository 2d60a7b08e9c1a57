package landlock

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func listen(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// bashConnect is a command that opens a TCP connection to port on 127.0.0.1.
func bashConnect(port int) *exec.Cmd {
	cmd := exec.Command("bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

func needLandlock(t *testing.T) {
	t.Helper()
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
}

// A confined child connects to the port it was allowed and to no other; persistlab itself, and
// a child started unconfined, stay free.
func TestAChildConnectsOnlyWhereAllowed(t *testing.T) {
	needLandlock(t)
	app, other := listen(t), listen(t)
	for _, tc := range []struct {
		port int
		ok   bool
	}{{app, true}, {other, false}} {
		cmd := bashConnect(tc.port)
		if err := Confine(cmd, app); err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		if tc.ok && err != nil || !tc.ok && (err == nil || !strings.Contains(string(out), "Permission denied")) {
			t.Errorf("port %d (allowed %d): %v %s", tc.port, app, err, out)
		}
	}
	for i := 0; i < 20; i++ { // on whatever threads the runtime has: none is confined
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(other), 10*time.Second)
		if err != nil {
			t.Fatalf("persistlab itself: %v", err)
		}
		c.Close()
	}
	if out, err := bashConnect(other).CombinedOutput(); err != nil {
		t.Errorf("an unconfined child: %v %s", err, out)
	}
}

// Confined starts end no thread of persistlab's: a child started before, with a parent-death
// signal (which a thread's end would send), keeps running.
func TestConfinedStartsLeaveOtherChildrenAlone(t *testing.T) {
	needLandlock(t)
	app := listen(t)
	sleeper := exec.Command("sleep", "60")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Wait()
	defer sleeper.Process.Kill()
	for i := 0; i < 20; i++ {
		cmd := bashConnect(app)
		if err := Confine(cmd, app); err != nil {
			t.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	if err := sleeper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the child started before: %v", err)
	}
	var status syscall.WaitStatus
	if pid, _ := syscall.Wait4(sleeper.Process.Pid, &status, syscall.WNOHANG, nil); pid != 0 {
		t.Errorf("the child started before ended: %v", status)
	}
}

// Ports are checked before anything starts.
func TestBadPortsAreRefused(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	for _, ports := range [][]int{nil, {0}, {65536}} {
		if err := Confine(exec.Command("true"), ports...); err == nil {
			t.Errorf("ports %v: accepted", ports)
		}
	}
}
