package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/internal/mounts"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "persistlab-cli-test-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "persistlab")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func persistlab(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// processesUsing lists processes whose command line mentions dir: what a run in dir started.
func processesUsing(dir string) []string {
	var found []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte(dir)) {
			found = append(found, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	return found
}

func TestRunTinyScenarioWritesCompleteResults(t *testing.T) {
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	page := filepath.Join(work, "r.html")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "2,4",
		"--duration", "1s", "--warmup", "200ms", "--repeat", "2", "--out", out, "--workdir", filepath.Join(work, "scratch"), "--html", page)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	if html, err := os.ReadFile(page); err != nil || !bytes.Contains(html, []byte("<html")) || !strings.Contains(stdout, "wrote "+page) {
		t.Errorf("--html: %v, said: %v", err, strings.Contains(stdout, "wrote "+page))
	}
	for _, col := range []string{"vus", "med", "avg", "p(90)", "p(95)", "min", "max", "req/s", "errors", "backend local"} {
		if !strings.Contains(stdout, col) {
			t.Errorf("table lacks %q:\n%s", col, stdout)
		}
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusComplete || len(r.Cells) != 4 || len(r.Aggregates) != 2 || len(r.Fits) != 1 {
		t.Fatalf("status %s, %d cells, %d aggregates, %d fits", r.Status, len(r.Cells), len(r.Aggregates), len(r.Fits))
	}
	for _, c := range r.Cells {
		ok := int64(c.M("ok"))
		if c.Failure != "" || ok == 0 || c.Summary().Count != ok {
			t.Errorf("cell %+v", c)
		}
		if int64(c.M("count_delta")) != ok {
			t.Errorf("cell %d: counter grew %v for %d OK answers", c.Index, c.M("count_delta"), ok)
		}
		if int64(c.M("max_acked")) < ok {
			t.Errorf("cell %d: highest acknowledged count %v below %d OK answers", c.Index, c.M("max_acked"), ok)
		}
		h, err := measure.DecodeHistogram(c.Histograms["latency"])
		if err != nil || h.TotalCount() != ok {
			t.Errorf("cell %d: histogram %v, %v", c.Index, h, err)
		}
		if s := c.Summary(); !(s.MinMs <= s.MedMs && s.MedMs <= s.P90Ms && s.P90Ms <= s.P95Ms && s.P95Ms <= s.P99Ms && s.P99Ms <= s.MaxMs) {
			t.Errorf("cell %d: percentiles out of order %+v", c.Index, s)
		}
		if c.M("app_cpu_s") <= 0 {
			t.Errorf("cell %d: app CPU %v", c.Index, c.M("app_cpu_s"))
		}
	}
	for _, a := range r.Aggregates {
		if a.Runs != 2 {
			t.Errorf("aggregate %+v", a)
		}
	}
	if r.Machine.Cores == 0 || r.Machine.CPUModel == "" || r.Machine.MemoryBytes == 0 || r.Machine.Kernel == "" || len(r.Machine.FileSystems) == 0 {
		t.Errorf("machine %+v", r.Machine)
	}
	if r.Versions["sqlite"] == "" || r.Versions["go"] == "" || len(r.Placement.AppCPUs) != 1 {
		t.Errorf("versions %v placement %+v", r.Versions, r.Placement)
	}
	if vus, _ := r.Scenario.Sweep.Get("vus"); r.Scenario.Repeat != 2 || len(vus.Values) != 2 || r.Scenario.Published == nil || r.Units["avg_ms"] != "ms" {
		t.Errorf("scenario as run not recorded: %+v", r.Scenario)
	}
	if left := processesUsing(work); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
	again, _, err := persistlab(t, "report", out)
	if err != nil || !strings.Contains(again, "backend local") {
		t.Errorf("report of the results file: %v\n%s", err, again)
	}
}

// mountsUnder lists mount points below dir.
func mountsUnder(dir string) []string {
	var found []string
	for _, m := range mounts.Under(dir) {
		found = append(found, m.Point)
	}
	return found
}

func TestRunOnEveryBackend(t *testing.T) {
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "gcsfuse,litestream,local", "--vus", "2",
		"--duration", "1500ms", "--warmup", "0s", "--repeat", "1", "--cpu-per-request", "0s", "--out", out, "--workdir", filepath.Join(work, "scratch"))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusComplete || len(r.Cells) != 3 {
		t.Fatalf("status %s, %d cells", r.Status, len(r.Cells))
	}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("ok") == 0 || c.M("count_delta") != c.M("ok") {
			t.Errorf("%s: failure %q, ok %v, counter grew %v", c.Backend, c.Failure, c.M("ok"), c.M("count_delta"))
		}
		_, counted := c.BackendStats["bucket_class_a"]
		if counted != (c.Backend != "local") {
			t.Errorf("%s: bucket stats %v", c.Backend, c.BackendStats)
		}
		if c.Backend == "litestream" && (c.M("replication_lag_ms") <= 0 || c.BackendStats["bucket_class_a"] < 1) {
			t.Errorf("litestream: lag %v ms, uploads %v", c.M("replication_lag_ms"), c.BackendStats["bucket_class_a"])
		}
	}
	if r.Versions["gcsfuse"] == "" || r.Versions["litestream"] == "" {
		t.Errorf("component versions missing: %v", r.Versions)
	}
	for _, want := range []string{"backend gcsfuse", "backend litestream", "bucket requests per 1,000", "beside the seed", "gcsfuse / litestream"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if left := append(mountsUnder(work), processesUsing(work)...); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestBadInputNamesFieldAndValue(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "cloudrun-sqlite", "--vus", "2..x"}, []string{"sweep.vus", "2..x", "range"}},
		{[]string{"run", "cloudrun-sqlite", "--vus", "1..2000000000"}, []string{"sweep.vus", "1..2000000000", "10000"}},
		{[]string{"run", "cloudrun-sqlite", "--set", "speed=3"}, []string{"workload.speed", "vus, mode"}},
		{[]string{"run", "cloudrun-sqlite", "--rate", "NaN"}, []string{"--rate", "NaN", "more than 0"}},
		{[]string{"run", "cloudrun-sqlite", "--rate", "0"}, []string{"--rate", "more than 0"}},
		{[]string{"run", "cloudrun-sqlite", "--crash", "0"}, []string{"--crash", "1 to 1000"}},
		{[]string{"run", "cloudrun-sqlite", "--repeat", "0"}, []string{"--repeat", "1 to 100"}},
		{[]string{"run", "cloudrun-sqlite", "--duration", "1ns"}, []string{"duration", "1ns"}},
		{[]string{"run", emptyFile(t)}, []string{"empty"}},
		{[]string{"run", "cloudrun-sqlite", "--rate", "0.5", "--set", "mode=closed"}, []string{"workload.rate", "closed-loop"}},
		{[]string{"run", "cloudrun-sqlite", "--backend", "nfs"}, []string{"backends[0].name", "nfs", "local"}},
		{[]string{"run", "cloudrun-sqlite", "--duration", "soon"}, []string{"--duration", "soon"}},
		{[]string{"run", "no-such"}, []string{"no-such", "cloudrun-sqlite"}},
		{[]string{"app", "counter", "--db", "x.db", "--listen", "0.0.0.0:0"}, []string{"--listen", "loopback"}},
		{[]string{"load", "--url", "http://10.0.0.1:80/", "--duration", "1s"}, []string{"--url", "loopback"}},
		{[]string{"lab", "serve", "--listen", "0.0.0.0:4443"}, []string{"0.0.0.0:4443", "loopback"}},
		{[]string{"lab", "serve", "--listen", busy.Addr().String()}, []string{busy.Addr().String(), "in use"}},
		{[]string{"app", "counter", "--db", filepath.Join(t.TempDir(), "c.db"), "--listen", busy.Addr().String()}, []string{"--listen", "in use"}},
		{[]string{"run", "cloudrun-sqlite", "--cpu-per-request", "-1ms"}, []string{"cpu_per_request", "-1ms"}},
	} {
		_, stderr, err := persistlab(t, tc.args...)
		if err == nil {
			t.Errorf("%v: succeeded", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: error %q does not mention %q", tc.args, stderr, w)
			}
		}
	}
}

func TestInterruptKeepsFinishedCellsAndStopsEverything(t *testing.T) {
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	cmd := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "local,gcsfuse,litestream", "--vus", "1,2", "--duration", "700ms",
		"--warmup", "0s", "--repeat", "5", "--cpu-per-request", "0s", "--out", out, "--workdir", filepath.Join(work, "scratch"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if r, err := report.Load(out); err == nil && len(r.Cells) >= 3 { // local done, gcsfuse mounted
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no cell finished: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if err == nil {
		t.Error("an interrupted run should exit non-zero")
	}
	r, lerr := report.Load(out)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if r.Status != results.StatusInterrupted || len(r.Cells) < 3 || len(r.Cells) >= 30 {
		t.Errorf("status %s with %d cells", r.Status, len(r.Cells))
	}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("ok") == 0 {
			t.Errorf("kept a partial cell: %+v", c)
		}
	}
	if left := processesUsing(work); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

func TestLabServeLogsRequestsAndCountsThemOnExit(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log := filepath.Join(t.TempDir(), "requests.log")
	cmd := exec.Command(binary, "lab", "serve", "--listen", addr, "--no-delay", "--log", log)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	url := "http://localhost:" + addr[strings.LastIndex(addr, ":")+1:] + "/storage/v1/b/persistlab/o"
	var resp *http.Response
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err = http.Get(url); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	data, _ := os.ReadFile(log)
	if !strings.Contains(string(data), "GET /storage/v1/b/persistlab/o") {
		t.Errorf("request log: %q", data)
	}
	if !strings.Contains(stdout.String(), "class A 1") || !strings.Contains(stdout.String(), "storage.objects.list") {
		t.Errorf("exit summary: %s", stdout.String())
	}
}

func emptyFile(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
