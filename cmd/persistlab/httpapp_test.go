package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"persistlab/internal/tools"
	"persistlab/report"
	"persistlab/results"
)

// A user's own app, started by its command line, runs on the local disk and on a gcsfuse mount
// like the counter: a cell per backend, every request accounted for, the bucket's requests
// counted where there is a bucket; Litestream, which replicates one SQLite file, is refused before
// the run.
func TestOwnAppOnEveryBackendThatTakesIt(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	work := t.TempDir()
	spec := filepath.Join(work, "own.yaml")
	os.WriteFile(spec, []byte(`name: own-app
workload:
  type: http
  command: [python3, -m, http.server, --bind, "{host}", "{port}", --directory, "{dir}"]
backends: [{name: local}, {name: gcsfuse, options: {model: no-delay}}]
sweep: {vus: 2}
duration: 1s
warmup: 0s
`), 0o644)
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", spec, "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || r.Status != results.StatusComplete || len(r.Cells) != 2 {
		t.Fatalf("%v %+v", err, r)
	}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("ok") < 1 || c.M("errors") != 0 {
			t.Errorf("%s: failure %q, ok %v, errors %v", c.Backend, c.Failure, c.M("ok"), c.M("errors"))
		}
		if c.Backend == "gcsfuse" && c.BackendStats["bucket_class_a"] < 1 { // objects.list is class A
			t.Errorf("gcsfuse: no bucket listing counted for the directory listings: %v", c.BackendStats)
		}
	}
	_, stderr, err = persistlab(t, "run", spec, "--backend", "litestream", "--out", filepath.Join(work, "l.json"))
	if err == nil || !strings.Contains(stderr, "backends[0]") {
		t.Errorf("litestream for an app without a SQLite file: %v %s", err, stderr)
	}
}

// Seed 000's own k6 script, with only its URL from the environment, drives an app of the user's
// (here persistlab's counter, started as any command would be) through the real k6; the counter
// grew by every 200 answer k6 counted.
func TestSeedsK6ScriptDrivesTheUsersApp(t *testing.T) {
	work := t.TempDir()
	spec := filepath.Join(work, "own.yaml")
	script, _ := filepath.Abs("../../examples/k6/seed-000.js")
	os.WriteFile(spec, []byte(`name: own-app-k6
workload:
  type: http
  command: [`+binary+`, app, counter, --db, "{dir}/counter.db", --listen, "{host}:{port}"]
  ready: /count
  k6_script: `+script+`
backends: [{name: local}]
sweep: {vus: 2}
duration: 2s
warmup: 0s
`), 0o644)
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", spec, "--out", out, "--workdir", filepath.Join(work, "w"), "--keep")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 1 {
		t.Fatalf("%v %+v", err, r)
	}
	c := r.Cells[0]
	if c.Failure != "" || c.M("ok") < 1 || c.M("errors") != 0 {
		t.Fatalf("failure %q, ok %v, errors %v", c.Failure, c.M("ok"), c.M("errors"))
	}
	// The results name the k6 that ran, by version and path.
	if k6, err := tools.Find("k6"); err != nil || r.Machine.Programs["k6"] != k6 || !strings.HasPrefix(r.Versions["k6"], "k6 v") {
		t.Errorf("programs %v, versions %v; want k6 at %s (%v) with its version", r.Machine.Programs, r.Versions, k6, err)
	}
	dbs, _ := filepath.Glob(filepath.Join(work, "w", "*", "data", "counter.db"))
	if len(dbs) != 1 {
		t.Fatalf("the app's database: %v", dbs)
	}
	count, err := exec.Command("sqlite3", dbs[0], "SELECT count FROM counters").Output()
	if err != nil || strings.TrimSpace(string(count)) != strconv.Itoa(int(c.M("ok"))) {
		t.Errorf("the counter holds %q (%v), k6 counted %v answers of 200", count, err, c.M("ok"))
	}
}

// Told which SQLite file the app keeps, Litestream replicates it as it does the counter's: the
// bucket receives its uploads.
func TestOwnAppOnLitestream(t *testing.T) {
	work := t.TempDir()
	spec := filepath.Join(work, "own.yaml")
	os.WriteFile(spec, []byte(`name: own-app-litestream
workload:
  type: http
  command: [`+binary+`, app, counter, --db, "{dir}/app.db", --listen, "{host}:{port}"]
  ready: /count
  method: POST
  path: /count_up
  sqlite: app.db
backends: [{name: litestream, options: {sync_interval: 200ms, model: no-delay}}]
sweep: {vus: 2}
duration: 2s
warmup: 0s
`), 0o644)
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", spec, "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 1 {
		t.Fatalf("%v %+v", err, r)
	}
	if c := r.Cells[0]; c.Failure != "" || c.M("ok") < 1 || c.M("errors") != 0 || c.BackendStats["bucket_class_a"] < 1 {
		t.Errorf("failure %q, ok %v, errors %v, bucket %v", c.Failure, c.M("ok"), c.M("errors"), c.BackendStats)
	}
}

// Seed 000's own app, the Rails counter, runs its experiment on the local disk and replicated by
// Litestream, driven by the seed's own k6 script: every 200 answer k6 counted is a count the
// database holds, and Litestream's bucket received the database.
func TestRailsCounterRunsSeed000(t *testing.T) {
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite-rails", "--backend", "local,litestream", "--vus", "2", "--duration", "2s",
		"--warmup", "0s", "--repeat", "1", "--out", out, "--workdir", filepath.Join(work, "w"), "--keep")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 2 {
		t.Fatalf("%v %+v", err, r)
	}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("ok") < 1 || c.M("errors") != 0 {
			t.Errorf("%s: failure %q, ok %v, errors %v", c.Backend, c.Failure, c.M("ok"), c.M("errors"))
		}
		if c.Backend == "litestream" && c.BackendStats["bucket_class_a"] < 1 {
			t.Errorf("litestream uploaded nothing: %v", c.BackendStats)
		}
	}
	dbs, _ := filepath.Glob(filepath.Join(work, "w", "*local*", "data", "counter.db"))
	if len(dbs) != 1 {
		t.Fatalf("the local cell's database: %v", dbs)
	}
	count, err := exec.Command("sqlite3", dbs[0], "SELECT count FROM counters WHERE id = 'count_up'").Output()
	local := r.Cells[0]
	if local.Backend != "local" {
		local = r.Cells[1]
	}
	if err != nil || strings.TrimSpace(string(count)) != strconv.Itoa(int(local.M("ok"))) {
		t.Errorf("the Rails app's database holds %q (%v); k6 counted %v answers of 200", count, err, local.M("ok"))
	}
	if !strings.Contains(stdout, "beside the seed") {
		t.Errorf("no seed table:\n%s", stdout)
	}
}

// ownAckingApp is a scenario file of the user's app (persistlab's counter, started as any command)
// stating what it acknowledged and what persisted, named name, with the rest of the file after
// its workload.
func ownAckingApp(name, rest string) string {
	return `name: ` + name + `
workload:
  type: http
  command: [` + binary + `, app, counter, --db, "{dir}/app.db", --listen, "{host}:{port}"]
  ready: /count
  method: POST
  path: /count_up
  sqlite: app.db
  ack: count
  recover: /count
` + rest
}

// An app that states what it acknowledged (ack) and what persisted (recover) gets crash runs as
// the counter does: every acknowledged write is recovered or counted lost; without them a crash
// run is refused before anything starts.
func TestOwnAppCrashRuns(t *testing.T) {
	work := t.TempDir()
	spec := filepath.Join(work, "own.yaml")
	text := ownAckingApp("own-app-crash", `backends: [{name: local}, {name: litestream, options: {sync_interval: 200ms, model: no-delay}}]
sweep: {vus: 2}
duration: 2s
crash: {count: 2, after: 2s..3s, seed: 5}
`)
	os.WriteFile(spec, []byte(text), 0o644)
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", spec, "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Crashes) != 4 {
		t.Fatalf("%v %+v", err, r)
	}
	checkAppCrashes(t, r)
	os.WriteFile(spec, []byte(strings.Replace(text, "  ack: count\n", "", 1)), 0o644)
	_, stderr, err = persistlab(t, "run", spec, "--out", filepath.Join(work, "r2.json"))
	if err == nil || !strings.Contains(stderr, "workload.ack") {
		t.Errorf("a crash run of an app that states no acknowledgement: %v %s", err, stderr)
	}
}

// checkAppCrashes asserts what every crash run of an app that states its acknowledgements shows:
// each acknowledged write recovered or counted lost (at most one in flight per VU of 2 kept
// unacknowledged), integrity_check passing, a local disk thrown away losing all, and at least one
// crash that acknowledged something.
func checkAppCrashes(t *testing.T, r *results.Results) {
	t.Helper()
	acked := 0
	for _, c := range r.Crashes {
		if c.Failure != "" || c.Integrity != "ok" {
			t.Errorf("%s crash %d: failure %q, integrity %q", c.Backend, c.Repeat, c.Failure, c.Integrity)
			continue
		}
		if c.Recovered+c.Lost-c.UnackedKept != c.MaxAcked || c.UnackedKept > 2 {
			t.Errorf("%s crash %d: acked %d, recovered %d, lost %d, unacked kept %d", c.Backend, c.Repeat, c.MaxAcked, c.Recovered, c.Lost, c.UnackedKept)
		}
		if c.Backend == "local" && c.Lost != c.MaxAcked {
			t.Errorf("local crash %d: lost %d of %d (its disk was thrown away)", c.Repeat, c.Lost, c.MaxAcked)
		}
		if c.MaxAcked > 0 {
			acked++
		}
	}
	if acked == 0 {
		t.Error("no crash acknowledged anything: nothing was measured")
	}
}
