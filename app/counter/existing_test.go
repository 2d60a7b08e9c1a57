package counter

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A user's database is refused as it is: not switched to WAL, no table added.
func TestOpenRefusesADatabaseItDidNotMake(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.db")
	db, err := sql.Open("sqlite3", "file:"+users)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("not a database, and long enough to be read as one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lookalike := filepath.Join(dir, "lookalike.db")
	db, _ = sql.Open("sqlite3", "file:"+lookalike)
	if _, err := db.Exec(`CREATE TABLE counters (name TEXT, n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for path, want := range map[string]string{users: "table users", notes: "not a SQLite database", lookalike: "not this app's"} {
		before, _ := os.ReadFile(path)
		a, err := Open(Options{DBPath: path})
		if err == nil {
			a.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--db "+path) {
			t.Errorf("%s: %v, want a refusal naming the file and %q", filepath.Base(path), err, want)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Errorf("%s: changed by a refused open", filepath.Base(path))
		}
		if _, err := os.Stat(path + "-wal"); err == nil {
			t.Errorf("%s: switched to WAL", filepath.Base(path))
		}
	}

	// Its own database, and an empty file, it opens.
	own := filepath.Join(dir, "own.db")
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{own, own, empty} {
		a, err := Open(Options{DBPath: path})
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
			continue
		}
		a.Close()
	}
}
