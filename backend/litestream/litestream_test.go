package litestream

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"persistlab/backend"
	"persistlab/backend/conformance"
	"persistlab/lab/bucket"
)

// needs is what the counter asks: one SQLite database to replicate.
var needs = backend.Needs{SQLite: "test.db"}

func TestConformance(t *testing.T) {
	conformance.Run(t, func(work string) (backend.Backend, error) {
		return backend.New(Name, backend.Env{WorkDir: work, Options: map[string]string{"model": "no-delay"}, Needs: needs})
	})
}

// Commits reach the bucket within the sync interval, and `litestream restore` from the bucket
// gives back every committed row.
func TestReplicatesAndRestores(t *testing.T) {
	work := t.TempDir()
	b, err := New(backend.Env{WorkDir: work, Options: map[string]string{"model": "no-delay", "sync_interval": "200ms"}, Needs: needs})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop(context.Background())
	commitRows(t, b, 50, 0)
	lastCommit := time.Now()
	lag, err := b.(*Backend).ReplicationLag(context.Background(), lastCommit)
	if err != nil {
		t.Fatal(err)
	}
	if lag <= 0 {
		t.Errorf("lag %v", lag)
	}
	if st := b.Stats(); st["bucket_class_a"] < 1 {
		t.Errorf("no uploads counted: %v", st)
	}
	// The first write after the last commit may have begun before it: what the replica surely
	// holds is what Litestream synced on its way out (SIGTERM syncs once more).
	if err := b.(*Backend).child.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(work, "restored.db")
	if err := b.(*Backend).restore(context.Background(), bucket.LabBucket, restored); err != nil {
		t.Fatal(err)
	}
	rdb, err := sql.Open("sqlite3", restored)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var n, sum int
	var check string
	if err := rdb.QueryRow(`SELECT count(*), sum(n) FROM t`).Scan(&n, &sum); err != nil || n != 50 || sum != 50*51/2 {
		t.Errorf("restored %d rows summing %d (%v), want 50 and %d", n, sum, err, 50*51/2)
	}
	if err := rdb.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check %q %v", check, err)
	}
}

// commitRows starts the backend and commits rows 1..n into table t of its database, in WAL mode,
// pausing between commits (0: none).
func commitRows(t *testing.T, b backend.Backend, n int, pause time.Duration) {
	t.Helper()
	target, err := b.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(target.Dir, needs.SQLite)+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := db.Exec(`INSERT INTO t VALUES (?)`, i); err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause)
	}
}

func TestBadOptions(t *testing.T) {
	for opt, want := range map[string]string{"sync_interval=soon": "options.sync_interval", "sync_interval=0s": "options.sync_interval", "monitor_interval=0s": "options.monitor_interval", "model=s3": "options.model", "syncinterval=1s": "options.syncinterval"} {
		k, v, _ := strings.Cut(opt, "=")
		if _, err := backend.New(Name, backend.Env{WorkDir: t.TempDir(), Options: map[string]string{k: v}, Needs: needs}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", opt, err)
		}
	}
	if _, err := New(backend.Env{WorkDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "use local or gcsfuse") {
		t.Errorf("a workload without a database: %v", err)
	}
	// An app's workload keeps a database the scenario names: the hint is the field that names it.
	if _, err := New(backend.Env{WorkDir: t.TempDir(), Needs: backend.Needs{SQLiteParam: "sqlite"}}); err == nil ||
		!strings.Contains(err.Error(), "workload.sqlite") || !strings.Contains(err.Error(), "sqlite: app.db") || strings.Contains(err.Error(), "use local") {
		t.Errorf("an app whose scenario names no SQLite file: %v; want the hint sqlite: app.db", err)
	}
	t.Setenv("PERSISTLAB_LITESTREAM", "/no/such/litestream")
	if _, err := New(backend.Env{WorkDir: t.TempDir(), Needs: needs}); err == nil || !strings.Contains(err.Error(), "PERSISTLAB_LITESTREAM") {
		t.Errorf("missing binary: %v", err)
	}
}

// Litestream 0.3.13, the release before LTX, replicates and restores on the same bucket with its
// own URL scheme and object names.
func TestLegacyVersionReplicatesAndRestores(t *testing.T) {
	work := t.TempDir()
	b, err := New(backend.Env{WorkDir: work, Options: map[string]string{"model": "no-delay", "sync_interval": "200ms", "version": LegacyVersion}, Needs: needs})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop(context.Background())
	l := b.(*Backend)
	if got := b.Versions()["litestream"]; got != "v"+LegacyVersion {
		t.Fatalf("version %q, want v%s", got, LegacyVersion)
	}
	started := time.Now()
	commitRows(t, b, 20, 0)
	if _, err := l.ReplicationLag(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := l.child.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, w := range l.WritesSince(started) {
		kinds[w.What]++
	}
	if kinds["sync (wal segment)"] == 0 || kinds["snapshot"] == 0 || kinds["other"] > 0 {
		t.Errorf("writes by kind %v, want WAL segments and a snapshot, nothing unnamed", kinds)
	}
	restored := filepath.Join(work, "restored.db")
	if err := l.restore(context.Background(), bucket.LabBucket, restored); err != nil {
		t.Fatal(err)
	}
	rdb, err := sql.Open("sqlite3", restored)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var n int
	if err := rdb.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 20 {
		t.Errorf("restored %d rows (%v), want 20", n, err)
	}
}

// A version that is neither the legacy release nor the installed one is refused, naming both.
func TestUnknownVersionIsRefused(t *testing.T) {
	_, err := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"version": "0.4.0"}, Needs: needs})
	if err == nil || !strings.Contains(err.Error(), `version "0.4.0"`) || !strings.Contains(err.Error(), LegacyVersion) {
		t.Errorf("version 0.4.0: %v", err)
	}
}

func TestGenerationKindNamesObjects(t *testing.T) {
	for object, want := range map[string]string{
		"counter.sqlite3/generations/8ad3ec9c5061bf23/wal/00000000_00004080.wal.lz4":   "sync (wal segment)",
		"counter.sqlite3/generations/8ad3ec9c5061bf23/snapshots/00000000.snapshot.lz4": "snapshot",
		"counter.sqlite3/ltx/0/0000000000000001-0000000000000001.ltx":                  "other",
	} {
		if got := generationKind(object); got != want {
			t.Errorf("%s: %q, want %q", object, got, want)
		}
	}
}

func TestLTXKindNamesLevels(t *testing.T) {
	for object, want := range map[string]string{
		"persistlab/counter.sqlite3/ltx/0/0000000000000001-0000000000000001.ltx": "sync (ltx L0)",
		"persistlab/counter.sqlite3/ltx/1/0000000000000001-0000000000000009.ltx": "compaction (ltx L1)",
		"persistlab/counter.sqlite3/ltx/9/0000000000000001-0000000000000009.ltx": "snapshot (ltx L9)",
		"persistlab/elsewhere": "other",
	} {
		if got := ltxKind(object); got != want {
			t.Errorf("%s: %q, want %q", object, got, want)
		}
	}
}

// Litestream 0.5 cuts a level-0 file at each monitor tick with changes and uploads each as its own
// object: the same writes over the same seconds make fewer uploads with a longer monitor_interval,
// whatever sync_interval is; and the option reaches its config only where an entry sets it.
func TestMonitorIntervalSetsLitestream05sUploads(t *testing.T) {
	uploads := func(monitor string) int {
		opts := map[string]string{"model": "no-delay", "sync_interval": "2s"}
		if monitor != "" {
			opts["monitor_interval"] = monitor
		}
		b, err := New(backend.Env{WorkDir: t.TempDir(), Options: opts, Needs: needs})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Stop(context.Background())
		l := b.(*Backend)
		cfg := l.configYAML()
		if set := monitor != ""; strings.Contains(cfg, "monitor-interval") != set || set && !strings.Contains(cfg, "monitor-interval: "+monitor) {
			t.Fatalf("monitor_interval %q, config:\n%s", monitor, cfg)
		}
		commitRows(t, b, 100, 50*time.Millisecond) // about 5 s of writes
		if err := l.child.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, w := range l.WritesSince(time.Time{}) {
			if w.What == "sync (ltx L0)" {
				n++
			}
		}
		return n
	}
	b, err := New(backend.Env{WorkDir: t.TempDir(), Needs: needs})
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimPrefix(b.(*Backend).version, "v"); !strings.HasPrefix(v, "0.5") {
		t.Skipf("the installed litestream is %s, not 0.5", v)
	}
	// About five seconds of writes: a file a second by default; with a 10 s tick, the start's and
	// the stop's alone.
	every, once := uploads(""), uploads("10s")
	if every < 4 || 2*once > every {
		t.Errorf("level-0 uploads: %d with the default monitor-interval, %d with 10s; want at least 4, and at most half as many", every, once)
	}
}
