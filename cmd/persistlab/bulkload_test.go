package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"persistlab/internal/loopdev"
	"persistlab/internal/mariadb"
	"persistlab/report"
	"persistlab/results"
	"persistlab/workload/bulkload"
)

// Seed 001's workload, shortened: MariaDB on an emulated Cloud SQL disk and on local disk; every
// row loaded, the volume's writes counted, the report's table, and nothing left running.
func TestBulkloadOnAVolume(t *testing.T) {
	work := t.TempDir()
	spec := filepath.Join(work, "s.yaml")
	os.WriteFile(spec, []byte(`name: bulk
workload: {type: bulkload, rows: 20000, row_bytes: 500, buffer_pool: 16MiB}
backends:
  - {name: volume, label: cloudsql-50g, options: {type: cloudsql-ssd, size: 50GiB, instance: db-n1-standard-2}}
  - {name: local}
`), 0o644)
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", spec, "--out", out, "--workdir", filepath.Join(work, "w"))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 2 {
		t.Fatalf("%v: %+v", err, r)
	}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("rows_loaded") != 20000 || c.M("warnings") != 0 || c.M("pages_written_per_s") <= 0 {
			t.Errorf("%s: failure %q, metrics %v", c.Backend, c.Failure, c.Metrics)
		}
	}
	if r.Cells[0].BackendStats["volume_write_ops"] <= 0 || len(r.Cells[0].Series["backend.volume_write_ops"]) == 0 {
		t.Errorf("the volume counted no writes: %v", r.Cells[0].BackendStats)
	}
	if !strings.Contains(stdout, "write ops/s") || !strings.Contains(stdout, "cloudsql-50g") {
		t.Errorf("report:\n%s", stdout)
	}
	if left := append(append(mountsUnder(work), loopdev.Under(work)...), processesUsing(work)...); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A server that already exists (a user's Cloud SQL) is used by DSN: the load goes there, the
// run's database is dropped at the end, and a server that does not answer is named in the error.
func TestBulkloadOnAServerByDSN(t *testing.T) {
	progs, err := mariadb.FindPrograms()
	if err != nil {
		t.Fatalf("MariaDB (scripts/setup installs it): %v", err)
	}
	srvDir := t.TempDir()
	srv, err := mariadb.Start(context.Background(), progs, mariadb.ServerConfig{DataDir: filepath.Join(srvDir, "data"), RunDir: srvDir, BufferPool: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())
	work := t.TempDir()
	spec := filepath.Join(work, "s.yaml")
	write := func(dsn string) {
		os.WriteFile(spec, []byte(`name: bulk-dsn
workload: {type: bulkload, rows: 5000, row_bytes: 300}
backends: [{name: mysql, options: {dsn: "`+dsn+`"}}]
`), 0o644)
	}
	// A user with a password, given as MySQL's clients take it: the results file must not hold it.
	const password = "pl-s3cret-9"
	for _, q := range []string{"CREATE USER 'pl'@'127.0.0.1' IDENTIFIED BY '" + password + "'", "GRANT ALL ON *.* TO 'pl'@'127.0.0.1'"} {
		if _, err := srv.DB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	addr := "tcp(127.0.0.1:" + strconv.Itoa(srv.Port) + ")/"
	write("pl:" + password + "@" + addr)
	stdout, stderr, err := persistlab(t, "run", spec, "--out", filepath.Join(work, "r0.json"), "--workdir", filepath.Join(work, "w0"))
	if err == nil || !strings.Contains(stderr, "MYSQL_PWD") || strings.Contains(stdout+stderr, password) {
		t.Errorf("a password in option dsn: %v\n%s\n%s", err, stdout, stderr)
	}
	t.Setenv("MYSQL_PWD", password)
	write("pl@" + addr)
	out := filepath.Join(work, "r.json")
	if stdout, stderr, err := persistlab(t, "run", spec, "--out", out, "--workdir", filepath.Join(work, "w")); err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 1 || r.Cells[0].Failure != "" || r.Cells[0].M("rows_loaded") != 5000 {
		t.Fatalf("%v %+v", err, r.Cells)
	}
	if data, _ := os.ReadFile(out); bytes.Contains(data, []byte(password)) || !bytes.Contains(data, []byte("pl@127.0.0.1:")) {
		t.Errorf("the results file should name the server and user and not hold the password")
	}
	var n int
	if err := srv.DB.QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", bulkload.Database).Scan(&n); err != nil || n != 0 {
		t.Errorf("the run's database after the run: %d (%v), want dropped", n, err)
	}
	write("root@tcp(127.0.0.1:1)/")
	stdout, stderr, err = persistlab(t, "run", spec, "--out", filepath.Join(work, "r2.json"), "--workdir", filepath.Join(work, "w2"))
	if err == nil || !strings.Contains(stdout+stderr, "127.0.0.1:1") || !strings.Contains(stdout+stderr, "does not answer") {
		t.Errorf("a DSN nobody answers: %v\n%s\n%s", err, stdout, stderr)
	}
}

// A user's server that does not answer is found before the first cell, named as the backend.
func TestUnreachableServerIsRefusedBeforeTheRun(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command(binary, "run", "cloudsql-bulkload", "--backend", "mysql", "--set", "rows=1000", "--out", filepath.Join(work, "r.json"))
	cmd.Env = append(os.Environ(), "PERSISTLAB_MYSQL_DSN=root@tcp(127.0.0.1:1)/")
	out, err := cmd.CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "backends[0]") || !strings.Contains(string(out), "does not answer") {
		t.Fatalf("exit %d:\n%s", exitCode(err), out)
	}
	// The plan is said first ("plan: 2 cells ..."); a cell that ran would be named by its index.
	if regexp.MustCompile(`\bcell \d`).Match(out) {
		t.Errorf("a cell ran before the server was found unreachable:\n%s", out)
	}
	if r, err := results.Load(filepath.Join(work, "r.json")); err == nil && len(r.Cells) > 0 {
		t.Errorf("the results hold %d cells", len(r.Cells))
	}
}
