// Package mariadb runs a MariaDB server of the lab's own: its data on a backend's directory (a lab
// volume, a Cloud SQL disk), its sockets and logs in a run's directory, bound to loopback only,
// stopped by its process id. The bulkload workload starts one on its target; the cloudsql backend
// runs one as the managed server an app reaches by DSN.
package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"persistlab/internal/proc"
)

// Programs are the MariaDB programs a server needs (Debian's mariadb-server and -client).
type Programs struct {
	Server, InstallDB, Client string
	Version                   string // the server's, as `mariadbd --version` says
}

// FindPrograms looks for MariaDB on PATH and in Debian's sbin.
func FindPrograms() (Programs, error) {
	find := func(name string) (string, error) {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		for _, dir := range []string{"/usr/sbin", "/usr/bin"} {
			if p := filepath.Join(dir, name); isExecutable(p) {
				return p, nil
			}
		}
		return "", fmt.Errorf("%s not found (apt-get install mariadb-server mariadb-client; scripts/setup does)", name)
	}
	var p Programs
	var err error
	if p.Server, err = find("mariadbd"); err != nil {
		return p, err
	}
	if p.InstallDB, err = find("mariadb-install-db"); err != nil {
		return p, err
	}
	if p.Client, err = find("mariadb"); err != nil {
		return p, err
	}
	out, err := proc.Output(exec.Command(p.Server, "--version"), versionBytes)
	if err != nil {
		return p, err
	}
	p.Version = strings.TrimSpace(string(out))
	return p, nil
}

// versionBytes bounds what `mariadbd --version` may print: one line.
const versionBytes = 64 << 10

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// ServerConfig is one MariaDB instance: data on the target, its sockets and logs in the cell's
// directory, loopback only.
type ServerConfig struct {
	DataDir string // on the backend's target
	RunDir  string // option file, socket, pid, error log
	// SocketDir holds the server's Unix socket where RunDir's path is too long for one; "": RunDir.
	SocketDir  string
	Wrap       []string // the emulated instance's command prefix
	BufferPool int64
	Binlog     bool
	Settings   map[string]string // further server options, name=value, after ours
}

// Options is the option file: MySQL 5.7's InnoDB defaults where MariaDB 10.11's differ and can be
// set (max dirty pages 75%, LRU scan depth 1,024; a redo log of 96 MiB, the capacity of 5.7's two
// 48 MiB files, which the cloudsql-bulkload scenario raises to Cloud SQL's), O_DIRECT as Cloud SQL used, the buffer pool its user sizes, and no buffer
// pool dump or load between runs. With binlog, Cloud SQL's backups' binary log (ROW, synced).
func (c ServerConfig) Options(port int) string {
	lines := []string{
		"[mariadbd]",
		"user=root",
		"datadir=" + c.DataDir,
		"tmpdir=" + c.DataDir,
		"socket=" + c.socket(),
		"pid-file=" + filepath.Join(c.RunDir, "mariadbd.pid"),
		"log-error=" + filepath.Join(c.RunDir, "mariadbd.err"),
		"port=" + strconv.Itoa(port),
		"bind-address=127.0.0.1",
		"skip-name-resolve",
		"local-infile=1",
		"innodb_buffer_pool_size=" + strconv.FormatInt(c.BufferPool, 10),
		"innodb_buffer_pool_load_at_startup=OFF",
		"innodb_buffer_pool_dump_at_shutdown=OFF",
		"innodb_doublewrite=ON",
		"innodb_flush_log_at_trx_commit=1",
		"innodb_flush_method=O_DIRECT",
		"innodb_log_file_size=96M",
		"innodb_max_dirty_pages_pct=75",
		"innodb_lru_scan_depth=1024",
	}
	if c.Binlog {
		lines = append(lines, "log-bin="+filepath.Join(c.DataDir, "binlog"), "server-id=1", "binlog_format=ROW", "sync_binlog=1")
	}
	keys := make([]string, 0, len(c.Settings))
	for k := range c.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if c.Settings[k] == "" {
			lines = append(lines, k) // an option alone, like skip-innodb-adaptive-hash-index
			continue
		}
		lines = append(lines, k+"="+c.Settings[k])
	}
	return strings.Join(lines, "\n") + "\n"
}

// socket is the server's Unix socket: clients here use TCP, but mariadbd makes one all the same.
func (c ServerConfig) socket() string {
	dir := c.SocketDir
	if dir == "" {
		dir = c.RunDir
	}
	return filepath.Join(dir, "mariadbd.sock")
}

// maxSocketPath is the longest socket path mariadbd takes ("The socket file path is too long (>
// 107)": sun_path's 108 bytes, its NUL included).
const maxSocketPath = 107

// Server is a running MariaDB.
type Server struct {
	Port  int
	DB    *sql.DB
	child *proc.Child
	cfg   ServerConfig
	progs Programs
	// logStart is the error log's size when this server started: its own lines follow.
	logStart int64
	// socketDir is the directory Start made for the socket, removed by Stop ("": none made).
	socketDir string
}

// Start initialises the data directory if it is empty, starts mariadbd in the instance and waits
// until it answers.
func Start(ctx context.Context, progs Programs, cfg ServerConfig) (*Server, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	madeSocketDir := ""
	if cfg.SocketDir == "" && len(cfg.socket()) > maxSocketPath {
		// A long run directory (a user's --workdir): the socket goes to a short directory of its
		// own, made here and removed with the server.
		if madeSocketDir, err = os.MkdirTemp("", "persistlab-mariadb-"); err != nil {
			return nil, err
		}
		cfg.SocketDir = madeSocketDir
	}
	started := false
	defer func() {
		if !started && madeSocketDir != "" {
			os.RemoveAll(madeSocketDir)
		}
	}()
	optionFile := filepath.Join(cfg.RunDir, "my.cnf")
	if err := os.WriteFile(optionFile, []byte(cfg.Options(port)), 0o644); err != nil {
		return nil, err
	}
	wrap := func(args ...string) []string { return append(append([]string{}, cfg.Wrap...), args...) }
	errLog := filepath.Join(cfg.RunDir, "mariadbd.err")
	if entries, _ := os.ReadDir(cfg.DataDir); len(entries) == 0 {
		// --defaults-file must come first, or mariadbd refuses it.
		args := wrap(progs.InstallDB, "--defaults-file="+optionFile, "--auth-root-authentication-method=normal", "--skip-test-db")
		cmd := proc.Command(ctx, args[0], args[1:]...)
		logStart := fileSize(errLog)
		if err := proc.RunLogged(cmd, filepath.Join(cfg.RunDir, "mariadb-install-db.log"), proc.MaxOutputLines); err != nil {
			// Its own output is advice; why the bootstrap server failed is in the error log.
			why := logErrors(errLog, logStart)
			if why == "" {
				why = TailText(proc.OutputOf(err), 800)
			}
			if ce, ok := errors.AsType[*proc.CommandError](err); ok {
				err = ce.Err
			}
			return nil, &proc.CommandError{Args: []string{"mariadb-install-db"}, Output: why, Err: err}
		}
	}
	logStart := fileSize(errLog)
	child, err := proc.Start("mariadbd", filepath.Join(cfg.RunDir, "mariadbd.out"), os.Environ(), wrap(progs.Server, "--defaults-file="+optionFile)...)
	if err != nil {
		return nil, err
	}
	s := &Server{Port: port, child: child, cfg: cfg, progs: progs, logStart: logStart}
	if err := s.waitReady(ctx, 2*time.Minute); err != nil {
		s.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	started, s.socketDir = true, madeSocketDir
	return s, nil
}

// DSN is the server's address for a client: root over loopback TCP.
func (s *Server) DSN(db string) string {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName = "root", "tcp", "127.0.0.1:"+strconv.Itoa(s.Port), db
	return c.FormatDSN()
}

func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		ping, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = db.PingContext(ping)
		cancel()
		if err == nil {
			s.DB = db
			return nil
		}
		if s.child.Exited() || time.Now().After(deadline) || ctx.Err() != nil {
			db.Close()
			why := logErrors(filepath.Join(s.cfg.RunDir, "mariadbd.err"), s.logStart)
			if why == "" {
				why = "its log: " + s.ErrorLog(1200)
			}
			return fmt.Errorf("mariadbd did not answer (%v): %s", err, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ErrorLog is the end of the server's error log, for messages.
func (s *Server) ErrorLog(n int) string {
	b, err := os.ReadFile(filepath.Join(s.cfg.RunDir, "mariadbd.err"))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return TailText(string(b), n)
}

// Pid is mariadbd's process id.
func (s *Server) Pid() int { return s.child.Pid() }

// Stop shuts the server down (SIGTERM: a clean shutdown; dirty pages are not written back first,
// innodb_fast_shutdown=2, as the data is not kept) and waits for it.
func (s *Server) Stop(ctx context.Context) error {
	if s.DB != nil {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, _ = s.DB.ExecContext(c, "SET GLOBAL innodb_fast_shutdown = 2")
		cancel()
		s.DB.Close()
		s.DB = nil
	}
	err := s.child.Stop(ctx)
	if s.socketDir != "" {
		err = errors.Join(err, os.RemoveAll(s.socketDir))
		s.socketDir = ""
	}
	return err
}

// Kill ends the server at once, as a lost instance.
func (s *Server) Kill() { s.child.SignalKill() }

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// maxErrorLines bounds the [ERROR] lines quoted: the first say why, the last is "Aborting".
const maxErrorLines = 8

// logErrors is the [ERROR] lines the error log gained after offset, without their timestamps,
// joined; "" if none.
func logErrors(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	// A failed start writes a few KiB; a megabyte of it is more than any start says.
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, offset, 1<<20), 1<<20))
	if err != nil {
		return ""
	}
	var found []string
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, "[ERROR]"); i >= 0 {
			found = append(found, strings.TrimSpace(line[i:]))
		}
	}
	if len(found) > maxErrorLines {
		found = append(found[:maxErrorLines-1], "...", found[len(found)-1])
	}
	return strings.Join(found, "; ")
}

// TailText is the last n bytes of s, trimmed, marked where cut: the end of a log for a message.
func TailText(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

// Status reads SHOW GLOBAL STATUS as numbers (the counters that are numbers).
func Status(ctx context.Context, db *sql.DB) (map[string]float64, error) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out, rows.Err()
}
