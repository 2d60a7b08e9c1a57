package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"persistlab/advise"
	"persistlab/app/counter"
	"persistlab/internal/loopdev"
	"persistlab/internal/mariadb"
	"persistlab/results"
)

// The Go counter on the lab's Cloud SQL: a steady cell counts every acknowledged request in the
// server's row, and so does a cell of two instances sharing the server; crash runs kill the app's
// instance, whose disk goes, while the server keeps every acknowledged write: none lost, the
// database found and sound before the new instance opens it. Nothing is left mounted, attached or
// running.
func TestTheCounterOnCloudSQLLosesNoAcknowledgedWrite(t *testing.T) {
	needLabCloudSQL(t)
	work := t.TempDir()
	run := func(name, extra string) *results.Results {
		t.Helper()
		scenario := filepath.Join(work, name+".yaml")
		spec := "name: " + name + `
workload: {type: counter, mode: closed, cpus: 1, vus: 4, threads: 3}
backends:
  - name: cloudsql
    options: {ceiling_probe: 0}
duration: 3s
warmup: 1s
` + extra
		if err := os.WriteFile(scenario, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(work, name+".json")
		stdout, stderr, err := persistlab(t, "run", scenario, "--out", out)
		if err != nil {
			t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
		}
		r, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run("counter-cloudsql", "")
	if len(r.Cells) != 1 || r.Cells[0].Failure != "" {
		t.Fatalf("cells: %+v", r.Cells)
	}
	m := r.Cells[0].Metrics
	if m["ok"] == 0 || m["count_delta"] != m["ok"] || m["lost_updates"] != 0 {
		t.Errorf("steady cell: %v acknowledged, the row grew by %v, %v lost: want every acknowledgement in the row", m["ok"], m["count_delta"], m["lost_updates"])
	}
	// Two instances in front of one server, as Cloud Run scales out before Cloud SQL: each
	// increment is one statement on the server's row, so none is lost (on one gcsfuse database,
	// last write wins: cloudrun-sqlite-two-instances).
	r = run("counter-cloudsql-two", "instances: 2\n")
	if len(r.Cells) != 1 || r.Cells[0].Failure != "" {
		t.Fatalf("two instances: %+v", r.Cells)
	}
	m = r.Cells[0].Metrics
	if m["instances"] != 2 || m["ok"] == 0 || m["count_delta"] != m["ok"] || m["lost_updates"] != 0 {
		t.Errorf("two instances: %v of them, %v acknowledged, the row grew by %v, %v lost: want every acknowledgement of both in the row", m["instances"], m["ok"], m["count_delta"], m["lost_updates"])
	}
	r = run("counter-cloudsql-crash", "crash: {count: 2, after: 1s..2s, seed: 1}\n")
	if len(r.Crashes) != 2 {
		t.Fatalf("crash runs: %d, want 2", len(r.Crashes))
	}
	for i, c := range r.Crashes {
		if c.Failure != "" || c.MaxAcked == 0 || c.Lost != 0 || c.Recovered < c.MaxAcked || !c.DBExisted || c.Integrity != "ok" {
			t.Errorf("crash %d: %+v: want no acknowledged write lost, the database there and sound", i, c)
		}
	}
	if left := append(append(mountsUnder(work), loopdev.Under(work)...), processesUsing(work)...); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A user's own app on the lab's Cloud SQL: its mysql_env names the server (here persistlab's
// counter, started as any command, told the server's address by it, over env's setting of the
// same variable), and crash runs lose its
// instance while the server keeps every write the app acknowledged. An app without a mysql_env is
// refused before anything starts, naming the backend.
func TestOwnAppOnCloudSQLLosesNoAcknowledgedWrite(t *testing.T) {
	needLabCloudSQL(t)
	work := t.TempDir()
	spec := filepath.Join(work, "own.yaml")
	text := `name: own-app-cloudsql
workload:
  type: http
  command: [` + binary + `, app, counter, --mysql, --listen, "{host}:{port}"]
  env: {` + counter.DSNEnv + `: "nobody@tcp(127.0.0.1:1)/"}
  mysql_env: {` + counter.DSNEnv + `: "{mysql_user}@tcp({mysql_host}:{mysql_port})/"}
  ready: /count
  method: POST
  path: /count_up
  ack: count
  recover: /count
backends: [{name: cloudsql, options: {ceiling_probe: 0}}]
sweep: {vus: 2}
duration: 2s
crash: {count: 2, after: 1s..2s, seed: 3}
`
	os.WriteFile(spec, []byte(text), 0o644)
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", spec, "--out", out, "--workdir", filepath.Join(work, "w"))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Crashes) != 2 {
		t.Fatalf("crash runs: %d, want 2", len(r.Crashes))
	}
	var acked int64
	for i, c := range r.Crashes {
		if c.Failure != "" || c.Lost != 0 || c.Recovered < c.MaxAcked {
			t.Errorf("crash %d: %+v: want every acknowledged write recovered from the server", i, c)
		}
		acked += c.MaxAcked
	}
	if acked == 0 {
		t.Errorf("no crash run acknowledged a write: %+v", r.Crashes)
	}
	if left := append(append(mountsUnder(work), loopdev.Under(work)...), processesUsing(work)...); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	os.WriteFile(spec, []byte(strings.Replace(text, "  mysql_env: {"+counter.DSNEnv+`: "{mysql_user}@tcp({mysql_host}:{mysql_port})/"}`+"\n", "", 1)), 0o644)
	_, stderr, err = persistlab(t, "run", spec, "--out", filepath.Join(work, "r2.json"))
	if err == nil || !strings.Contains(stderr, "backends[0]") || !strings.Contains(stderr, "mysql_env") {
		t.Errorf("an app that names no server, on cloudsql: %v %s", err, stderr)
	}
}

// advise for two Cloud Run instances: only Cloud SQL can serve them, every other design excluded
// naming the two; its steady runs split the load between two instances, which lose no update on
// the server's row, its crash run loses nothing, and the trust statement says the two shared this
// machine's CPU of one.
func TestAdviseForTwoInstancesMeasuresCloudSQLAlone(t *testing.T) {
	needLabCloudSQL(t)
	dir := filepath.Join(t.TempDir(), "advise")
	stdout, stderr, err := persistlab(t, "advise", "--app", "counter", "--rate", "20", "--instances", "2", "--require", "lost_acked == 0",
		"--time", "2m", "--crashes", "1", "--dir", dir, "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(a.Ranked) != 1 || a.Ranked[0].Candidate.Name != "cloud-sql" || !a.Ranked[0].Meets || a.Ranked[0].Figures.Crashes != 1 {
		t.Fatalf("ranked %+v: want cloud-sql alone, meeting lost_acked == 0 in its crash run", a.Ranked)
	}
	if len(a.Excluded) == 0 {
		t.Error("no design excluded for two instances")
	}
	for _, c := range a.Excluded {
		if !strings.Contains(c.Excluded, "2 instances") && !strings.Contains(c.Excluded, "2 Cloud Run") && c.Backend != "volume" {
			t.Errorf("%s excluded %q: want why two instances cannot share it", c.Name, c.Excluded)
		}
	}
	steady, err := results.Load(filepath.Join(dir, "cloud-sql.steady.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(steady.Cells) != 2 {
		t.Fatalf("%d steady cells, want the rate's and twice it", len(steady.Cells))
	}
	for _, c := range steady.Cells {
		m := c.Metrics
		if c.Failure != "" || m["instances"] != 2 || m["ok"] == 0 || m["lost_updates"] != 0 || m["count_delta"] != m["ok"] {
			t.Errorf("steady cell %v: failure %q, %v instances, %v acknowledged, the row grew by %v, %v lost", c.Params, c.Failure, m["instances"], m["ok"], m["count_delta"], m["lost_updates"])
		}
	}
	if !slices.ContainsFunc(a.Trust, func(s string) bool {
		return strings.Contains(s, "the 2 instances run on this machine's CPUs for one instance")
	}) {
		t.Errorf("the trust statement does not say the instances shared one instance's CPUs: %q", a.Trust)
	}
}

// On a server, the counter makes its database with an owner table and refuses one of that name it
// did not make, changing nothing in it.
func TestTheCounterRefusesADatabaseItDidNotMake(t *testing.T) {
	srv := startMariaDB(t)
	dsn := srv.DSN("")
	a, err := counter.Open(counter.Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if in := counter.InspectMySQL(dsn); !in.Exists || in.Count != 0 || in.Integrity != "ok" {
		t.Errorf("the counter's own database: %+v", in)
	}
	if _, err := counter.Open(counter.Options{DSN: dsn}); err != nil {
		t.Errorf("reopening its own database: %v", err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"DROP DATABASE " + counter.MySQLDatabase, "CREATE DATABASE " + counter.MySQLDatabase, "CREATE TABLE " + counter.MySQLDatabase + ".mine (x INT)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, err = counter.Open(counter.Options{DSN: dsn})
	if err == nil || !strings.Contains(err.Error(), "did not make it") {
		t.Errorf("a database the counter did not make: %v", err)
	}
	var tables int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?", counter.MySQLDatabase).Scan(&tables); err != nil || tables != 1 {
		t.Errorf("the user's database holds %d tables (%v): want its one, untouched", tables, err)
	}
}

// On MySQL the app's global lock (Ruby's GVL) covers a request's CPU work, not its statement, as
// mysql2 lets go of it while it waits on the server: two increments waiting on a row another
// client holds locked leave the app free to answer a read; once the row is let go both complete,
// one after the other.
func TestOnMySQLTheGlobalLockIsNotHeldOverTheStatement(t *testing.T) {
	srv := startMariaDB(t)
	a, err := counter.Open(counter.Options{DSN: srv.DSN(""), GVL: true, Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	web := httptest.NewServer(a.Handler())
	defer web.Close()

	holder, err := sql.Open("mysql", srv.DSN(counter.MySQLDatabase))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("SELECT count FROM counters WHERE id = 'count_up' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	answers := make(chan string, 2)
	for range 2 {
		go func() {
			resp, err := http.Post(web.URL+"/count_up", "", nil)
			if err != nil {
				answers <- err.Error()
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- string(body)
		}()
	}
	// Both increments are on the server, waiting on the row.
	deadline := time.Now().Add(10 * time.Second)
	for waiting := 0; waiting < 2; {
		if err := holder.QueryRow("SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'UPDATE counters%'").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d increments on the server after 10 s, want 2", waiting)
		}
		time.Sleep(10 * time.Millisecond)
	}
	read := make(chan string, 1)
	go func() {
		resp, err := http.Get(web.URL + "/count")
		if err != nil {
			read <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		read <- string(body)
	}()
	select {
	case got := <-read:
		if got != `{"count":0}` {
			t.Errorf("the read while both increments wait: %q, want the committed count 0", got)
		}
	case <-time.After(10 * time.Second):
		t.Error("the read waited behind the increments: the global lock is held over their statements")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	got := []string{<-answers, <-answers}
	slices.Sort(got)
	if !slices.Equal(got, []string{`{"count":1}`, `{"count":2}`}) {
		t.Errorf("the increments answered %q, want 1 and 2", got)
	}
}

// startMariaDB starts a small MariaDB of the test's own, stopped when the test ends.
// needLabCloudSQL fails without MariaDB (scripts/setup installs it) and skips without root, which
// the lab's Cloud SQL disk, a lab volume, needs.
func needLabCloudSQL(t *testing.T) {
	t.Helper()
	if _, err := mariadb.FindPrograms(); err != nil {
		t.Fatalf("MariaDB (scripts/setup installs it): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("a lab volume needs root")
	}
}

func startMariaDB(t *testing.T) *mariadb.Server {
	t.Helper()
	progs, err := mariadb.FindPrograms()
	if err != nil {
		t.Fatalf("MariaDB (scripts/setup installs it): %v", err)
	}
	dir := t.TempDir()
	srv, err := mariadb.Start(t.Context(), progs, mariadb.ServerConfig{DataDir: filepath.Join(dir, "data"), RunDir: dir, BufferPool: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	return srv
}
