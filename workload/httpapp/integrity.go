package httpapp

import (
	"database/sql"
	"os"
	"strings"

	_ "github.com/mattn/go-sqlite3" // SQLite, to check what a recovery found

	"persistlab/workload"
)

// integrity reports whether the SQLite file exists and SQLite's integrity_check of it, read-only
// (a recovery's data, before the new instance opens it).
func integrity(file string) workload.Survivor {
	if _, err := os.Stat(file); err != nil {
		return workload.Survivor{Integrity: "ok"} // nothing persisted: nothing to be corrupt
	}
	// mode=ro still reads the WAL, which a recovery must include (immutable=1 would not).
	db, err := sql.Open("sqlite3", "file:"+file+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return workload.Survivor{Exists: true, Integrity: err.Error()}
	}
	defer db.Close()
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		return workload.Survivor{Exists: true, Integrity: err.Error()}
	}
	defer rows.Close()
	var report []string
	for rows.Next() {
		var line string
		if rows.Scan(&line) == nil {
			report = append(report, line)
		}
	}
	return workload.Survivor{Exists: true, Integrity: strings.Join(report, "; ")}
}
