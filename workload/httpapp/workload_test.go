package httpapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/param"
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
		{map[string]any{"command": []any{"sh", "{port}"}, "mysql_env": []any{"A=1"}}, "workload.mysql_env"},
		{map[string]any{"command": []any{"sh", "{port}", "{mysql_port}"}}, "workload.command"},
		{map[string]any{"command": []any{"sh", "{port}"}, "env": map[string]any{"DB": "{mysql_host}"}}, "workload.env"},
		{map[string]any{"command": []any{"sh", "{port}"}, "prepare": []any{"sh", "-c", "echo {mysql_user}"}}, "workload.prepare"},
	} {
		_, err := New(scenario.Workload{Type: Name, Sections: tc.sections})
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%v: %v, want an error for %s", tc.sections, err, tc.field)
		}
	}
	for _, bad := range []map[string]string{{"path": "//evil.example/x"}, {"path": "x"}, {"path": "/a@b"}, {"ready": "/ a"}, {"mode": "open"}, {"rate": "5"}} {
		p := workload.Resolve(Params, bad, nil)
		if _, err := read(p, ""); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// A server's placeholders are filled from the DSN the backend names: its address, port and user,
// never its password; without a server they are not filled at all.
func TestServerPlaceholdersAreFilledFromTheBackendsDSN(t *testing.T) {
	fill, err := placeholders("/data", 8080, "app:s3cret@tcp(127.0.0.1:3307)/")
	if err != nil {
		t.Fatal(err)
	}
	got := substitute(fill, []string{"URL=mysql2://{mysql_user}@{mysql_host}:{mysql_port}/x", "DIR={dir}", "PORT={port}"})
	want := []string{"URL=mysql2://app@127.0.0.1:3307/x", "DIR=/data", "PORT=8080"}
	if !slices.Equal(got, want) {
		t.Errorf("filled %q, want %q", got, want)
	}
	if strings.Contains(strings.Join(got, " "), "s3cret") {
		t.Errorf("the password went into the app's settings: %q", got)
	}
	fill, err = placeholders("/data", 8080, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := substitute(fill, []string{"{mysql_port}"}); got[0] != "{mysql_port}" {
		t.Errorf("without a server: %q", got)
	}
	if _, err := placeholders("/data", 8080, "not a dsn"); err == nil {
		t.Error("a DSN that does not parse was taken")
	}
	if _, err := placeholders("/data", 8080, "app@unix(/run/mysqld/mysqld.sock)/"); err == nil || !strings.Contains(err.Error(), "TCP") {
		t.Errorf("a server on a Unix socket: %v, want it refused naming TCP", err)
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
		{"k6_script": "testdata/nodefault.js", "mode": "open", "rate": "5"}, // k6's arrival rate runs the default function
		{"k6_script": "testdata/get%2Ejs"},                                  // k6 would run testdata/get.js, not the file checked
		{"k6_script": "testdata/get\n.js"},
	} {
		var fe *param.FieldError
		if err := w.Check(context.Background(), workload.Resolve(Params, set, nil)); !errors.As(err, &fe) {
			t.Errorf("%v: %v", set, err)
		}
	}
}

// TestHelperApp is an app for the tests below, not a test: run as a command with
// HTTPAPP_TEST_APP=1, it serves HTTPAPP_TEST_PORT on loopback until it is stopped. It answers
// {"count":N} (503 on /fail), and GET /stats tells, by "METHOD request-target", how many
// requests it served and each distinct body and headers they came with.
func TestHelperApp(t *testing.T) {
	if os.Getenv("HTTPAPP_TEST_APP") != "1" {
		return
	}
	type seen struct {
		N    int64    `json:"n"`
		Came []string `json:"came"`
	}
	var mu sync.Mutex
	stats, served := map[string]*seen{}, int64(0)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ready":
			return
		case "/stats":
			mu.Lock()
			defer mu.Unlock()
			json.NewEncoder(w).Encode(stats)
			return
		}
		body, _ := io.ReadAll(r.Body)
		came := fmt.Sprintf("body=%s length=%d type=%q accept=%q num=%q agent=%q", body, r.ContentLength,
			r.Header.Values("Content-Type"), r.Header.Values("Accept"), r.Header.Values("X-Num"), r.Header.Values("User-Agent"))
		mu.Lock()
		key := r.Method + " " + r.URL.RequestURI()
		if stats[key] == nil {
			stats[key] = &seen{}
		}
		st := stats[key]
		st.N++
		if !slices.Contains(st.Came, came) {
			st.Came = append(st.Came, came)
		}
		served++
		n := served
		mu.Unlock()
		if r.URL.Path == "/fail" {
			http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, `{"count":%d}`, n)
	})
	ln, err := net.Listen("tcp", net.JoinHostPort(host, os.Getenv("HTTPAPP_TEST_PORT")))
	if err != nil {
		t.Fatal(err)
	}
	t.Fatal(http.Serve(ln, handler))
}

// helperApp is the sections of a workload whose app is TestHelperApp, with requests.
func helperApp(requests []any) map[string]any {
	return map[string]any{
		"command":  []any{os.Args[0], "-test.run=^TestHelperApp$"},
		"env":      map[string]any{"HTTPAPP_TEST_APP": "1", "HTTPAPP_TEST_PORT": "{port}"},
		"requests": requests,
	}
}

// A list of requests loads the app: every entry reaches it with its body and headers as written,
// in the ratio of the weights, and the result counts each entry's answers, summing to the totals.
func TestRequestsListLoadsTheApp(t *testing.T) {
	requests := []any{
		map[string]any{"name": "count_up", "method": "POST", "path": "/count_up", "weight": 9},
		map[string]any{"name": "read", "method": "GET", "path": "/count?x=1", "weight": 1, "headers": map[string]any{"Accept": "application/json", "User-Agent": "k6-like"}},
		map[string]any{"method": "POST", "path": "/items", "body": `{"n":1}`, "weight": 1.0, "headers": map[string]any{"Content-Type": "application/json", "X-Num": 5}},
		map[string]any{"method": "DELETE", "path": "/fail"},
	}
	want := []struct {
		key, target, came string
		weight            float64
	}{
		{"count_up", "POST /count_up", `body= length=0 type=[] accept=[] num=[] agent=["persistlab"]`, 9},
		{"read", "GET /count?x=1", `body= length=0 type=[] accept=["application/json"] num=[] agent=["k6-like"]`, 1},
		{"post_items", "POST /items", `body={"n":1} length=7 type=["application/json"] accept=[] num=["5"] agent=["persistlab"]`, 1},
		{"delete_fail", "DELETE /fail", `body= length=0 type=[] accept=[] num=[] agent=["persistlab"]`, 1},
	}
	// An open loop: 200 arrivals in a second whatever this machine's speed, each slot's entry the
	// same in every run.
	const slots = 200
	in, err := start(t, helperApp(requests), map[string]string{"vus": "2", "mode": "open", "rate": "200", "ready": "/ready", "ack": "count"})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	r, err := in.Drive(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(in.(*instance).url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var stats map[string]struct {
		N    int64    `json:"n"`
		Came []string `json:"came"`
	}
	err = json.NewDecoder(resp.Body).Decode(&stats)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}

	var ok, errs int64
	for i, w := range want {
		gotOK, gotErrs := r.Counters["req_"+w.key+"_ok"], r.Counters["req_"+w.key+"_errors"]
		ok, errs = ok+gotOK, errs+gotErrs
		st := stats[w.target]
		if st.N < 1 || gotOK+gotErrs != st.N || (i == 3) != (gotErrs > 0) || (i == 3) != (gotOK == 0) {
			t.Errorf("%s: the app served %d, counted %d ok and %d errors (counters %v)", w.target, st.N, gotOK, gotErrs, r.Counters)
		}
		if len(st.Came) != 1 || st.Came[0] != w.came {
			t.Errorf("%s arrived as %q, want %q", w.target, st.Came, w.came)
		}
		if p := w.weight / 12; math.Abs(float64(st.N)-slots*p) > 6*math.Sqrt(slots*p*(1-p))+1 {
			t.Errorf("%s: %d of %d requests, want about %.1f (weight %v of 12)", w.target, st.N, slots, slots*p, w.weight)
		}
	}
	if len(stats) != len(want) {
		t.Errorf("the app saw %v", stats)
	}
	if ok+errs != slots || float64(ok) != r.Metrics["ok"] || float64(errs) != r.Metrics["errors"] || errs != r.Counters["http_503"] {
		t.Errorf("entries sum to %d ok and %d errors; the run %v ok, %v errors, %d 503s; %d slots", ok, errs, r.Metrics["ok"], r.Metrics["errors"], r.Counters["http_503"], slots)
	}
	if r.Metrics["max_acked"] < 1 {
		t.Errorf("max acked %v: the ack field is read from every 200 answer", r.Metrics["max_acked"])
	}
}

// A list of requests is read before any cell: each bad entry is refused naming its field, and so
// are the parameters it replaces.
func TestBadRequestsAreNamed(t *testing.T) {
	cmd := []any{"sh", "{port}"}
	entry := func(kv ...any) map[string]any {
		m := map[string]any{"path": "/"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	many := make([]any, 101)
	for i := range many {
		many[i] = entry("name", strconv.Itoa(i))
	}
	for _, tc := range []struct {
		requests any
		params   map[string]string
		field    string
	}{
		{"GET /", nil, "workload.requests"},
		{[]any{}, nil, "workload.requests"},
		{many, nil, "workload.requests"},
		{[]any{"GET /"}, nil, "workload.requests[0]"},
		{[]any{entry(), entry("method", "get", "path", "/x")}, nil, "workload.requests[1].method"},
		{[]any{entry("method", "CONNECT")}, nil, "workload.requests[0].method"},
		{[]any{entry("method", "PO ST")}, nil, "workload.requests[0].method"},
		{[]any{entry("path", "//evil.example/x")}, nil, "workload.requests[0].path"},
		{[]any{entry("path", "/a@b")}, nil, "workload.requests[0].path"},
		{[]any{entry("path", "/a b")}, nil, "workload.requests[0].path"},
		{[]any{map[string]any{"method": "POST"}}, nil, "workload.requests[0].path"},
		{[]any{entry("body", strings.Repeat("x", 64<<10+1))}, nil, "workload.requests[0].body"},
		{[]any{entry("body", 5)}, nil, "workload.requests[0].body"},
		{[]any{entry("name", "a"), entry("name", "b"), entry("headers", map[string]any{"Host": "elsewhere"})}, nil, "workload.requests[2].headers.Host"},
		{[]any{entry("headers", map[string]any{"content-length": "3"})}, nil, "workload.requests[0].headers.content-length"},
		{[]any{entry("headers", map[string]any{"Transfer-Encoding": "chunked"})}, nil, "workload.requests[0].headers.Transfer-Encoding"},
		{[]any{entry("headers", map[string]any{"Connection": "close"})}, nil, "workload.requests[0].headers.Connection"},
		{[]any{entry("headers", map[string]any{"Bad Name": "x"})}, nil, "workload.requests[0].headers.Bad Name"},
		{[]any{entry("headers", map[string]any{"X-A": "a\r\nHost: b"})}, nil, "workload.requests[0].headers.X-A"},
		{[]any{entry("headers", map[string]any{"X-A": nil})}, nil, "workload.requests[0].headers.X-A"},
		{[]any{entry("headers", "Accept: x")}, nil, "workload.requests[0].headers"},
		{[]any{entry("weight", 0)}, nil, "workload.requests[0].weight"},
		{[]any{entry("weight", 1000001)}, nil, "workload.requests[0].weight"},
		{[]any{entry("weight", 1.5)}, nil, "workload.requests[0].weight"},
		{[]any{entry("weight", "9")}, nil, "workload.requests[0].weight"},
		{[]any{entry("path", "/a"), entry("path", "/a")}, nil, "workload.requests[1].name"},
		{[]any{entry("name", "a-b"), entry("name", "A_B")}, nil, "workload.requests[1].name"},
		{[]any{entry("name", "")}, nil, "workload.requests[0].name"},
		{[]any{entry("name", "ééé")}, nil, "workload.requests[0].name"},
		{[]any{entry("name", "a\nb")}, nil, "workload.requests[0].name"},
		{[]any{entry("url", "http://elsewhere/")}, nil, "workload.requests[0].url"},
		{[]any{entry()}, map[string]string{"method": "POST"}, "workload.method"},
		{[]any{entry()}, map[string]string{"path": "/count_up"}, "workload.path"},
		{[]any{entry()}, map[string]string{"k6_script": "testdata/elsewhere.js"}, "workload.requests"},
	} {
		_, err := New(scenario.Workload{Type: Name, Params: tc.params, Sections: map[string]any{"command": cmd, "requests": tc.requests}})
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%.200v %v: %v, want an error for %s", tc.requests, tc.params, err, tc.field)
		}
	}

	// A good list: defaults filled in, numbers as written, counters' keys safe.
	w, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"command": cmd, "requests": []any{
		entry("path", "/count"),
		entry("method", "POST", "path", "/items?x=1", "weight", 3.0, "headers", map[string]any{"X-Num": 5, "X-Ratio": 0.5, "X-On": true}, "body", `{"n":1}`),
		entry("name", "Read it: ALL", "weight", 1000000),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	got := w.(*Workload)
	if r := got.requests[0]; r.Method != "GET" || r.Weight != 1 || r.Name != "GET /count" || r.Body != nil || r.Headers != nil {
		t.Errorf("defaults: %+v", r)
	}
	if r := got.requests[1]; r.Weight != 3 || string(r.Body) != `{"n":1}` || fmt.Sprint(r.Headers) != "[[X-Num 5] [X-On true] [X-Ratio 0.5]]" {
		t.Errorf("as written: %+v", r)
	}
	if !slices.Equal(got.requestKeys, []string{"get_count", "post_items_x_1", "read_it_all"}) {
		t.Errorf("counter keys %q", got.requestKeys)
	}
	// A swept or --set method, path or k6 script is refused before any cell, as a fixed one.
	for _, set := range []map[string]string{{"method": "POST"}, {"path": "/x"}, {"k6_script": "testdata/elsewhere.js"}} {
		var fe *param.FieldError
		if err := w.Check(context.Background(), workload.Resolve(Params, set, nil)); !errors.As(err, &fe) {
			t.Errorf("%v with a list of requests: %v", set, err)
		}
	}
	if err := w.Check(context.Background(), workload.Resolve(Params, nil, nil)); err != nil {
		t.Errorf("defaults with a list of requests: %v", err)
	}
}
