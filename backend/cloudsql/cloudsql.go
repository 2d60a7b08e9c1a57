// Package cloudsql is a managed MySQL server as Cloud SQL runs one, on the lab: the real MariaDB,
// its data on an emulated Cloud SQL disk (a lab volume of type cloudsql-ssd, whose IOPS and
// throughput grow with its size) in a machine of its own (the tier's memory bounds the server's
// page cache), reached by DSN over loopback. The app's instance keeps no data of its own: a crash
// loses the app and its disk, never the server, which is another machine.
package cloudsql

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"persistlab/backend"
	volumebackend "persistlab/backend/volume"
	"persistlab/internal/mariadb"
	"persistlab/lab"
	"persistlab/lab/network"
	"persistlab/lab/volume"
	"persistlab/param"
)

// Name is the backend's name in scenarios.
const Name = "cloudsql"

// The optional capabilities the runner finds by type assertion, checked at compile time.
var (
	_ backend.Crasher       = (*Backend)(nil)
	_ backend.CeilingProber = (*Backend)(nil)
	_ backend.ProbeSpacer   = (*Backend)(nil)
	_ backend.Sampler       = (*Backend)(nil)
	_ backend.LocalCopier   = (*Backend)(nil)
	_ backend.MultiInstance = (*Backend)(nil)
)

// DefaultMachine is the smallest dedicated-core Cloud SQL machine; DefaultSize Cloud SQL's
// smallest disk.
const (
	DefaultMachine = "db-custom-1-3840"
	DefaultSize    = 10 << 30
)

// BufferPoolShare is the share of the machine's memory the server's buffer pool takes. Published
// as an upper bound: Cloud SQL for MySQL sets innodb_buffer_pool_size "up to 72% of the instance
// memory, depending on the instance size" (https://cloud.google.com/mysql/memory-usage, read
// 2026-12-02 in a stored copy); used as it is, which is right for large machines and at most
// generous for small ones, whose share the page does not give.
const BufferPoolShare = 0.72

// RedoLog is Cloud SQL's redo log: two files of 512 MB in MySQL 5.7 ("Cloud SQL Flags Tuning",
// gist.github.com/stfeng2/7143a08e8921ef4a88b3404e827390c9, September 2017, by Cloud SQL's
// performance lead), one file of the whole size in MariaDB.
const RedoLog = "1G"

// Machines are the Cloud SQL machines an entry may name: the volume catalogue's db- instances.
func Machines() []string {
	var out []string
	for _, in := range volume.Instances {
		if strings.HasPrefix(in.Name, "db-") {
			out = append(out, in.Name)
		}
	}
	return out
}

// Options are the backend's options.
var Options = []param.Param{
	{Name: "machine", Kind: param.KindEnum, Default: DefaultMachine, Allowed: Machines(),
		Help: "the Cloud SQL machine: its memory bounds the server's page cache, and sets its buffer pool (72%)"},
	{Name: "size", Kind: param.KindSize, Default: param.FormatSize(DefaultSize), Min: float64(volume.CloudSQLMinGiB) * (1 << 30), Max: float64(volume.CloudSQLMaxGiB) * (1 << 30), Unit: "bytes",
		Help: "the Cloud SQL SSD disk's size: its IOPS and throughput grow with it (lab volume type cloudsql-ssd)"},
	{Name: "binlog", Kind: param.KindBool, Default: "true",
		Help: "the binary log, synced at each commit (ROW): Cloud SQL keeps one for point-in-time recovery, on by default for a new instance (assumed from the console's defaults); false: commits sync the redo log alone"},
	{Name: "network_rtt", Kind: param.KindDuration, Default: "0s", Min: 0, Max: network.MaxRTT.Seconds(),
		Help: "a round trip added to every exchange between the app and the server, in each direction half (Cloud Run to Cloud SQL in one region; assumed 0: no published figure, and loopback's own is tens of microseconds); each statement waits it once"},
	{Name: "ceiling_probe", Kind: param.KindSize, Default: param.FormatSize(volumebackend.DefaultCeilingProbe), Min: 0, Max: volumebackend.MaxCeilingProbe, Unit: "bytes",
		Help: "bytes written and read back on the disk's emulator with the model off before the first cell (0: no probe)"},
}

func init() {
	backend.RegisterInfo(backend.Info{Name: Name,
		Description: "a managed MySQL server as Cloud SQL runs one: the real MariaDB on an emulated Cloud SQL SSD disk in a machine of its own, reached by DSN over loopback, through a link adding option network_rtt to each round trip (0 by default: no published figure); for workloads that can use a server (counter, bulkload, an http app with a mysql_env section); needs root",
		Options:     Options, New: New, CloudModel: "volume", VolumeModel: model})
}

// model describes an entry's disk for the report, as the volume backend does.
func model(options map[string]string) (lab.VolumeModel, bool) {
	o, err := volumeOptions(options)
	if err != nil {
		return lab.VolumeModel{}, false
	}
	return volumebackend.Model(o)
}

// settings are the backend's options, read.
type settings struct {
	Machine      string        `param:"machine"`
	Size         int64         `param:"size"`
	Binlog       bool          `param:"binlog"`
	NetworkRTT   time.Duration `param:"network_rtt"`
	CeilingProbe int64         `param:"ceiling_probe"`
}

// volumeOptions are the disk's options as the volume backend takes them.
func volumeOptions(options map[string]string) (map[string]string, error) {
	var s settings
	if err := param.Decode(Options, options, &s); err != nil {
		return nil, err
	}
	return map[string]string{"type": "cloudsql-ssd", "size": strconv.FormatInt(s.Size>>30, 10) + "GiB", "instance": s.Machine,
		"ceiling_probe": strconv.FormatInt(s.CeilingProbe, 10)}, nil
}

// Backend is one Cloud SQL instance on the lab, made fresh for each cell, and the app instance's
// disk beside it.
type Backend struct {
	env        backend.Env
	disk       backend.Backend // the volume backend: the server's disk and machine
	progs      mariadb.Programs
	binlog     bool
	bufferPool int64
	rtt        time.Duration // the network's round trip between the app and the server
	srv        *mariadb.Server
	link       *network.Link // the network, when it adds a round trip
	app        string        // the current app instance's directory
	instances  int           // app instances started, the first and each recovered one
}

// New checks the options, the programs and the workload, starting nothing.
func New(env backend.Env) (backend.Backend, error) {
	if !env.Needs.MySQL {
		return nil, fmt.Errorf("backend %q: the workload does not use a MySQL server: want one that does (counter, bulkload, or an http app with a mysql_env section)", Name)
	}
	var s settings
	if err := param.Decode(Options, env.Options, &s); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	opts, err := volumeOptions(env.Options)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	disk, err := volumebackend.New(backend.Env{WorkDir: filepath.Join(env.WorkDir, "server"), Options: opts, Keep: env.Keep, Warn: env.Warn})
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	progs, err := mariadb.FindPrograms()
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	var memory int64
	for _, in := range volume.Instances {
		if in.Name == s.Machine {
			memory = in.MemoryBytes
		}
	}
	return &Backend{env: env, disk: disk, progs: progs, binlog: s.Binlog, rtt: s.NetworkRTT, bufferPool: int64(BufferPoolShare*float64(memory)) &^ (1<<20 - 1)}, nil
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return Name }

// Versions implements backend.Backend: the server's and the disk's programs.
func (b *Backend) Versions() map[string]string {
	v := map[string]string{"mariadb": b.progs.Version}
	for k, x := range b.disk.Versions() {
		v[k] = x
	}
	return v
}

// Start makes the disk, starts the server in its machine and gives the app a directory of its
// own instance and the server's DSN.
func (b *Backend) Start(ctx context.Context) (backend.Target, error) {
	if b.srv != nil {
		return backend.Target{}, fmt.Errorf("backend %q: started twice", Name)
	}
	t, err := b.disk.Start(ctx)
	if err != nil {
		return backend.Target{}, err
	}
	run := filepath.Join(b.env.WorkDir, "server-run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		return backend.Target{}, errors.Join(err, b.disk.Stop(ctx))
	}
	cfg := mariadb.ServerConfig{DataDir: filepath.Join(t.Dir, "mysql"), RunDir: run, Wrap: t.Wrap,
		BufferPool: b.bufferPool, Binlog: b.binlog, Settings: map[string]string{"innodb_log_file_size": RedoLog}}
	var srv *mariadb.Server
	start := func(ctx context.Context) (err error) {
		srv, err = mariadb.Start(ctx, b.progs, cfg)
		return err
	}
	// Making the instance is Cloud SQL's set-up, not the app's load: the server's bootstrap (its
	// system tables, a 1G redo log) runs with the disk's model off, or a 10 GiB disk's 300 IOPS
	// would take each cell 15 s before its first request.
	if t.Unmetered != nil {
		err = t.Unmetered(ctx, start)
	} else {
		err = start(ctx)
	}
	if err != nil {
		return backend.Target{}, errors.Join(fmt.Errorf("backend %q: %w", Name, err), b.disk.Stop(context.WithoutCancel(ctx)))
	}
	b.srv = srv
	if b.rtt > 0 {
		if b.link, err = network.Listen("127.0.0.1:"+strconv.Itoa(srv.Port), b.rtt); err != nil {
			return backend.Target{}, errors.Join(fmt.Errorf("backend %q: %w", Name, err), b.Stop(context.WithoutCancel(ctx)))
		}
	}
	return b.newInstance(true)
}

// dsn is the server as the app reaches it: through the network's link, where there is one.
func (b *Backend) dsn() string {
	if b.link == nil {
		return b.srv.DSN("")
	}
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr = "root", "tcp", b.link.Addr()
	return c.FormatDSN()
}

// newInstance makes the directory of a new app instance: its own disk, which holds nothing the
// server needs. The current one is what a crash loses.
func (b *Backend) newInstance(current bool) (backend.Target, error) {
	b.instances++
	dir := filepath.Join(b.env.WorkDir, fmt.Sprintf("instance-%d", b.instances))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
	}
	if current {
		b.app = dir
	}
	return backend.Target{Dir: dir, DSN: b.dsn()}, nil
}

// AddInstance implements backend.MultiInstance: another app instance, a directory of its own,
// against the same server, as Cloud Run scales a service out in front of one Cloud SQL instance.
// The server is not the instance's, so wrap (the instance's limit for helpers) has nothing to
// hold.
func (b *Backend) AddInstance(_ context.Context, _ []string) (backend.Target, error) {
	if b.srv == nil {
		return backend.Target{}, fmt.Errorf("backend %q: not started", Name)
	}
	return b.newInstance(false)
}

// Stats are the disk's counters: the server's I/O as the Cloud SQL disk saw and billed it.
func (b *Backend) Stats() backend.Stats { return b.disk.Stats() }

// SampledStats implements backend.Sampler: the disk's.
func (b *Backend) SampledStats() []string { return b.disk.(backend.Sampler).SampledStats() }

// Stop stops the server, then unmounts and detaches the disk; the app instances' directories go
// unless the run keeps its data. Safe after a failed Start and twice.
func (b *Backend) Stop(ctx context.Context) error {
	var errs []error
	if b.link != nil {
		errs = append(errs, b.link.Close())
		b.link = nil
	}
	if b.srv != nil {
		errs = append(errs, b.srv.Stop(ctx))
		b.srv = nil
	}
	errs = append(errs, b.disk.Stop(ctx))
	if !b.env.Keep {
		for i := 1; i <= b.instances; i++ {
			errs = append(errs, os.RemoveAll(filepath.Join(b.env.WorkDir, fmt.Sprintf("instance-%d", i))))
		}
	}
	return errors.Join(errs...)
}

// Crash loses the app's instance and its disk. The server is another machine, and goes on.
func (b *Backend) Crash() error {
	if b.app == "" {
		return nil
	}
	return os.RemoveAll(b.app)
}

// Recover starts a new app instance, against the same server.
func (b *Backend) Recover(context.Context) (backend.Target, error) {
	if b.srv == nil {
		return backend.Target{}, fmt.Errorf("backend %q: not started", Name)
	}
	return b.newInstance(true)
}

// CeilingProbeBytes implements backend.ProbeSpacer: the disk's probe.
func (b *Backend) CeilingProbeBytes() int64 { return b.disk.(backend.ProbeSpacer).CeilingProbeBytes() }

// ProbeCeiling implements backend.CeilingProber: the disk's emulator with the model off.
func (b *Backend) ProbeCeiling(ctx context.Context) (lab.Ceiling, bool, error) {
	return b.disk.(backend.CeilingProber).ProbeCeiling(ctx)
}

// LocalCopies implements backend.LocalCopier: the server keeps one copy, on its disk.
func (b *Backend) LocalCopies() int { return 1 }
