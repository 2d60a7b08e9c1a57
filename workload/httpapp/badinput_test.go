package httpapp

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"persistlab/internal/tools"
	"persistlab/workload"
	"persistlab/workload/httpload"
)

// The listener on a port is the app's only if one of the app's processes holds it; a port
// nobody listens on is not yet listening, not an error.
func TestListenerOwnerIsToldByTheAppsProcesses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	self := func() []int { return []int{os.Getpid()} }
	if listening, err := checkSockets(port, self); !listening || err != nil {
		t.Errorf("the test's own listener, held by the app's process: %v, %v", listening, err)
	}
	_, err = checkSockets(port, func() []int { return nil })
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("held by none of the app's processes: %v; want the holder's pid named", err)
	}
	ln.Close()
	if listening, err := checkSockets(port, self); listening || err != nil {
		t.Errorf("a port nobody listens on: %v, %v", listening, err)
	}
}

// A program that takes the app's port before the app binds it answers the readiness poll; the
// start is refused, naming it, and nothing of the app is left running.
func TestAPortAnsweredByAnotherProgramIsRefused(t *testing.T) {
	dir := t.TempDir()
	portFile := filepath.Join(dir, "port")
	go func() { // the other program: this test, serving on the port the app was given
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			data, err := os.ReadFile(portFile)
			if p, convErr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && convErr == nil && p > 0 {
				ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
				if err != nil {
					return
				}
				t.Cleanup(func() { ln.Close() })
				go http.Serve(ln, http.NotFoundHandler())
				return
			}
		}
	}()
	before := len(childrenOf(os.Getpid()))
	_, err := start(t, map[string]any{"command": []any{"sh", "-c", "echo {port} > " + portFile + "; exec sleep 600"}}, map[string]string{"ready_timeout": "10s"})
	if err == nil || !strings.Contains(err.Error(), "not by the app") || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("start: %v; want the port's other owner refused", err)
	}
	if after := childrenOf(os.Getpid()); len(after) > before {
		t.Errorf("left running: %v", after)
	}
}

// The script's own checks are counted, passed and failed, as k6 counts them; they fail no request.
func TestK6ChecksAreCounted(t *testing.T) {
	needPython(t)
	in, err := start(t, pythonServer("{host}"), map[string]string{"vus": "1", "k6_script": "testdata/checks.js"})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	r, err := in.Drive(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ok, passed, failed := r.Metrics["ok"], r.Metrics["checks_passed"], r.Metrics["checks_failed"]
	// Each iteration: one 200 answer, one check that holds and one that does not.
	if ok < 1 || passed != ok || failed != ok || r.Metrics["errors"] != 0 || !strings.Contains(r.Facts["k6_checks_failed"], "never holds") {
		t.Errorf("ok %v, checks passed %v, failed %v, errors %v, facts %v", ok, passed, failed, r.Metrics["errors"], r.Facts)
	}
}

// A script that requests another port of 127.0.0.1 (which k6's address blacklist cannot refuse)
// fails its cell, naming the URL: what it measured is not the app alone.
func TestK6RequestsToAnotherLoopbackPortFailTheCell(t *testing.T) {
	needPython(t)
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go http.Serve(other, http.NotFoundHandler())
	otherPort := strconv.Itoa(other.Addr().(*net.TCPAddr).Port)
	t.Setenv("OTHER_PORT", otherPort)
	in, err := start(t, pythonServer("{host}"), map[string]string{"vus": "1", "k6_script": "testdata/otherport.js"})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	_, err = in.Drive(context.Background(), time.Second)
	if err == nil || !strings.Contains(err.Error(), "not the app") || !strings.Contains(err.Error(), "127.0.0.1:"+otherPort) {
		t.Errorf("drive: %v; want the other port's URL refused", err)
	}
}

// k6's blacklist is every IPv4 address but the app's: the ranges cover all else, exactly once.
func TestK6BlacklistLeavesOnlyTheApp(t *testing.T) {
	var covered float64
	for _, cidr := range elsewhere {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if n.IP.To4() == nil {
			continue
		}
		if n.Contains(net.IPv4(127, 0, 0, 1)) {
			t.Errorf("%s holds the app's address", cidr)
		}
		ones, _ := n.Mask.Size()
		covered += math.Pow(2, float64(32-ones))
	}
	if covered != math.Pow(2, 32)-1 {
		t.Errorf("the ranges cover %v addresses; want all but one", covered)
	}
	for _, ip := range []net.IP{net.IPv4(127, 0, 0, 2), net.IPv4(10, 1, 2, 3), net.IPv4(127, 255, 255, 255), net.IPv4(0, 0, 0, 0)} {
		in := false
		for _, cidr := range elsewhere {
			_, n, _ := net.ParseCIDR(cidr)
			in = in || n.Contains(ip)
		}
		if !in {
			t.Errorf("%v is not refused", ip)
		}
	}
}

// An app that exits while it is under load fails the drive with its log, and leaves nothing.
func TestAnAppThatExitsUnderLoadFailsTheCell(t *testing.T) {
	needPython(t)
	const app = `import http.server, os, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), H)
threading.Timer(0.5, lambda: (print("leaving now", flush=True), os._exit(7))).start()
s.serve_forever()`
	before := len(childrenOf(os.Getpid()))
	script := filepath.Join(t.TempDir(), "app.py")
	if err := os.WriteFile(script, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := start(t, map[string]any{"command": []any{"python3", script, "{host}", "{port}"}}, map[string]string{"vus": "2"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = in.Drive(context.Background(), 3*time.Second)
	in.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exited during the load") || !strings.Contains(err.Error(), "leaving now") {
		t.Errorf("drive: %v; want the app's exit and its log", err)
	}
	if after := childrenOf(os.Getpid()); len(after) > before {
		t.Errorf("left running: %v", after)
	}
}

// With mode open, the user's script runs under k6's constant-arrival-rate: exactly rate x duration
// iterations are started or dropped, each one request, and the script's setup still runs.
func TestK6ScriptInAnOpenLoop(t *testing.T) {
	needPython(t)
	in, err := start(t, pythonServer("{host}"), map[string]string{"vus": "2", "mode": "open", "rate": "20", "k6_script": "testdata/get.js"})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	r, err := in.Drive(context.Background(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	requests := r.Metrics["ok"] + r.Metrics["errors"]
	if started := requests + r.Metrics["dropped"]; started < 39 || started > 41 || r.Metrics["ok"] < 1 {
		t.Errorf("%v requests and %v dropped iterations; want 40 arrivals in 2 s at 20/s", requests, r.Metrics["dropped"])
	}
}

// k6's points are read to their end whatever they hold: a line over the reader's limit fails the
// tally without leaving k6 blocked on a full pipe, and a point of any protocol that went anywhere
// but the app is counted against the script.
func TestK6PointsAreReadToTheirEnd(t *testing.T) {
	const port = 8080
	feed := func(lines ...string) (k6Tally, bool) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan bool)
		go func() {
			for _, l := range lines {
				w.WriteString(l + "\n")
			}
			w.Close()
			done <- true
		}()
		tally := tallyK6(r, port, false)
		r.Close()
		select {
		case <-done:
			return tally, true
		case <-time.After(10 * time.Second):
			return tally, false
		}
	}
	point := func(metric, url, status string, value float64) string {
		return fmt.Sprintf(`{"type":"Point","metric":%q,"data":{"value":%v,"tags":{"url":%q,"status":%q}}}`, metric, value, url, status)
	}
	tally, finished := feed(point("http_req_duration", "http://127.0.0.1:8080/count_up", "200", 3),
		point("http_req_duration", "http://localhost:8080", "200", 4),
		point("ws_connecting", "ws://127.0.0.1:9/", "", 1),
		point("http_req_duration", "http://127.0.0.1:80801/", "200", 2),
		point("grpc_req_duration", "127.0.0.1:8080/svc.Method", "0", 2))
	if !finished || tally.ok != 3 || tally.offApp != 3 || !slices.Contains(tally.offAppURLs, "ws://127.0.0.1:9/") {
		t.Errorf("ok %d, off the app %d %v", tally.ok, tally.offApp, tally.offAppURLs)
	}
	long := point("checks", strings.Repeat("x", 2<<20), "", 1)
	tally, finished = feed(long, point("http_req_duration", "http://127.0.0.1:8080/", "200", 3), strings.Repeat("y", 256<<10))
	if !finished || tally.err == nil || !strings.Contains(tally.err.Error(), "k6's JSON output is longer than 1048576 bytes") {
		t.Errorf("a line over the limit: finished %v, error %v; want it to say what was too long", finished, tally.err)
	}
}

// The open loop's module imports the user's script by a JavaScript string: any path k6 can open
// stays one string, whatever quotes, separators or template marks it holds.
func TestArrivalScriptImportsAnyPath(t *testing.T) {
	bin, err := tools.Find("k6")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	odd := filepath.Join(dir, "a\"b'c\u2028d\\e`${f}.js")
	src, err := os.ReadFile("testdata/get.js")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(odd, src, 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper, err := writeArrivalScript(filepath.Join(dir, "arrival.js"), odd, 2.5, 3, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "inspect", "--execution-requirements", wrapper).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"rate": 2500`) || !strings.Contains(string(out), `"maxVUs": 3`) {
		t.Errorf("k6 inspect: %v\n%s", err, out)
	}
}

// Several instances split the VUs (the first ones take the remainder) and the rate.
func TestInstancesSplitTheLoad(t *testing.T) {
	in := &instance{s: settings{Load: httpload.Load{VUs: 5, Rate: 10}}}
	vus, total := 0, 0.0
	for i, want := range []int{2, 2, 1} {
		v, r := in.load(workload.Share{Index: i, Of: 3})
		if v != want || r != 10.0/3 {
			t.Errorf("share %d of 3: %d VUs at %v/s; want %d", i, v, r, want)
		}
		vus, total = vus+v, total+r
	}
	if vus != 5 || total < 9.999 || total > 10.001 {
		t.Errorf("the shares add to %d VUs and %v/s", vus, total)
	}
	if v, r := in.load(workload.Share{}); v != 5 || r != 10 {
		t.Errorf("one instance: %d, %v", v, r)
	}
}
