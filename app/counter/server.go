// Package counter is the system under test of seed 000: a counter app like the seed's Rails app.
// POST /count_up increments one SQLite row in one statement and answers {"count":N}; GET /count
// answers the current value. On a MySQL server (Cloud SQL) it keeps the same row there (mysql.go).
package counter

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// Options configure the app. Zero values mean Rails 8's defaults.
type Options struct {
	DBPath string
	// DSN, when set, is a MySQL server (go-sql-driver's form) the counter keeps its database on
	// instead of SQLite (Cloud SQL); DBPath and Pragmas are then not used.
	DSN      string
	Pragmas  []Pragma // applied in order on every new connection; nil means RailsPragmas
	MaxConns int      // connection pool size; Rails' database.yml default pool is 5
	Work     Work     // CPU burnt per request besides SQLite's own
	// Threads is how many requests are served at once; the rest wait their turn, as in Puma's
	// queue (0: no limit). Rails 8's generated config/puma.rb runs RailsThreads.
	Threads int
	// GVL holds one process-wide lock over each request's CPU work and its SQLite statement, as
	// Ruby's global VM lock does: sqlite3-ruby steps statements with the lock held
	// (sparklemotion/sqlite3-ruby#287, #356, #528), so a slow write blocks every thread.
	GVL bool
}

// RailsThreads is Puma's thread count in the config/puma.rb `rails new` generates (Rails 8:
// RAILS_MAX_THREADS, default 3).
const RailsThreads = 3

// DefaultMaxConns is the pool size `rails new` writes into database.yml (RAILS_MAX_THREADS or 5).
const DefaultMaxConns = 5

// App owns the database and serves HTTP.
type App struct {
	db      *sql.DB
	incr    *sql.Stmt
	read    *sql.Stmt
	pragmas []Pragma
	work    Work
	threads chan struct{} // a slot per request served at once; nil: no limit
	gvl     *sync.Mutex   // nil: no global lock
	mysql   bool          // the database is on a MySQL server (mysql.go)
	serving func()        // tests: called inside a request's locked part
}

type connector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

// Open opens (creating if needed) the database, seeds the counter row and prepares the statements.
// An existing database it did not make is refused, not changed.
func Open(opts Options) (*App, error) {
	if opts.DSN != "" {
		return openMySQL(opts)
	}
	if opts.DBPath == "" {
		return nil, errors.New("counter app: --db: a database path is required")
	}
	if err := checkExisting(opts.DBPath); err != nil {
		return nil, err
	}
	pragmas := opts.Pragmas
	if pragmas == nil {
		pragmas = RailsPragmas
	}
	maxConns := opts.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	drv := &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		for _, p := range pragmas {
			if _, err := c.Exec("PRAGMA "+p.Name+" = "+p.Value, nil); err != nil {
				return fmt.Errorf("PRAGMA %s = %s: %w", p.Name, p.Value, err)
			}
		}
		return nil
	}}
	db := sql.OpenDB(connector{dsn: "file:" + opts.DBPath, drv: drv})
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	a := newApp(db, pragmas, opts)
	if err := a.init(); err != nil {
		db.Close()
		return nil, fmt.Errorf("counter app: %s: %w", opts.DBPath, err)
	}
	return a, nil
}

// newApp is the app on db, its threads and lock as opts asks.
func newApp(db *sql.DB, pragmas []Pragma, opts Options) *App {
	a := &App{db: db, pragmas: pragmas, work: opts.Work}
	if opts.Threads > 0 {
		a.threads = make(chan struct{}, opts.Threads)
	}
	if opts.GVL {
		a.gvl = &sync.Mutex{}
	}
	return a
}

func (a *App) init() error {
	// Same schema and seed as the seed's Rails migration and seeds.rb.
	if _, err := a.db.Exec(`CREATE TABLE IF NOT EXISTS counters (id TEXT PRIMARY KEY, count INTEGER NOT NULL DEFAULT 0)`); err != nil {
		return err
	}
	if _, err := a.db.Exec(`INSERT OR IGNORE INTO counters (id, count) VALUES ('count_up', 0)`); err != nil {
		return err
	}
	var err error
	// One statement reads back the value it wrote, so no other request can slip in between.
	if a.incr, err = a.db.Prepare(`UPDATE counters SET count = count + 1 WHERE id = 'count_up' RETURNING count`); err != nil {
		return err
	}
	a.read, err = a.db.Prepare(`SELECT count FROM counters WHERE id = 'count_up'`)
	return err
}

// Close closes the database.
func (a *App) Close() error { return a.db.Close() }

// EffectivePragmas reads back the pragmas as SQLite reports them on one connection.
func (a *App) EffectivePragmas() (map[string]string, error) {
	out := map[string]string{}
	for _, p := range a.pragmas {
		var v string
		if err := a.db.QueryRow("PRAGMA " + p.Name).Scan(&v); err != nil {
			return nil, fmt.Errorf("PRAGMA %s: %w", p.Name, err)
		}
		out[p.Name] = v
	}
	return out, nil
}

// Handler serves the app's routes.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /count_up", func(w http.ResponseWriter, r *http.Request) {
		a.serve(w, r.Context(), a.incr, true)
	})
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, r *http.Request) {
		a.serve(w, r.Context(), a.read, false)
	})
	return mux
}

// serve waits for a thread, then runs the request's work and statement (under the global lock
// when there is one) and answers.
func (a *App) serve(w http.ResponseWriter, ctx context.Context, stmt *sql.Stmt, work bool) {
	if a.threads != nil {
		select {
		case a.threads <- struct{}{}:
			defer func() { <-a.threads }()
		case <-ctx.Done():
			return
		}
	}
	n, err := a.run(ctx, stmt, work)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var buf [40]byte
	body := append(strconv.AppendInt(append(buf[:0], `{"count":`...), n, 10), '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func (a *App) run(ctx context.Context, stmt *sql.Stmt, work bool) (int64, error) {
	if a.mysql {
		// mysql2, Rails' MySQL adapter, lets go of Ruby's GVL while it waits on the server
		// (ext/mysql2/client.c: rb_thread_call_without_gvl around nogvl_send_query and
		// nogvl_read_query_result), so the lock covers the CPU work alone and requests wait on
		// the server together.
		a.locked(work)
		return a.runMySQL(ctx, stmt, work)
	}
	if a.gvl != nil {
		a.gvl.Lock()
		defer a.gvl.Unlock()
	}
	a.unlocked(work)
	// Stepped to its end, not read as one row and reset: SQLite runs the WAL hook, and with it the
	// automatic checkpoint every 1,000 pages, only when a statement steps to SQLITE_DONE
	// (sqlite3Step's doWalCallbacks). Rails' update_all steps to the end; a reset after the
	// RETURNING row would commit without ever checkpointing, and the WAL would grow forever.
	rows, err := stmt.QueryContext(ctx)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	found := false
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, err
		}
		found = true
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, sql.ErrNoRows
	}
	return n, nil
}

// locked runs a request's CPU work under the global lock, where there is one.
func (a *App) locked(work bool) {
	if a.gvl != nil {
		a.gvl.Lock()
		defer a.gvl.Unlock()
	}
	a.unlocked(work)
}

// unlocked runs a request's CPU work, the lock (if any) already held.
func (a *App) unlocked(work bool) {
	if a.serving != nil {
		a.serving()
	}
	if work {
		a.work.Do()
	}
}
