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

func listen(t *testing.T) (net.Listener, int) {
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
	return ln, ln.Addr().(*net.TCPAddr).Port
}

// connect runs bash confined to allowed, opening a TCP connection to port after a pause (the
// child must outlive the moment Start returns, its parent-death signal armed).
func connect(t *testing.T, allowed, port int) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "sleep 0.2; exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	wait, err := Start(cmd, allowed)
	if err != nil {
		t.Fatal(err)
	}
	err = wait()
	return out.String(), err
}

// A confined child connects to the port it was allowed and to no other; persistlab itself, and
// a child started after it, stay free.
func TestAChildConnectsOnlyWhereAllowed(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	_, app := listen(t)
	_, other := listen(t)
	if out, err := connect(t, app, app); err != nil {
		t.Errorf("to the allowed port: %v %s", err, out)
	}
	if out, err := connect(t, app, other); err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("to another port: %v %q; want it refused", err, out)
	}
	for i := 0; i < 20; i++ { // on whatever threads the runtime has: none is confined
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(other), 10*time.Second)
		if err != nil {
			t.Fatalf("persistlab itself: %v", err)
		}
		c.Close()
	}
	if out, err := exec.Command("bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(other)).CombinedOutput(); err != nil {
		t.Errorf("an unconfined child: %v %s", err, out)
	}
}

// Ports are checked before anything starts.
func TestBadPortsAreRefused(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	for _, ports := range [][]int{nil, {0}, {65536}} {
		if _, err := Start(exec.Command("true"), ports...); err == nil {
			t.Errorf("ports %v: started", ports)
		}
	}
}
