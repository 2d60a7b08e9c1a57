package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
)

func TestACrossedThresholdExitsFourAndKeepsTheResults(t *testing.T) {
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	// A latency is never 0 ms or below, and a run of 1 s answers at least one request: the first
	// threshold is crossed and the second held on any machine.
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "2", "--duration", "1s",
		"--warmup", "0s", "--repeat", "1", "--out", out, "--threshold", "min <= 0ms", "--threshold", "ok > 0")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 4 {
		t.Fatalf("exit %v; want status 4\n%s\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stderr, "min <= 0ms: crossed in local vus=2") || strings.Contains(stderr, "ok > 0") {
		t.Errorf("stderr names what crossed:\n%s", stderr)
	}
	if verdict(stdout, "min <= 0ms") != "CROSSED" || verdict(stdout, "ok > 0") != "ok" || !strings.Contains(stdout, "! crossed min <= 0ms") {
		t.Errorf("thresholds table:\n%s", stdout)
	}
	r, err := report.Load(out)
	if err != nil || r.Status != results.StatusComplete || len(r.Scenario.Thresholds) != 2 {
		t.Fatalf("results: %v %+v", err, r)
	}
	// The results file judges alike when read back.
	if js := report.Judge(r); len(js) != 2 || len(js[0].Crossed) != 1 || js[1].Held != 1 {
		t.Errorf("judged from the file: %+v", js)
	}
	// report judges the file as run did, with any threshold added.
	stdout, stderr, err = persistlab(t, "report", out, "--threshold", "max > 0ms")
	if !errors.As(err, &exit) || exit.ExitCode() != 4 || verdict(stdout, "max > 0ms") != "ok" {
		t.Errorf("report: %v\n%s\n%s", err, stdout, stderr)
	}
	if _, stderr, err = persistlab(t, "report", out, "--threshold", "speed < 3"); err == nil || !strings.Contains(stderr, "speed < 3") || !strings.Contains(stderr, "p95_ms") {
		t.Errorf("report with a metric the file lacks: %v\n%s", err, stderr)
	}
}

// verdict is the thresholds table's verdict for a threshold ("" if the table lacks it).
func verdict(tables, threshold string) string {
	for _, line := range strings.Split(tables, "\n") {
		if rest, ok := strings.CutPrefix(line, threshold+"  "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}

// --beside runs a second scenario of the same kind first, with the same flags, and sets the two
// side by side with the seed's slopes; a scenario that measures something else is refused first.
func TestBesideRunsTheOtherScenarioAndCompares(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	work := t.TempDir()
	out := filepath.Join(work, "app.json")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite-python", "--backend", "local", "--vus", "2,4", "--duration", "1s",
		"--warmup", "0s", "--repeat", "1", "--out", out, "--beside", "cloudrun-sqlite")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	for _, want := range []string{"cloudrun-sqlite-python beside cloudrun-sqlite", `workload "counter" against "http"`, "slope of avg latency against VUs, ms per VU"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for path, workload := range map[string]string{out: "http", filepath.Join(work, "app.beside.json"): "counter"} {
		r, err := report.Load(path)
		if err != nil || r.Status != results.StatusComplete || len(r.Cells) != 2 || r.Scenario.Workload.Type != workload {
			t.Errorf("%s: %v %+v", path, err, r)
		}
	}
	if _, stderr, err := persistlab(t, "run", "cloudrun-sqlite-python", "--beside", "gcsfuse-cache", "--out", filepath.Join(work, "x.json")); err == nil || !strings.Contains(stderr, "--beside") {
		t.Errorf("fio beside an app: %v\n%s", err, stderr)
	}
}
