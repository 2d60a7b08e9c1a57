// Package reporttest holds the fixtures the report's tests and its presenters' tests share: a
// counter run's cells and scenario, fio runs, thresholds. It must not import package report, whose
// own tests use it.
package reporttest

import (
	"bytes"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
)

// Cell is a counter cell of backend at vus: ok requests answered, the count grown by delta.
func Cell(backend string, vus, repeat int, avg, med float64, ok, delta int64) results.Cell {
	m := map[string]float64{}
	measure.Summary{Count: ok, AvgMs: avg, MedMs: med}.Metrics("", m)
	m["ok"], m["count_delta"], m["lost_updates"] = float64(ok), float64(delta), float64(max(0, ok-delta))
	return results.Cell{Cell: scenario.Cell{Backend: backend, Params: map[string]string{"vus": strconv.Itoa(vus)}, Repeat: repeat}, Metrics: m}
}

// CounterSpec is a counter scenario over the given backends, sweeping vus.
func CounterSpec(backends ...string) *scenario.Spec {
	s := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: "counter"}, Sweep: scenario.Sweep{{Name: "vus", Text: "2,4", Values: []string{"2", "4"}}}, Repeat: 1}
	for _, b := range backends {
		s.Backends = append(s.Backends, scenario.BackendSpec{Name: b})
	}
	return s
}

// Scaled is a counter run of two runs per cell: latencies scaled by f and rate by 1/f, each run
// spread apart by spread.
func Scaled(f float64, spread float64) *results.Results {
	r := &results.Results{Schema: results.Schema, Scenario: CounterSpec("x", "y")}
	for rep := 1; rep <= 2; rep++ {
		c := Cell("x", 4, rep, 10*f+spread*float64(rep), 9*f+spread*float64(rep), 100, 100)
		c.Metrics["p95_ms"], c.Metrics["p99_ms"], c.Metrics["rate"] = 20*f+spread*float64(rep), 30*f+spread*float64(rep), 400/f+10*spread*float64(rep)
		r.Cells = append(r.Cells, c)
	}
	return r
}

// Thresholds parses each text as a scenario's threshold.
func Thresholds(t *testing.T, texts ...string) scenario.Thresholds {
	t.Helper()
	var out scenario.Thresholds
	for _, s := range texts {
		th, err := scenario.ParseThreshold(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, th)
	}
	return out
}

// Fio is a fio run over sweep, one run per cell, each cell's MiB/s given by mibs; not summarized.
func Fio(backends []scenario.BackendSpec, sweep scenario.Sweep, mibs func(backend string, p map[string]string) float64) *results.Results {
	return FioRuns(backends, sweep, 1, func(backend string, p map[string]string, _ int) float64 { return mibs(backend, p) })
}

// FioRuns is Fio with repeats runs per cell, each run's MiB/s given by mibs (repeat counts from 1).
func FioRuns(backends []scenario.BackendSpec, sweep scenario.Sweep, repeats int, mibs func(backend string, p map[string]string, repeat int) float64) *results.Results {
	spec := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: "fio"}, Backends: backends, Sweep: sweep, Repeat: repeats}
	r := &results.Results{Schema: results.Schema, Scenario: spec}
	for _, c := range spec.Plan() {
		m := mibs(c.Backend, c.Params, c.Repeat)
		r.Cells = append(r.Cells, results.Cell{Cell: c, Metrics: map[string]float64{"mib_s": m, "read_mib_s": m, "bytes": m * (1 << 20)}})
	}
	return r
}

// Volume is an emulated volume entry (backend "volume") labelled label, of type typ and size,
// with further options given as name, value pairs.
func Volume(label, typ, size string, options ...string) scenario.BackendSpec {
	o := map[string]string{"type": typ, "size": size}
	for i := 0; i+1 < len(options); i += 2 {
		o[options[i]] = options[i+1]
	}
	return scenario.BackendSpec{Name: "volume", Label: label, Options: o}
}

// Line is a sampled counter going from `from` to `to` over seconds, in n+1 evenly spaced samples.
func Line(from, to, seconds float64, n int) []measure.Point {
	var out []measure.Point
	for i := 0; i <= n; i++ {
		f := float64(i) / float64(n)
		out = append(out, measure.Point{T: f * seconds, V: from + f*(to-from)})
	}
	return out
}

// Gitcommit is a gitcommit run of files and changes over backends (the distributed layout unless
// an entry's params say otherwise), repeats runs per cell, each cell's metrics given by metrics;
// not summarized.
func Gitcommit(files, changes, repeats int, backends []scenario.BackendSpec, metrics func(backend string, repeat int) map[string]float64) *results.Results {
	spec := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: "gitcommit", Params: map[string]string{"files": strconv.Itoa(files), "changes": strconv.Itoa(changes)}},
		Backends: backends, Repeat: repeats}
	r := &results.Results{Schema: results.Schema, Status: results.StatusComplete, Scenario: spec, Defaults: map[string]string{"layout": "distributed"},
		Command: []string{"persistlab", "run", "t"}}
	for _, c := range spec.Plan() {
		r.Cells = append(r.Cells, results.Cell{Cell: c, Metrics: metrics(c.Backend, c.Repeat)})
	}
	return r

}

// CrashRuns adds three crashes at 2 VUs to r (not summarized): local loses all 100 acknowledged
// writes in each, litestream 9, 8 and 7 while uploading 40 objects in each crash's 2 s of load.
func CrashRuns(r *results.Results) {
	for i := 1; i <= 3; i++ {
		for _, b := range []string{"local", "litestream"} {
			c := results.CrashRun{Cell: scenario.Cell{Backend: b, Params: map[string]string{"vus": "2"}, Repeat: i},
				MaxAcked: 100, Lost: 100, Integrity: "ok", LoadS: 2, OKBeforeKill: 100}
			if b == "litestream" {
				c.Lost, c.Recovered = int64(10-i), int64(90+i)
				c.BackendStats = map[string]float64{"bucket_class_a": 40, "bucket_class_b": 0}
			}
			r.Crashes = append(r.Crashes, c)
		}
	}
}

// Chromium runs Debian's headless Chromium (installed by scripts/setup) with the flags that keep
// it off the network on its own account, and returns what it printed.
func Chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not installed: run scripts/setup")
	}
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.Command(bin, append(base, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, errOut.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("chromium did not finish in 90 s")
	}
	return out.Bytes()
}
