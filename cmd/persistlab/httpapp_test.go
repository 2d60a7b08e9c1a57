package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/report"
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
	if err != nil || r.Status != report.StatusComplete || len(r.Cells) != 2 {
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
