package counter

import (
	"database/sql"
	"fmt"
	"os"
	"sort"
	"strings"
)

// checkExisting refuses a database file the app did not make: opening it switches it to WAL and
// adds the counters table, changing a user's file for good. A file of the app's own holds no
// schema but the counters table (a run cut before its CREATE TABLE: none at all), beside
// SQLite's and Litestream's own tables.
func checkExisting(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		return nil // new, or empty: nothing of anyone's to change
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("counter app: --db %s: not a regular file: want a new path, or a database this app made", path)
	}
	refuse := func(why string) error {
		return fmt.Errorf("counter app: --db %s: %s; the app would switch it to WAL and add its table counters: "+
			"want a new path, or a database this app made", path, why)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return refuse(err.Error())
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type, name FROM sqlite_master`)
	if err != nil {
		return refuse("an existing file that is not a SQLite database this app reads (" + err.Error() + ")")
	}
	var foreign []string
	hasCounters := false
	for rows.Next() {
		var kind, name string
		if err := rows.Scan(&kind, &name); err != nil {
			rows.Close()
			return refuse(err.Error())
		}
		switch {
		case kind == "table" && name == "counters":
			hasCounters = true
		case kind == "index" && name == "sqlite_autoindex_counters_1",
			strings.HasPrefix(name, "sqlite_"), name == "_litestream_seq", name == "_litestream_lock":
		default:
			foreign = append(foreign, kind+" "+name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return refuse(err.Error())
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		return refuse("an existing database this app did not make (it holds " + strings.Join(foreign, ", ") + ")")
	}
	if hasCounters {
		var columns []string
		cols, err := db.Query(`SELECT name FROM pragma_table_info('counters') ORDER BY cid`)
		if err != nil {
			return refuse(err.Error())
		}
		defer cols.Close()
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				return refuse(err.Error())
			}
			columns = append(columns, c)
		}
		if strings.Join(columns, ",") != "id,count" {
			return refuse("its table counters is not this app's (columns " + strings.Join(columns, ", ") + ", want id, count)")
		}
	}
	return nil
}
