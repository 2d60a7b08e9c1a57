package httpapp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/scenario"
	"persistlab/workload"
)

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
}

// start makes the workload from its sections and starts one instance with the given parameters.
func start(t *testing.T, sections map[string]any, set map[string]string, cpus ...int) (workload.Instance, error) {
	t.Helper()
	w, err := New(scenario.Workload{Type: Name, Sections: sections})
	if err != nil {
		t.Fatal(err)
	}
	p := workload.Resolve(Params, set, nil)
	if err := w.Check(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir()}, CellDir: t.TempDir(), Params: p, CPUs: cpus})
}

func pythonServer(bind string) map[string]any {
	return map[string]any{"command": []any{"python3", "-m", "http.server", "--bind", bind, "{port}", "--directory", "{dir}"}}
}

// gone says whether the process has ended (and been reaped).
func gone(pid int) bool {
	return syscall.Kill(pid, 0) != nil
}

// A real server started from its command line answers the load; every request is accounted for,
// and Stop leaves nothing running.
func TestDrivesAnAppStartedByItsCommand(t *testing.T) {
	needPython(t)
	in, err := start(t, pythonServer("{host}"), map[string]string{"vus": "2"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	pid := in.(*instance).child.Pid()
	status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if !strings.Contains(string(status), "Cpus_allowed_list:\t0\n") {
		t.Errorf("the app is not on the CPUs it was given (0):\n%s", status)
	}
	r, err := in.Drive(context.Background(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ok, errs := r.Metrics["ok"], r.Metrics["errors"]
	if ok < 1 || errs != 0 || float64(r.Histograms["latency"].Summarize(r.Elapsed).Count) != ok || len(r.Counters) != 0 { // counters are the answers other than 200
		t.Errorf("ok %v, errors %v, latencies %d, counters %v", ok, errs, r.Histograms["latency"].Summarize(r.Elapsed).Count, r.Counters)
	}
	if r.Metrics["min_ms"] <= 0 || r.Metrics["max_ms"] < r.Metrics["med_ms"] {
		t.Errorf("latencies %v", r.Metrics)
	}
	if err := in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) {
		t.Errorf("the app (pid %d) still runs after Stop", pid)
	}
}

// An app that never answers, that exits, or that listens off loopback fails its start with the
// reason and the end of its log, and is stopped.
func TestAppsThatCannotServeFailTheirStart(t *testing.T) {
	needPython(t)
	for _, tc := range []struct {
		name     string
		sections map[string]any
		set      map[string]string
		want     []string
	}{
		{"never ready", map[string]any{"command": []any{"sh", "-c", "echo waiting on {port}; exec sleep 600"}}, map[string]string{"ready_timeout": "500ms"},
			[]string{"did not answer GET /", "ready_timeout", "waiting on"}},
		{"exits", map[string]any{"command": []any{"sh", "-c", "echo boom on {port} >&2; exit 3"}}, nil, []string{"exited", "boom on"}},
		{"off loopback", pythonServer("0.0.0.0"), nil, []string{"off loopback", "{host}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(childrenOf(os.Getpid()))
			_, err := start(t, tc.sections, tc.set)
			if err == nil {
				t.Fatal("started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if after := childrenOf(os.Getpid()); len(after) > before {
				t.Errorf("left running: %v", after)
			}
		})
	}
}

// childrenOf lists the live (not zombie) processes whose parent is pid.
func childrenOf(pid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[0] != "Z" && fields[1] == strconv.Itoa(pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

// A command line is a list with a port, of a program that is installed; paths stay on the app.
func TestBadSettingsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		sections map[string]any
		field    string
	}{
		{map[string]any{}, "workload.command"},
		{map[string]any{"command": "python3 app.py {port}"}, "workload.command"},
		{map[string]any{"command": []any{"python3", "app.py"}}, "workload.command"},
		{map[string]any{"command": []any{"no-such-program-here", "{port}"}}, "workload.command"},
		{map[string]any{"command": []any{"sh", "{port}"}, "prepare": []any{"no-such-program-here"}}, "workload.prepare"},
		{map[string]any{"command": []any{"sh", "{port}"}, "env": []any{"A=1"}}, "workload.env"},
		{map[string]any{"command": []any{"sh", "{port}"}, "pragmas": []any{"x"}}, "workload.pragmas"},
	} {
		_, err := New(scenario.Workload{Type: Name, Sections: tc.sections})
		var fe *scenario.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%v: %v, want an error for %s", tc.sections, err, tc.field)
		}
	}
	for _, bad := range []map[string]string{{"path": "//evil.example/x"}, {"path": "x"}, {"path": "/a@b"}, {"ready": "/ a"}, {"mode": "open"}, {"rate": "5"}} {
		p := workload.Resolve(Params, bad, nil)
		if _, err := read(p); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// The user's own k6 script loads the app through k6: each request k6 timed is in the result,
// and a request to any address off loopback is refused by k6, counted as a transport error.
func TestK6ScriptLoadsTheAppAndNothingElse(t *testing.T) {
	needPython(t)
	in, err := start(t, pythonServer("{host}"), map[string]string{"vus": "1", "k6_script": "testdata/elsewhere.js"})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	r, err := in.Drive(context.Background(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ok, transport := r.Metrics["ok"], r.Metrics["transport_errors"]
	// Each iteration makes one request of each kind: the app's and the refused one.
	if ok < 1 || transport < ok-1 || transport > ok+1 || r.Metrics["errors"] != transport || float64(r.Histograms["latency"].Count()) != ok {
		t.Errorf("ok %v, transport errors %v, errors %v, latencies %d", ok, transport, r.Metrics["errors"], r.Histograms["latency"].Count())
	}
	if !strings.Contains(strings.Join(r.Errors, " "), "blacklisted") {
		t.Errorf("error samples %v: want k6's refusal of the address off loopback", r.Errors)
	}
}

// A k6 script is checked before any cell: it must exist, be a file k6 parses, and leave the
// requests to the script.
func TestK6ScriptIsCheckedFirst(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name, Sections: pythonServer("{host}")})
	if err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir() + "/bad.js"
	os.WriteFile(bad, []byte("syntax error("), 0o644)
	for _, set := range []map[string]string{
		{"k6_script": "testdata/no-such.js"},
		{"k6_script": "/dev/zero"},
		{"k6_script": bad},
		{"k6_script": "testdata/elsewhere.js", "path": "/x"},
		{"k6_script": "testdata/elsewhere.js", "mode": "open", "rate": "5"},
	} {
		var fe *scenario.FieldError
		if err := w.Check(context.Background(), workload.Resolve(Params, set, nil)); !errors.As(err, &fe) {
			t.Errorf("%v: %v", set, err)
		}
	}
}
