package main

import (
	"context"
	"database/sql"
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

	"persistlab/app/counter"
	"persistlab/internal/loopdev"
	"persistlab/internal/mariadb"
	"persistlab/results"
)

// The Go counter on the lab's Cloud SQL: a steady cell counts every acknowledged request in the
// server's row, and crash runs kill the app's instance, whose disk goes, while the server keeps
// every acknowledged write: none lost, the database found and sound before the new instance opens
// it. Nothing is left mounted, attached or running.
func TestTheCounterOnCloudSQLLosesNoAcknowledgedWrite(t *testing.T) {
	if _, err := mariadb.FindPrograms(); err != nil {
		t.Fatalf("MariaDB (scripts/setup installs it): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("a lab volume needs root")
	}
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
