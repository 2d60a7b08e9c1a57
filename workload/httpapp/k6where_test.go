package httpapp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"persistlab/internal/landlock"
	"persistlab/internal/proc"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// otherService is a second local HTTP server, not the app: it counts what reaches it.
func otherService(t *testing.T) (port string, hits *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hits = new(atomic.Int64)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), hits
}

// k6Script writes a script of one default function with options, in a directory of its own.
func k6Script(t *testing.T, options, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.js")
	text := "import http from 'k6/http';\nimport { sleep } from 'k6';\n" + options + "\nexport default function () {\n" + body + "\n}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startWith starts the app with a script that passes every check, then gives the instance
// script: what a script that changes between persistlab's check and k6's run would do.
func startWith(t *testing.T, script string) *instance {
	t.Helper()
	needPython(t)
	in, err := start(t, pythonServer("{host}"), map[string]string{"vus": "1", "k6_script": "testdata/get.js"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Stop(context.Background()) })
	in.(*instance).s.k6Script = script
	return in.(*instance)
}

// checkRefuses asserts that the workload's check refuses script, naming what.
func checkRefuses(t *testing.T, script, what string) {
	t.Helper()
	w, err := New(scenario.Workload{Type: Name, Sections: pythonServer("{host}")})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Check(context.Background(), workload.Resolve(Params, map[string]string{"k6_script": script}, nil))
	var fe *param.FieldError
	if !errors.As(err, &fe) || fe.Field != "workload.k6_script" || !strings.Contains(fe.Allowed, what) {
		t.Errorf("check: %v; want workload.k6_script refused for %s", err, what)
	}
}

// Each way a k6 script had of sending load to another local service, counted as the app's, is
// closed: options.hosts and options.tags.url are refused before the run and dropped from it,
// systemTags cannot hide a request's URL, and a name tag cannot hide where a request went.
func TestK6CannotLoadAnotherLocalService(t *testing.T) {
	const toApp = "http.get(`${__ENV.BASE_URL}/`);"
	confined := landlock.Supported()
	t.Run("hosts", func(t *testing.T) {
		port, hits := otherService(t)
		// Names the app by its address and port, and maps that to the other service.
		script := k6Script(t, "export const options = { HOSTS: { '127.0.0.1': '127.0.0.1:"+port+"' } };", toApp)
		checkRefuses(t, script, "options.hosts")
		r, err := startWith(t, script).Drive(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if r.Metrics["ok"] < 1 || hits.Load() != 0 {
			t.Errorf("ok %v; the other service got %d requests: want hosts dropped, every request the app's", r.Metrics["ok"], hits.Load())
		}
	})
	t.Run("the machine's k6 configuration", func(t *testing.T) {
		port, hits := otherService(t)
		config := t.TempDir()
		if err := os.MkdirAll(filepath.Join(config, "k6"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(config, "k6", "config.json"), []byte(`{"hosts": {"127.0.0.1": "127.0.0.1:`+port+`"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("XDG_CONFIG_HOME", config)
		r, err := startWith(t, k6Script(t, "", toApp)).Drive(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if r.Metrics["ok"] < 1 || hits.Load() != 0 {
			t.Errorf("ok %v; the other service got %d requests: want the machine's configuration unread", r.Metrics["ok"], hits.Load())
		}
	})
	t.Run("tags.url", func(t *testing.T) {
		port, hits := otherService(t)
		script := k6Script(t, "export const options = { tags: { url: `${__ENV.BASE_URL}/` }, systemTags: ['status', 'method'] };",
			"http.get('http://127.0.0.1:"+port+"/');")
		checkRefuses(t, script, "options.tags")
		_, err := startWith(t, script).Drive(context.Background(), time.Second)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1:"+port) {
			t.Errorf("drive: %v; want the other service's URL named", err)
		}
		if confined == nil && hits.Load() != 0 {
			t.Errorf("the other service got %d requests", hits.Load())
		}
	})
	t.Run("systemTags", func(t *testing.T) {
		port, _ := otherService(t)
		script := k6Script(t, "export const options = { systemTags: ['status', 'method'] };", "http.get('http://127.0.0.1:"+port+"/');")
		_, err := startWith(t, script).Drive(context.Background(), time.Second)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1:"+port) {
			t.Errorf("drive: %v; want the other service's URL named whatever systemTags says", err)
		}
	})
	t.Run("name", func(t *testing.T) {
		if confined != nil {
			t.Skip(confined)
		}
		port, hits := otherService(t)
		script := k6Script(t, "", "http.get('http://127.0.0.1:"+port+"/', { tags: { name: `${__ENV.BASE_URL}/` } });")
		_, err := startWith(t, script).Drive(context.Background(), time.Second)
		if err == nil || !strings.Contains(err.Error(), "the kernel refused") || hits.Load() != 0 {
			t.Errorf("drive: %v; the other service got %d requests: want none, and the cell failed", err, hits.Load())
		}
	})
	t.Run("a name of the app's own", func(t *testing.T) {
		if confined != nil {
			t.Skip(confined)
		}
		// A request named as k6's docs advise, to the app: k6 reports its name as its url.
		script := k6Script(t, "", "http.get(`${__ENV.BASE_URL}/`, { tags: { name: 'home' } });")
		r, err := startWith(t, script).Drive(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if r.Metrics["ok"] < 1 || r.Metrics["errors"] != 0 {
			t.Errorf("ok %v, errors %v; want the app's named requests measured", r.Metrics["ok"], r.Metrics["errors"])
		}
	})
}

// Every request k6 reports is checked by the address it connected to, whether the kernel refused
// its connection, and its URL; a request reported by a name goes unchecked only when the kernel
// held k6 to the app's port.
func TestK6ReportsAreCheckedRequestByRequest(t *testing.T) {
	const port = 8080
	point := func(url, ip, status, k6Error string) string {
		return fmt.Sprintf(`{"type":"Point","metric":"http_req_duration","data":{"value":1,"tags":{"url":%q,"name":%q,"ip":%q,"status":%q,"error":%q}}}`,
			url, url, ip, status, k6Error)
	}
	tally := func(confined bool, lines ...string) k6Tally {
		path := filepath.Join(t.TempDir(), "points")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return tallyK6(f, port, confined)
	}
	lines := []string{
		point("http://127.0.0.1:8080/", "127.0.0.1", "200", ""),
		point("http://127.0.0.1:8080/", "10.1.2.3", "200", ""),                                                // connected elsewhere
		point("http://127.0.0.1:8080/", "", "0", "dial: unknown errno 13 error with msg `permission denied`"), // refused by the kernel
		point("home", "127.0.0.1", "200", ""),                                                                 // named by the script
	}
	if got := tally(true, lines...); got.ok != 3 || got.offApp != 2 || got.named != 0 {
		t.Errorf("confined: ok %d, off the app %d %v, named %d; want 3, 2, 0", got.ok, got.offApp, got.offAppURLs, got.named)
	}
	got := tally(false, lines...)
	if got.offApp != 3 || got.named != 1 {
		t.Errorf("unconfined: off the app %d %v, named %d; want 3, 1", got.offApp, got.offAppURLs, got.named)
	}
	if err := got.offAppError("http://127.0.0.1:8080", errors.New("no Landlock")); err == nil || !strings.Contains(err.Error(), "name tag") {
		t.Errorf("unconfined: %v; want the name tags named", err)
	}
}

// A script that makes no request, and a k6 that writes nothing, fail the cell: a row of zeros
// would read as a measurement.
func TestK6ThatTimedNoRequestFailsTheCell(t *testing.T) {
	in := startWith(t, k6Script(t, "", "sleep(0.1);"))
	if r, err := in.Drive(context.Background(), time.Second); err == nil || !strings.Contains(err.Error(), "timed no HTTP request") {
		t.Errorf("a script without requests: %v, %v", err, r)
	}
	silent := filepath.Join(t.TempDir(), "k6")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	in.k6 = silent
	if r, err := in.Drive(context.Background(), time.Second); err == nil || !strings.Contains(err.Error(), "wrote no metric") {
		t.Errorf("a k6 that writes nothing: %v, %v", err, r)
	}
}

// A k6 that fails is a *proc.CommandError keeping its exit as the cause and the end of its log.
func TestK6FailureKeepsItsCause(t *testing.T) {
	in := startWith(t, k6Script(t, "", "http.get(`${__ENV.BASE_URL}/`);"))
	broken := filepath.Join(t.TempDir(), "k6")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho k6 broke >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	in.k6 = broken
	_, err := in.Drive(context.Background(), time.Second)
	ce, isCommand := errors.AsType[*proc.CommandError](err)
	exit, exited := errors.AsType[*exec.ExitError](err)
	if !isCommand || !exited || exit.ExitCode() != 3 || !strings.Contains(ce.Output, "k6 broke") {
		t.Errorf("a failing k6: %v; want a command error whose cause is exit status 3, with its log's end", err)
	}
}

// Without Landlock the requests are checked by what k6 reports alone, and the row says so: the
// options are still dropped, and a request k6 reports by its name fails the cell.
func TestK6WithoutLandlock(t *testing.T) {
	landlockSupported = func() error { return errors.New("no Landlock here") }
	t.Cleanup(func() { landlockSupported = landlock.Supported })
	port, hits := otherService(t)
	script := k6Script(t, "export const options = { hosts: { '127.0.0.1': '127.0.0.1:"+port+"' } };", "http.get(`${__ENV.BASE_URL}/`);")
	r, err := startWith(t, script).Drive(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.Metrics["ok"] < 1 || hits.Load() != 0 || !strings.Contains(r.Facts["k6_network"], "no Landlock here") {
		t.Errorf("ok %v, the other service got %d, facts %v: want hosts dropped and the missing confinement said", r.Metrics["ok"], hits.Load(), r.Facts)
	}
	named := k6Script(t, "", "http.get(`${__ENV.BASE_URL}/`, { tags: { name: 'home' } });")
	if _, err := startWith(t, named).Drive(context.Background(), time.Second); err == nil || !strings.Contains(err.Error(), "name tag") {
		t.Errorf("a named request: %v; want the cell failed, the name tag said", err)
	}
}
