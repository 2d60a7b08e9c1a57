package counter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// MySQLDatabase is the database the counter keeps on a MySQL server (Cloud SQL, the lab's or a
// user's): made by the counter, with an owner table that says so, and refused if it exists
// without one.
const MySQLDatabase = "persistlab_counter"

// ownerTable marks a database the counter made.
const ownerTable = "persistlab_owner"

// DSNEnv holds the server's DSN for `persistlab app counter --mysql`: an environment variable, not
// a flag, so a password in it never shows in a process list.
const DSNEnv = "PERSISTLAB_COUNTER_DSN"

// openMySQL opens the counter's database on the server at dsn, making it where it is missing.
func openMySQL(opts Options) (*App, error) {
	if opts.Pragmas != nil {
		return nil, errors.New("counter app: pragmas are SQLite's: a MySQL server takes none")
	}
	cfg, err := mysql.ParseDSN(opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("counter app: the server's DSN: %w", err)
	}
	where := cfg.User + "@" + cfg.Addr
	if err := makeDatabase(cfg); err != nil {
		return nil, fmt.Errorf("counter app: %s: %w", where, err)
	}
	cfg.DBName = MySQLDatabase
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	maxConns := opts.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	a := newApp(db, nil, opts)
	a.mysql = true
	if err := a.initMySQL(); err != nil {
		db.Close()
		return nil, fmt.Errorf("counter app: %s: %w", where, err)
	}
	return a, nil
}

// makeDatabase makes MySQLDatabase with its owner table where the server has none, and refuses
// one of that name the counter did not make.
func makeDatabase(cfg *mysql.Config) error {
	cfg = cfg.Clone()
	cfg.DBName = ""
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	var databases, owners int
	if err := db.QueryRow(`SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?`, MySQLDatabase).Scan(&databases); err != nil {
		return err
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?`, MySQLDatabase, ownerTable).Scan(&owners); err != nil {
		return err
	}
	switch {
	case databases > 0 && owners > 0:
		return nil // the counter's own, from an instance before this one
	case databases > 0:
		return fmt.Errorf("database %s exists and the counter did not make it (no table %s): it is left as it is", MySQLDatabase, ownerTable)
	}
	for _, q := range []string{
		"CREATE DATABASE " + MySQLDatabase,
		"CREATE TABLE " + MySQLDatabase + "." + ownerTable + " (made_by VARCHAR(64) NOT NULL) ENGINE=InnoDB",
		"INSERT INTO " + MySQLDatabase + "." + ownerTable + " VALUES ('persistlab app counter')",
	} {
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	return nil
}

func (a *App) initMySQL() error {
	// The seed's schema, as Rails' migration makes it on MySQL.
	if _, err := a.db.Exec(`CREATE TABLE IF NOT EXISTS counters (id VARCHAR(32) PRIMARY KEY, count BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB`); err != nil {
		return err
	}
	if _, err := a.db.Exec(`INSERT IGNORE INTO counters (id, count) VALUES ('count_up', 0)`); err != nil {
		return err
	}
	var err error
	// LAST_INSERT_ID(expr) hands the new value back in the statement's own OK packet (its insert
	// id): one statement, one round trip, and no other request can slip in between.
	if a.incr, err = a.db.Prepare(`UPDATE counters SET count = LAST_INSERT_ID(count + 1) WHERE id = 'count_up'`); err != nil {
		return err
	}
	a.read, err = a.db.Prepare(`SELECT count FROM counters WHERE id = 'count_up'`)
	return err
}

// runMySQL runs the increment (its new value from the statement's insert id) or the read.
func (a *App) runMySQL(ctx context.Context, stmt *sql.Stmt, increment bool) (int64, error) {
	if !increment {
		var n int64
		err := stmt.QueryRowContext(ctx).Scan(&n)
		return n, err
	}
	res, err := stmt.ExecContext(ctx)
	if err != nil {
		return 0, err
	}
	if rows, err := res.RowsAffected(); err != nil || rows != 1 {
		return 0, errors.Join(sql.ErrNoRows, err)
	}
	return res.LastInsertId()
}

// InspectMySQL reads the counter on the server at dsn without the app: whether its database is
// there, the count, and CHECK TABLE's verdict on the counters table.
func InspectMySQL(dsn string) Inspection {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return Inspection{Integrity: err.Error()}
	}
	cfg.DBName = ""
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return Inspection{Integrity: err.Error()}
	}
	defer db.Close()
	var databases int
	if err := db.QueryRow(`SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?`, MySQLDatabase).Scan(&databases); err != nil {
		return Inspection{Integrity: err.Error()}
	}
	if databases == 0 {
		return Inspection{Integrity: "ok"}
	}
	in := Inspection{Exists: true}
	rows, err := db.Query("CHECK TABLE " + MySQLDatabase + ".counters")
	if err != nil {
		in.Integrity = err.Error()
		return in
	}
	var report []string
	for rows.Next() {
		var table, op, kind, text string
		switch {
		case rows.Scan(&table, &op, &kind, &text) != nil:
		case kind == "status":
			report = append(report, strings.ToLower(text)) // "ok", as SQLite's integrity_check says it
		default:
			report = append(report, kind+": "+text)
		}
	}
	rows.Close()
	in.Integrity = strings.Join(report, "; ")
	if err := db.QueryRow(`SELECT count FROM ` + MySQLDatabase + `.counters WHERE id = 'count_up'`).Scan(&in.Count); err != nil && !errors.Is(err, sql.ErrNoRows) {
		in.Integrity = fmt.Sprintf("%s; read count: %v", in.Integrity, err)
	}
	return in
}
