package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
)

// Seed 000's counter written in Python's standard library (examples/python-counter) runs the
// seed's experiment as the Rails app does, through the same http workload: on the local disk and
// replicated by Litestream, driven by the seed's own k6 script, every 200 answer k6 counted is a
// count the database holds, and Litestream's bucket received the database.
func TestPythonCounterRunsSeed000(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite-python", "--quick", "--backend", "local,litestream", "--vus", "2",
		"--duration", "2s", "--warmup", "0s", "--repeat", "1", "--out", out, "--workdir", filepath.Join(work, "w"), "--keep")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || r.Status != results.StatusComplete || len(r.Cells) != 2 {
		t.Fatalf("%v %+v", err, r)
	}
	var local *results.Cell
	for i, c := range r.Cells {
		if c.Failure != "" || c.M("ok") < 1 || c.M("errors") != 0 {
			t.Errorf("%s: failure %q, ok %v, errors %v", c.Backend, c.Failure, c.M("ok"), c.M("errors"))
		}
		if c.Backend == "litestream" && c.BackendStats["bucket_class_a"] < 1 {
			t.Errorf("litestream uploaded nothing: %v", c.BackendStats)
		}
		if c.Backend == "local" {
			local = &r.Cells[i]
		}
	}
	if local == nil {
		t.Fatalf("no local cell: %+v", r.Cells)
	}
	dbs, _ := filepath.Glob(filepath.Join(work, "w", "*local*", "data", "counter.db"))
	if len(dbs) != 1 {
		t.Fatalf("the local cell's database: %v", dbs)
	}
	count, err := exec.Command("sqlite3", dbs[0], "SELECT count FROM counters WHERE id = 'count_up'").Output()
	if err != nil || strings.TrimSpace(string(count)) != strconv.Itoa(int(local.M("ok"))) {
		t.Errorf("the Python app's database holds %q (%v); k6 counted %v answers of 200", count, err, local.M("ok"))
	}
	if !strings.Contains(stdout, "beside the seed") {
		t.Errorf("no seed table:\n%s", stdout)
	}
}

// The Python counter's crash scenario (persistlab's driver, ack count, recover /count) loses its
// instance under load: every acknowledged write is recovered or counted lost, SQLite's
// integrity_check passes, and a local disk thrown away loses all it acknowledged.
func TestPythonCounterCrashRuns(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite-python-crash", "--backend", "local,litestream", "--crash", "1",
		"--crash-after", "2s..3s", "--vus", "2", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Crashes) != 2 {
		t.Fatalf("%v %+v", err, r)
	}
	checkAppCrashes(t, r)
}

// Two instances of a user's app share one gcsfuse bucket, each on its own mount, the VUs split
// between them: the cell reports both instances' answers, says lost updates were not measured
// (only the app can state its count), and checks the shared SQLite file's integrity.
func TestTwoInstancesOfAnAppShareOneBucket(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite-python", "--backend", "gcsfuse", "--vus", "2", "--set", "instances=2",
		"--duration", "2s", "--warmup", "0s", "--repeat", "1", "--out", out, "--max-error-rate", "1")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 1 {
		t.Fatalf("%v %+v", err, r)
	}
	c := r.Cells[0]
	// Two SQLite writers on two gcsfuse mounts of one object may fail requests (no lock spans the
	// mounts): what counts here is that both instances were driven and their answers summed.
	if c.Failure != "" || c.M("instances") != 2 || c.M("ok")+c.M("errors") < 2 || c.Facts["integrity"] == "" {
		t.Errorf("cell: failure %q, instances %v, ok %v, errors %v, integrity %q", c.Failure, c.M("instances"), c.M("ok"), c.M("errors"), c.Facts["integrity"])
	}
	if _, measured := c.Metrics["lost_updates"]; measured {
		t.Errorf("lost updates reported for an app whose count persistlab cannot read: %v", c.Metrics)
	}
	if !strings.Contains(stdout, "gcsfuse shared by 2 instances at once: lost updates not measured") {
		t.Errorf("no note on the shared bucket:\n%s", stdout)
	}
	if _, stderr, err := persistlab(t, "run", "cloudrun-sqlite-python", "--backend", "gcsfuse", "--vus", "2", "--set", "instances=3"); err == nil || !strings.Contains(stderr, "workload.vus") || !strings.Contains(stderr, "per instance (3)") {
		t.Errorf("more instances than VUs: %v\n%s", err, stderr)
	}
}
