// Package bulkload is seed 001's workload: a large CSV loaded with `LOAD DATA LOCAL INFILE` into
// MySQL by one or two client processes, each into its own table, with the server's write rate
// watched every second. The real MariaDB (Debian's) runs with its data directory on the backend's
// target; the real `mariadb` client loads a file generated on this machine's own disk, as the
// seed's client VM did.
package bulkload

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"persistlab/backend"
	"persistlab/internal/disk"
	"persistlab/internal/mariadb"
	"persistlab/internal/proc"
	"persistlab/internal/tools"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// Name is the workload's name in scenarios.
const Name = "bulkload"

// Params are the workload's parameters.
var Params = []param.Param{
	{Name: "rows", Kind: param.KindInt, Default: "2000000", Min: 1, Max: 1e10, Help: "rows each loader loads (the seed: 31,017,889)"},
	{Name: "row_bytes", Kind: param.KindSize, Default: "1000", Min: MinRowBytes, Max: 60000, Help: "bytes per CSV line (the seed: about 1,000)"},
	{Name: "loaders", Kind: param.KindInt, Default: "1", Min: 1, Max: 8, Help: "client processes, each loading its own copy into its own table (the seed: 1 or 2)"},
	{Name: "buffer_pool", Kind: param.KindSize, Default: "256MiB", Min: 8 << 20, Max: 1 << 40,
		Help: "innodb_buffer_pool_size (the seed's 43 GB table was about 8 times its instance's pool)"},
	{Name: "binlog", Kind: param.KindBool, Default: "false", Help: "binary log on (ROW, sync_binlog=1), as Cloud SQL's backups need"},
	{Name: "seed", Kind: param.KindInt, Default: "1", Min: 0, Max: 1 << 62, Help: "the generated rows; one seed, one file"},
}

// Metrics are what a bulkload cell reports; rates are means of the per-second samples over the
// steady middle of the load (its first and last tenth left out), as the seed read its plateaus.
var Metrics = []workload.Metric{
	{Name: "total_s", Unit: "s", Help: "from the first loader's start to the last one's end"},
	{Name: "rows_loaded", Unit: "count", HigherBetter: true},
	{Name: "rows_per_s", Unit: "rows/s", HigherBetter: true},
	{Name: "pages_written_per_s", Unit: "pages/s", HigherBetter: true, Help: "Innodb_pages_written: the seed's \"InnoDB pages written\""},
	{Name: "pages_written", Unit: "pages", Help: "Innodb_pages_written's growth from the load's start to its last sample"},
	{Name: "data_written_mib_s", Unit: "MiB/s", Help: "Innodb_data_written: data files, doublewrite included, redo not"},
	{Name: "log_written_mib_s", Unit: "MiB/s", Help: "Innodb_os_log_written: redo log"},
	{Name: "received_mib_s", Unit: "MiB/s", HigherBetter: true, Help: "Bytes_received: the seed's \"Network Bytes Received\""},
	{Name: "data_fsyncs_per_s", Unit: "1/s", Help: "Innodb_data_fsyncs"},
	{Name: "server_cpu_util", Unit: "share", Help: "mariadbd's CPU as a share of one CPU"},
	{Name: "dirty_pct", Unit: "%", Help: "dirty pages in the buffer pool"},
	{Name: "table_mib", Unit: "MiB", Help: "data_length + index_length of the loaded tables"},
	{Name: "warnings", Unit: "count", Help: "MariaDB's warnings over every load: a malformed row is one"},
	{Name: "steady_rows_per_s", Unit: "rows/s", HigherBetter: true, Help: "rows written per second over the load's steady middle (the first and last tenth of its samples left out)"},
	{Name: "checkpoint_age_mib", Unit: "MiB", Help: "Innodb_checkpoint_age over the steady middle: redo written but not yet checkpointed"},
}

func init() {
	workload.Register(workload.Info{
		Name:        Name,
		Description: "seed 001's LOAD DATA LOCAL INFILE of a large CSV into MariaDB, write rates each second",
		Params:      Params,
		Metrics:     Metrics,
		Needs:       backend.Needs{MySQL: true},
		New:         New,
		Sections:    map[string]string{"server": "a mapping of further MariaDB options, like {innodb_io_capacity: 2000}"},
	})
}

// Workload is MariaDB, found, and the server options a scenario adds.
type Workload struct {
	progs    mariadb.Programs
	settings map[string]string
}

var _ workload.Workload = (*Workload)(nil)

// New checks the section `server` (further server options, name: value, written after
// persistlab's own, so they win; only options that shape performance) and finds MariaDB.
func New(spec scenario.Workload) (workload.Workload, error) {
	settings := map[string]string{}
	for name, section := range spec.Sections {
		if name != "server" {
			return nil, &param.FieldError{Field: "workload." + name, Value: fmt.Sprint(section),
				Allowed: "a parameter of bulkload, or server: a mapping of further mariadbd options, like {innodb_io_capacity: 1000}"}
		}
		var err error
		if settings, err = serverSettings(section); err != nil {
			return nil, err
		}
	}
	progs, err := mariadb.FindPrograms()
	if err != nil {
		return nil, &param.FieldError{Field: "workload.type", Value: Name, Allowed: "a workload whose program is installed: " + err.Error()}
	}
	return &Workload{progs: progs, settings: settings}, nil
}

// Versions implements workload.Workload.
func (w *Workload) Versions() map[string]string { return map[string]string{"mariadb": w.progs.Version} }

// settings are one cell's parameters, read.
type settings struct {
	Rows       int64  `param:"rows"`
	RowBytes   int    `param:"row_bytes"`
	Loaders    int    `param:"loaders"`
	BufferPool int64  `param:"buffer_pool"`
	Binlog     bool   `param:"binlog"`
	Seed       uint64 `param:"seed"`
}

func read(p workload.Params) (settings, error) {
	var s settings
	err := param.Decode(Params, p, &s)
	return s, param.Under("workload.", err)
}

// Check implements workload.Workload: the buffer pool must fit this machine (the instance's own
// bound is known only once its backend starts).
func (w *Workload) Check(_ context.Context, p workload.Params) error {
	s, err := read(p)
	if err != nil {
		return err
	}
	memory, err := machineMemory()
	if err != nil {
		return err
	}
	return checkPool(p["buffer_pool"], s.BufferPool, memory, "this machine")
}

// checkInstancePool refuses a buffer pool the emulated instance (Target.Wrap's cgroup) cannot hold.
func checkInstancePool(ctx context.Context, env workload.Env, pool int64) error {
	memory, err := machineMemory()
	if err != nil {
		return err
	}
	what := "this machine"
	limit, err := instanceMemory(ctx, env.Target.Wrap)
	if err != nil {
		return err
	}
	if limit > 0 && limit < memory {
		memory, what = limit, "the instance"
	}
	return checkPool(env.Params["buffer_pool"], pool, memory, what)
}

// Start writes each loader's CSV to the cell's directory (this machine's disk: the seed's client
// VM), starts MariaDB with its data on the target, and creates the tables.
func (w *Workload) Start(ctx context.Context, env workload.Env) (workload.Instance, error) {
	s, err := read(env.Params)
	if err != nil {
		return nil, err
	}
	if env.Target.DSN == "" {
		if err := checkInstancePool(ctx, env, s.BufferPool); err != nil {
			return nil, err
		}
	}
	data, csv := w.space(s)
	if err := disk.Room(env.CellDir, csv, "the load's CSV"); err != nil {
		return nil, err
	}
	if env.Target.DSN == "" {
		if err := disk.Room(env.Target.Dir, data, "MariaDB's data for the load"); err != nil {
			return nil, err
		}
	}
	in := &instance{w: w, s: s, env: env}
	for i := 0; i < s.Loaders; i++ {
		path := filepath.Join(env.CellDir, fmt.Sprintf("load-%d.tsv", i+1))
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		_, err = Rows(f, s.Seed, int64(i)*s.Rows, s.Rows, s.RowBytes)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		in.files = append(in.files, path)
		if err != nil {
			in.removeFiles()
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	if env.Target.DSN != "" {
		if err := in.connect(ctx, env.Target.DSN); err != nil {
			in.removeFiles()
			return nil, err
		}
	} else {
		// The server runs in the emulated instance (Target.Wrap), on the cell's CPUs.
		cfg := mariadb.ServerConfig{DataDir: filepath.Join(env.Target.Dir, "mysql"), RunDir: env.CellDir, BufferPool: s.BufferPool, Binlog: s.Binlog,
			Wrap: tools.Pinned(env.CPUs, env.Target.Wrap...), Settings: w.settings}
		srv, err := mariadb.Start(ctx, w.progs, cfg)
		if err != nil {
			in.removeFiles()
			return nil, err
		}
		in.srv, in.db = srv, srv.DB
		in.host, in.port, in.user = "127.0.0.1", strconv.Itoa(srv.Port), "root"
	}
	// A database of the run's own: on a user's server it must not exist yet, and goes at Stop.
	var exists int
	if err := in.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", Database).Scan(&exists); err != nil {
		in.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("read the server's databases: %w", err)
	}
	if exists > 0 {
		in.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("the server already has a database %s (a run's that did not finish?): drop it, or use another server", Database)
	}
	stmts := []string{"CREATE DATABASE " + Database}
	for i := 0; i < s.Loaders; i++ {
		stmts = append(stmts, fmt.Sprintf(CreateTable, Database+"."+tableName(i), PayloadMax(s.RowBytes)))
	}
	for _, q := range stmts {
		if _, err := in.db.ExecContext(ctx, q); err != nil {
			in.Stop(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("%s: %w", strings.SplitN(q, "(", 2)[0], err)
		}
		in.created = true
	}
	return in, nil
}

// SpaceNeed implements workload.SpaceNeeder: MariaDB's data on the target, the CSV in the cell's
// directory (space).
func (w *Workload) SpaceNeed(p workload.Params) (target, cellDir int64, err error) {
	s, err := read(p)
	if err != nil {
		return 0, 0, err
	}
	target, cellDir = w.space(s)
	return target, cellDir, nil
}

// DefaultRedoBytes is the server's innodb_log_file_size unless the section server sets it (the
// 96M ServerConfig.options writes); innodbOwnBytes is what InnoDB keeps besides (system and undo tablespaces,
// doublewrite, temporary tablespace), assumed.
const (
	DefaultRedoBytes = 96 << 20
	innodbOwnBytes   = 160 << 20
)

// space is what a cell lays out: each loader's CSV in the cell's directory; on the target the
// tables, their indexes and the binary log about half as much again, the redo log
// (innodb_log_file_size), and InnoDB's other files. Assumed, not measured: the estimate only
// decides whether a run is refused for want of room.
func (w *Workload) space(s settings) (data, csv int64) {
	csv = s.Rows * int64(s.RowBytes) * int64(s.Loaders) // at most 1e10 x 60000 x 8: an int64 holds it
	return csv + csv/2 + w.redoBytes() + innodbOwnBytes, csv
}

// redoBytes is the redo log's size: the section server's innodb_log_file_size, as mariadbd reads a
// size (K, M, G, T: powers of 1024), else the default.
func (w *Workload) redoBytes() int64 {
	for k, v := range w.settings {
		if normalOption(k) != "innodb_log_file_size" {
			continue
		}
		if n, err := param.ParseSize(v); err == nil && n > 0 {
			return n
		}
	}
	return DefaultRedoBytes
}

// Database is where the run's tables go; it is the run's alone and dropped at its end.
const Database = "persistlab_bulk"

func tableName(i int) string { return "load_" + strconv.Itoa(i+1) }

// connect uses a server the backend names: the client reaches it as the DSN says.
func (in *instance) connect(ctx context.Context, dsn string) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("DSN: %w", err)
	}
	if cfg.Net != "tcp" {
		return fmt.Errorf("DSN: network %q: the mariadb client here reaches servers over tcp", cfg.Net)
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		host, port = cfg.Addr, "3306"
	}
	in.host, in.port, in.user, in.password = host, port, cfg.User, cfg.Passwd
	cfg.DBName = ""
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(c); err != nil {
		db.Close()
		return fmt.Errorf("the server at %s does not answer: %w", cfg.Addr, err)
	}
	in.db = db
	return nil
}

type instance struct {
	w       *Workload
	s       settings
	env     workload.Env
	srv     *mariadb.Server // nil on a server the backend names
	db      *sql.DB
	created bool // the run's database exists and is the run's to drop
	files   []string

	host, port, user, password string
}

// loadResult is what one client's LOAD DATA said.
type loadResult struct {
	rows, warnings int64
	samples        []string
	err            error
}

// load runs the real client: LOAD DATA LOCAL INFILE, then, in the same session, the rows it
// loaded, its warning count and the first warnings.
func (in *instance) load(ctx context.Context, i int) loadResult {
	script := fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE %s.%s CHARACTER SET latin1 FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' (%s);\n"+
		"SELECT ROW_COUNT(), @@warning_count;\nSHOW WARNINGS LIMIT 5;\n", in.files[i], Database, tableName(i), Columns)
	cmd := proc.Command(ctx, in.w.progs.Client, "--no-defaults", "--protocol=TCP", "-h", in.host, "-P", in.port, "-u", in.user,
		"--local-infile=1", "--batch", "--skip-column-names")
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = os.Environ()
	if in.password != "" {
		cmd.Env = append(cmd.Env, "MYSQL_PWD="+in.password) // not on the command line, where ps shows it
	}
	// Its stdout is two numbers and at most 5 warnings; of its stderr only the end is shown.
	stdout, stderr := proc.NewLimitedBuffer("the mariadb client", 1<<20), proc.NewTailWriter(4<<10)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Start()
	if err == nil {
		proc.Started(cmd) // a long load: clean stops it if persistlab is killed
		err = cmd.Wait()
	}
	if err == nil {
		err = stdout.Err()
	}
	if err != nil {
		failed := &proc.CommandError{Args: []string{"mariadb client"}, Output: mariadb.TailText(string(stderr.Bytes()), 600), Err: err}
		return loadResult{err: fmt.Errorf("loading %s: %w", filepath.Base(in.files[i]), failed)}
	}
	return parseLoadOutput(stdout.String())
}

// parseLoadOutput reads the client's batch output: "rows\twarnings", then warning lines.
func parseLoadOutput(out string) loadResult {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r loadResult
	if len(lines) == 0 {
		r.err = fmt.Errorf("the client printed nothing after LOAD DATA")
		return r
	}
	f := strings.Split(lines[0], "\t")
	if len(f) != 2 {
		r.err = fmt.Errorf("the client printed %q, want rows and warning count", lines[0])
		return r
	}
	var err1, err2 error
	r.rows, err1 = strconv.ParseInt(f[0], 10, 64)
	r.warnings, err2 = strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		r.err = fmt.Errorf("the client printed %q, want two numbers", lines[0])
	}
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" {
			r.samples = append(r.samples, strings.ReplaceAll(l, "\t", " "))
		}
	}
	return r
}

// counterRates are the status counters sampled each second and the series each becomes.
var counterRates = []struct {
	status, series string
	scale          float64
}{
	{"Innodb_pages_written", "pages_written_per_s", 1},
	{"Innodb_data_written", "data_written_mib_s", 1.0 / (1 << 20)},
	{"Innodb_os_log_written", "log_written_mib_s", 1.0 / (1 << 20)},
	{"Bytes_received", "received_mib_s", 1.0 / (1 << 20)},
	{"Innodb_data_fsyncs", "data_fsyncs_per_s", 1},
	{"Handler_write", "rows_written_per_s", 1},
}

// Drive runs every loader at once and samples the server each second until they end.
func (in *instance) Drive(ctx context.Context, _ time.Duration) (*workload.Result, error) {
	res := workload.NewResult()
	// The counters' baseline is read first, so the per-second samples tile the run from its start.
	prev, err := mariadb.Status(ctx, in.db)
	if err != nil {
		return nil, fmt.Errorf("read the server's status: %w", err)
	}
	baseline := prev
	prevCPU := in.serverCPU()
	start := time.Now()
	prevAt := start
	results := make([]loadResult, in.s.Loaders)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = in.load(ctx, i)
		}(i)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	sample := func() {
		now := time.Now()
		st, err := mariadb.Status(ctx, in.db)
		if err != nil {
			res.Errors = appendOnce(res.Errors, "status: "+err.Error())
			return
		}
		cpu := in.serverCPU()
		dt, t := now.Sub(prevAt).Seconds(), now.Sub(start).Seconds()
		for _, c := range counterRates {
			res.Series[c.series] = append(res.Series[c.series], measure.Point{T: t, V: (st[c.status] - prev[c.status]) * c.scale / dt})
		}
		if in.srv != nil { // a server of our own: its CPU is seen
			res.Series["server_cpu_util"] = append(res.Series["server_cpu_util"], measure.Point{T: t, V: (cpu - prevCPU).Seconds() / dt})
		}
		if total := st["Innodb_buffer_pool_pages_total"]; total > 0 {
			res.Series["dirty_pct"] = append(res.Series["dirty_pct"], measure.Point{T: t, V: 100 * st["Innodb_buffer_pool_pages_dirty"] / total})
		}
		res.Series["checkpoint_age_mib"] = append(res.Series["checkpoint_age_mib"], measure.Point{T: t, V: st["Innodb_checkpoint_age"] / (1 << 20)})
		prev, prevCPU, prevAt = st, cpu, now
	}
loop:
	for {
		select {
		case <-tick.C:
			sample()
		case <-done:
			break loop
		case <-ctx.Done():
			<-done
			return nil, context.Cause(ctx)
		}
	}
	res.Elapsed = time.Since(start)
	sample()
	m := res.Metrics
	m["pages_written"] = prev["Innodb_pages_written"] - baseline["Innodb_pages_written"]
	for _, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		m["rows_loaded"] += float64(r.rows)
		m["warnings"] += float64(r.warnings)
		for _, w := range r.samples {
			res.Errors = appendOnce(res.Errors, "MariaDB: "+w)
		}
	}
	m["total_s"] = res.Elapsed.Seconds()
	m["rows_per_s"] = m["rows_loaded"] / res.Elapsed.Seconds()
	for name, series := range res.Series {
		m[metricOf(name)] = SteadyMean(series)
	}
	if want := float64(in.s.Rows) * float64(in.s.Loaders); m["rows_loaded"] != want {
		res.Errors = appendOnce(res.Errors, fmt.Sprintf("loaded %.0f rows of %.0f", m["rows_loaded"], want))
	}
	// InnoDB's sizes in information_schema come from its statistics, stale right after a load.
	for i := 0; i < in.s.Loaders; i++ {
		if _, err := in.db.ExecContext(ctx, "ANALYZE TABLE "+Database+"."+tableName(i)); err != nil {
			res.Errors = appendOnce(res.Errors, "analyze: "+err.Error())
		}
	}
	var size float64
	if err := in.db.QueryRowContext(ctx, "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = ?", Database).Scan(&size); err == nil {
		m["table_mib"] = size / (1 << 20)
	}
	res.Facts["client_version"] = in.w.progs.Version
	var version string
	if in.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version) == nil {
		res.Facts["server_version"] = version
	}
	res.Facts["server_options"] = mariadb.ServerConfig{DataDir: "DATADIR", RunDir: "RUNDIR", BufferPool: in.s.BufferPool, Binlog: in.s.Binlog, Settings: in.w.settings}.Options(0)
	return res, nil
}

// metricOf names a series' steady mean: the series' own name, except the row rate (the
// metric rows_per_s is the whole run's).
func metricOf(series string) string {
	if series == "rows_written_per_s" {
		return "steady_rows_per_s"
	}
	return series
}

// SteadyMean is a per-second series' time-weighted mean over its steady middle: the first and
// last tenth of the samples left out (start-up, and the last pages' flush). A mean, not a median:
// InnoDB writes pages in bursts (about 2,000 every 3 s here, with none between), so the median
// second writes nothing; Stackdriver, where the seed read its plateaus, plots means per minute.
func SteadyMean(s []measure.Point) float64 {
	cut := len(s) / 10
	var sum, span float64
	for i := cut; i < len(s)-cut; i++ {
		prev := 0.0
		if i > 0 {
			prev = s[i-1].T
		}
		if dt := s[i].T - prev; dt > 0 {
			sum += s[i].V * dt
			span += dt
		}
	}
	if span == 0 {
		return 0
	}
	return sum / span
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	if len(list) >= 20 {
		return list
	}
	return append(list, s)
}

func (in *instance) removeFiles() {
	for _, f := range in.files {
		os.Remove(f)
	}
}

// serverCPU is mariadbd's CPU time so far, when the server is the run's own.
func (in *instance) serverCPU() time.Duration {
	if in.srv == nil {
		return 0
	}
	cpu, _ := proc.CPUTime(in.srv.Pid())
	return cpu
}

// Stop drops the run's database from a server the backend named, or stops the run's own server,
// and removes the generated files.
func (in *instance) Stop(ctx context.Context) error {
	defer in.removeFiles()
	if in.srv != nil {
		return in.srv.Stop(ctx)
	}
	if in.db == nil {
		return nil
	}
	defer in.db.Close()
	if in.created {
		if _, err := in.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+Database); err != nil {
			return fmt.Errorf("drop the run's database %s: %w", Database, err)
		}
	}
	return nil
}
