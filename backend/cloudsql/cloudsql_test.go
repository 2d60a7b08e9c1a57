package cloudsql

import (
	"context"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"persistlab/backend"
	"persistlab/backend/conformance"
	"persistlab/internal/mariadb"
	"persistlab/lab"
)

func needServer(t *testing.T) {
	t.Helper()
	if _, err := mariadb.FindPrograms(); err != nil {
		t.Skipf("MariaDB: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("a lab volume needs root")
	}
}

var small = map[string]string{"size": "10GiB", "ceiling_probe": "0"}

func TestConformance(t *testing.T) {
	needServer(t)
	conformance.Run(t, func(work string) (backend.Backend, error) {
		return backend.New(Name, backend.Env{WorkDir: work, Options: small, Needs: backend.Needs{MySQL: true}})
	})
}

// What the server committed outlives the app's instance: a crash throws the instance's own disk
// away and a new instance finds every committed row on the same server, on a disk that billed the
// server's writes; the server's files are on the disk, none on the instance's.
func TestACrashLosesTheInstanceNotTheServer(t *testing.T) {
	needServer(t)
	work := t.TempDir()
	before := conformance.Snapshot(t, work)
	b, err := backend.New(Name, backend.Env{WorkDir: work, Options: small, Needs: backend.Needs{MySQL: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	defer func() {
		if err := b.Stop(ctx); err != nil {
			t.Error(err)
		}
		conformance.Snapshot(t, work).MustEqual(t, before)
	}()
	first, err := b.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.DSN == "" || !strings.Contains(first.DSN, "tcp(127.0.0.1:") {
		t.Fatalf("DSN %q: want the server on loopback", first.DSN)
	}
	db, err := sql.Open("mysql", first.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const rows = 50
	for _, q := range []string{"CREATE DATABASE t", "CREATE TABLE t.r (id INT PRIMARY KEY) ENGINE=InnoDB"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	writesBefore := b.Stats()[lab.VolumeWriteOps]
	for i := range rows {
		if _, err := db.ExecContext(ctx, "INSERT INTO t.r VALUES (?)", i); err != nil {
			t.Fatal(err)
		}
	}
	// Each autocommit INSERT syncs the redo log and the binary log: at least one disk write each.
	if got := b.Stats()[lab.VolumeWriteOps] - writesBefore; got < rows {
		t.Errorf("the disk counted %v writes for %d commits: want at least one a commit", got, rows)
	}
	scratch := filepath.Join(first.Dir, "the-instance's-own-file")
	if err := os.WriteFile(scratch, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(first.Dir); len(entries) != 1 {
		t.Errorf("the instance's disk holds %d entries: want only the file written there (the server keeps nothing on it)", len(entries))
	}

	crasher := b.(backend.Crasher)
	if err := crasher.Crash(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(scratch); !os.IsNotExist(err) {
		t.Errorf("after the crash the instance's file is still there: %v", err)
	}
	again, err := crasher.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.DSN != first.DSN || again.Dir == first.Dir {
		t.Errorf("recovered: DSN %q dir %q, first DSN %q dir %q: want the same server and a new instance", again.DSN, again.Dir, first.DSN, first.Dir)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t.r").Scan(&n); err != nil || n != rows {
		t.Errorf("after the crash the server holds %d rows (%v): want all %d committed", n, err, rows)
	}
}

// With a network round trip, the app reaches the server through a link: each statement waits at
// least the round trip, where the server's own address answers without it; Stop closes the link.
func TestTheNetworksRoundTripIsInEveryStatement(t *testing.T) {
	needServer(t)
	const rtt = 30 * time.Millisecond
	work := t.TempDir()
	opts := map[string]string{"size": "10GiB", "ceiling_probe": "0", "network_rtt": rtt.String()}
	b, err := backend.New(Name, backend.Env{WorkDir: work, Options: opts, Needs: backend.Needs{MySQL: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target, err := b.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			b.Stop(ctx)
		}
	}()
	timed := func(dsn string) time.Duration {
		t.Helper()
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		if err := db.PingContext(ctx); err != nil { // the connection's handshake, before the timing
			t.Fatal(err)
		}
		fastest := time.Hour
		for range 5 {
			start := time.Now()
			var one int
			if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
				t.Fatal(err)
			}
			fastest = min(fastest, time.Since(start))
		}
		return fastest
	}
	through := timed(target.DSN)
	direct := timed(b.(*Backend).srv.DSN(""))
	if through < rtt {
		t.Errorf("a statement through the network took %v: want at least its round trip, %v", through, rtt)
	}
	if direct >= rtt {
		t.Errorf("a statement to the server's own address took %v: want less than the round trip %v it does not cross", direct, rtt)
	}
	link := b.(*Backend).link.Addr()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if c, err := net.DialTimeout("tcp", link, time.Second); err == nil {
		c.Close()
		t.Errorf("the link at %s still accepts after Stop", link)
	}
}

// A workload that keeps no MySQL database is refused before anything starts, as a bad option is.
func TestRefusesWhatItCannotServe(t *testing.T) {
	needServer(t)
	for _, tc := range []struct {
		env  backend.Env
		want string
	}{
		{backend.Env{Options: small, Needs: backend.Needs{SQLite: "counter.db"}}, "does not use a MySQL server"},
		{backend.Env{Options: map[string]string{"machine": "db-f9"}, Needs: backend.Needs{MySQL: true}}, `options.machine: "db-f9"`},
		{backend.Env{Options: map[string]string{"size": "5GiB"}, Needs: backend.Needs{MySQL: true}}, `options.size: "5GiB"`},
		{backend.Env{Options: map[string]string{"network_rtt": "2s"}, Needs: backend.Needs{MySQL: true}}, `options.network_rtt: "2s"`},
	} {
		tc.env.WorkDir = t.TempDir()
		if _, err := backend.New(Name, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want it to say %q", tc.env, err, tc.want)
		}
	}
}
