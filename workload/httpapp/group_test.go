package httpapp

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/scenario"
	"persistlab/workload"
)

// startIn is start with the cell's directory given, to look at what is recorded there.
func startIn(t *testing.T, cellDir string, sections map[string]any, set map[string]string) (workload.Instance, error) {
	t.Helper()
	w, err := New(scenario.Workload{Type: Name, Sections: sections})
	if err != nil {
		t.Fatal(err)
	}
	p := workload.Resolve(Params, set, nil)
	return w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir()}, CellDir: cellDir, Params: p})
}

// pidIn waits for the pid a test app writes to path, with the process's start time.
func pidIn(t *testing.T, path string) (pid int, start uint64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(path)
		if text := strings.TrimSpace(string(data)); strings.HasSuffix(string(data), "\n") {
			if pid, err := strconv.Atoi(text); err == nil {
				start, err := proc.StartTime(pid)
				if err != nil {
					t.Fatalf("pid %d (from %s) already gone: %v", pid, path, err)
				}
				return pid, start
			}
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0, 0
}

// alive says whether the process that had start time start still runs (not a zombie).
func alive(pid int, start uint64) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	now, err := proc.StartTime(pid)
	return err == nil && now == start && len(fields) > 0 && fields[0] != "Z"
}

func procCgroups(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	return string(data)
}

// killAtCleanup makes sure the test leaves the process behind in no case.
func killAtCleanup(t *testing.T, pid int, start uint64) {
	t.Cleanup(func() {
		if alive(pid, start) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// noGroupLeft checks that the app's cgroup is gone, and its record with it.
func noGroupLeft(t *testing.T, cellDir string, groupDir string) {
	t.Helper()
	if left := cgroup.Recorded(cellDir); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
	if groupDir == "" {
		return
	}
	if _, err := os.Stat(groupDir); !os.IsNotExist(err) {
		t.Errorf("the app's cgroup %s is still there: %v", groupDir, err)
	}
	if records, _ := filepath.Glob(filepath.Join(cellDir, "persistlab.app.cgroup.*")); len(records) > 0 {
		t.Errorf("records left: %v", records)
	}
}

// What an app starts outside its process group or session, a daemon (setsid), or a child its
// first process left when it died, is stopped with the app: after Stop, after a failed start.
func TestAnAppsProcessesEndWithIt(t *testing.T) {
	needPython(t)
	server := "exec python3 -m http.server --bind {host} {port} --directory {dir}"
	for _, tc := range []struct {
		name, script string
		killLeader   bool // the app's first process dies, its child stays
		startFails   bool
	}{
		{name: "a daemon", script: "setsid sleep 1234 & echo $! > PIDFILE; " + server},
		{name: "a child left by the app's first process", script: "sleep 1234 & echo $! > PIDFILE; " + server, killLeader: true},
		{name: "a daemon of an app that exits at once", script: "setsid sleep 1234 & echo $! > PIDFILE; echo {port}; exit 3", startFails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cellDir := t.TempDir()
			pidFile := filepath.Join(t.TempDir(), "pid")
			script := strings.ReplaceAll(tc.script, "PIDFILE", pidFile)
			in, err := startIn(t, cellDir, map[string]any{"command": []any{"sh", "-c", script}}, nil)
			pid, start := pidIn(t, pidFile)
			killAtCleanup(t, pid, start)
			var groupDir string
			if tc.startFails {
				if err == nil {
					in.Stop(context.Background())
					t.Fatal("started")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				app := in.(*instance)
				recorded := cgroup.Recorded(cellDir)
				if len(recorded) != 1 || !strings.Contains(procCgroups(app.child.Pid()), "/"+filepath.Base(recorded[0])+"\n") {
					t.Errorf("recorded %v; the app's cgroups:\n%s", recorded, procCgroups(app.child.Pid()))
				}
				if len(recorded) == 1 {
					groupDir = recorded[0]
				}
				if tc.killLeader {
					syscall.Kill(app.child.Pid(), syscall.SIGKILL)
					<-app.child.Done()
				}
				if err := in.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if alive(pid, start) {
				t.Errorf("pid %d, started by the app, still runs after the app was stopped", pid)
			}
			noGroupLeft(t, cellDir, groupDir)
		})
	}
}

// offLoopback is an app serving on {host}:{port} that also listens on 0.0.0.0 on a port of its
// own: at once ("now"), or once asked for /late; or, as "daemon", only listens there, then
// creates the file named by its third argument.
const offLoopback = `
import http.server, socket, sys, time
held = []
def listen_off():
    s = socket.socket()
    s.bind(("0.0.0.0", 0))
    s.listen()
    held.append(s)
if sys.argv[2] in ("now", "daemon"):
    listen_off()
if sys.argv[2] == "daemon":
    open(sys.argv[3], "w").close()
    time.sleep(1234)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/late":
            listen_off()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

// Every listening socket of every process of the app must be on loopback, not only the one on
// {port}: one on 0.0.0.0 on another port is refused, naming the address, the port and the pid,
// whether the app opens it before it is ready, a daemon of its opens it, or it opens it later
// (refused before the load).
func TestAnAppListeningOffLoopbackOnAnyPortIsRefused(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	app, marker := filepath.Join(dir, "app.py"), filepath.Join(dir, "listening")
	if err := os.WriteFile(app, []byte(offLoopback), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		command []any
		late    bool
	}{
		{name: "the app", command: []any{"python3", app, "{port}", "now"}},
		{name: "a daemon of the app", command: []any{"sh", "-c", "setsid python3 " + app + " 0 daemon " + marker +
			" & while [ ! -e " + marker + " ]; do sleep 0.05; done; exec python3 " + app + " {port} none"}},
		{name: "after it was ready", command: []any{"python3", app, "{port}", "late"}, late: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cellDir := t.TempDir()
			in, err := startIn(t, cellDir, map[string]any{"command": tc.command}, nil)
			if tc.late {
				if err != nil {
					t.Fatal(err)
				}
				resp, getErr := http.Get(in.(*instance).url + "/late")
				if getErr != nil {
					t.Fatal(getErr)
				}
				resp.Body.Close()
				_, err = in.Drive(context.Background(), time.Second)
				if stopErr := in.Stop(context.Background()); stopErr != nil {
					t.Error(stopErr)
				}
				if err == nil {
					t.Fatal("the load ran")
				}
			} else if err == nil {
				in.Stop(context.Background())
				t.Fatal("started")
			}
			msg := err.Error()
			t.Log(msg)
			for _, want := range []string{"off loopback", "0.0.0.0:", "pid ", "{host}"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			noGroupLeft(t, cellDir, "")
		})
	}
}
