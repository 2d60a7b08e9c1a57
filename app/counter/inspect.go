package counter

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Inspection is what a database file holds, read without the app: after a crash, before anything
// writes to it.
type Inspection struct {
	Exists    bool
	Count     int64  // 0 when the file or the row is missing
	Integrity string // "ok", SQLite's integrity_check report, or why the file could not be read
}

// Inspect opens the database at path read-only and reads the counter and PRAGMA integrity_check.
func Inspect(path string) Inspection {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Inspection{Integrity: "ok"}
	}
	in := Inspection{Exists: true}
	// immutable=1 would ignore a -wal file; mode=ro still reads the WAL, which recovery must include.
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		in.Integrity = err.Error()
		return in
	}
	defer db.Close()
	rows, err := db.Query(`PRAGMA integrity_check`)
	if err != nil {
		in.Integrity = err.Error()
		return in
	}
	var report []string
	for rows.Next() {
		var line string
		if rows.Scan(&line) == nil {
			report = append(report, line)
		}
	}
	rows.Close()
	in.Integrity = strings.Join(report, "; ")
	if err := db.QueryRow(`SELECT count FROM counters WHERE id = 'count_up'`).Scan(&in.Count); err != nil && !errors.Is(err, sql.ErrNoRows) {
		if !strings.Contains(err.Error(), "no such table") {
			in.Integrity = fmt.Sprintf("%s; read count: %v", in.Integrity, err)
		}
	}
	return in
}
