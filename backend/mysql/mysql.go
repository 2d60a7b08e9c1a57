// Package mysql is a MySQL or MariaDB server that already exists (a user's Cloud SQL instance, or
// any server): the workload connects to it by DSN instead of starting its own. Only what the
// server itself counts (SHOW GLOBAL STATUS) is measured; its disk and CPU are out of sight.
package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"persistlab/backend"
	"persistlab/param"
)

// Name is the backend's name in scenarios.
const Name = "mysql"

// The optional capabilities the runner finds by type assertion, checked at compile time.
var (
	_ backend.Checker     = (*Backend)(nil)
	_ backend.LocalCopier = (*Backend)(nil)
)

// Options are the backend's options.
var Options = []param.Param{
	{Name: "dsn", Kind: param.KindString, Help: "the server, in go-sql-driver's form user@tcp(host:port)/, without a password (a results file records every option): the password comes from " + PasswordEnv + "; unset: the DSN in " + DSNEnv},
}

func init() {
	backend.RegisterInfo(backend.Info{Name: Name, Description: "your own MySQL or MariaDB server (Cloud SQL, RDS, any), reached by DSN: only what the server counts is measured; for workloads that use a server (bulkload, which makes and drops a database of its own, refused if it exists; counter, which makes persistlab_counter and leaves it, refusing one it did not make)",
		Options: Options, New: New,
		NoModel: func(map[string]string) string { return "no cloud model: a server the user already has" }})
}

// Backend is a server reached by DSN.
type Backend struct {
	dsn     string // with the password, never printed or recorded
	address string // user@host:port, for results files
	dir     string
	version string
}

// DSNEnv names the server when a scenario's entry has no option dsn, so `--backend mysql` can
// point a built-in scenario at a user's server.
const DSNEnv = "PERSISTLAB_MYSQL_DSN"

// PasswordEnv holds the password, as for MySQL's own clients: a results file records every
// backend option, so option dsn must not hold one.
const PasswordEnv = "MYSQL_PWD"

// New takes option dsn (go-sql-driver's form, user@tcp(host:port)/), or the DSN in
// PERSISTLAB_MYSQL_DSN, and the password in MYSQL_PWD; it serves only workloads that can use a
// server of their own choosing.
func New(env backend.Env) (backend.Backend, error) {
	if !env.Needs.MySQL {
		return nil, fmt.Errorf("backend %q: the workload does not use a MySQL server: want a workload that does (bulkload, counter, or an http app with a mysql_env section)", Name)
	}
	var s struct {
		DSN string `param:"dsn"`
	}
	if err := param.Decode(Options, env.Options, &s); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	field, dsn := "option dsn", s.DSN
	if dsn == "" {
		field, dsn = DSNEnv, os.Getenv(DSNEnv)
	}
	if dsn == "" {
		return nil, fmt.Errorf("backend %q: no server: want option dsn (user@tcp(host:port)/) or %s, and the password in %s", Name, DSNEnv, PasswordEnv)
	}
	cfg, err := drv.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %s %q: want a DSN like root@tcp(10.0.0.5:3306)/ (%v)", Name, field, redact(dsn), err)
	}
	if cfg.Net != "tcp" && cfg.Net != "unix" {
		return nil, fmt.Errorf("backend %q: %s: network %q: want tcp or unix", Name, field, cfg.Net)
	}
	if cfg.Passwd != "" && field == "option dsn" {
		return nil, fmt.Errorf("backend %q: option dsn %q holds a password, which the results file would record: want it in %s", Name, redact(dsn), PasswordEnv)
	}
	if pw := os.Getenv(PasswordEnv); cfg.Passwd == "" && pw != "" {
		cfg.Passwd = pw
	}
	return &Backend{dsn: cfg.FormatDSN(), address: cfg.User + "@" + cfg.Addr, dir: filepath.Join(env.WorkDir, "scratch")}, nil
}

// redact hides a DSN's password in messages.
func redact(dsn string) string {
	if cfg, err := drv.ParseDSN(dsn); err == nil && cfg.Passwd != "" {
		return strings.Replace(dsn, ":"+cfg.Passwd+"@", ":***@", 1)
	}
	return dsn
}

// Name implements backend.Backend.
func (m *Backend) Name() string { return Name }

// Check implements backend.Checker: a server that does not answer is found before the first cell.
func (m *Backend) Check(ctx context.Context) error {
	db, err := sql.Open("mysql", m.dsn)
	if err != nil {
		return fmt.Errorf("backend %q: %w", Name, err)
	}
	defer db.Close()
	ping, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.QueryRowContext(ping, "SELECT VERSION()").Scan(&m.version); err != nil {
		return fmt.Errorf("the server at %s does not answer: %v", redact(m.dsn), err)
	}
	return nil
}

// Start checks the server answers and gives its DSN, with scratch space on this machine.
func (m *Backend) Start(ctx context.Context) (backend.Target, error) {
	if err := m.Check(ctx); err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
	}
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return backend.Target{}, err
	}
	return backend.Target{Dir: m.dir, DSN: m.dsn}, nil
}

// Stats implements backend.Backend: the server's counters are the workload's to read.
func (m *Backend) Stats() backend.Stats { return nil }

// Stop removes the scratch space; the server is the user's and is left as it is.
func (m *Backend) Stop(context.Context) error { return os.RemoveAll(m.dir) }

// LocalCopies implements backend.LocalCopier: the data is on the user's server, not this machine.
func (m *Backend) LocalCopies() int { return 0 }

// Versions implements backend.Backend.
func (m *Backend) Versions() map[string]string {
	if m.version == "" {
		return nil
	}
	return map[string]string{"mysql_server": m.version, "mysql_address": m.address}
}
