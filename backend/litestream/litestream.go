// Package litestream keeps the database on local disk and has the real Litestream replicate it to
// a bucket (the lab's emulated GCS through Litestream's own gs replica), as the seed's Cloud Run
// app did.
package litestream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"persistlab/backend"
	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/internal/tools"
	"persistlab/lab/bucket"
	"persistlab/param"
)

// Name is the backend's name in scenarios.
const Name = "litestream"

// LegacyVersion is the last Litestream release before the LTX format (0.5), installed beside the
// current one by scripts/setup as litestream-0.3.13: a Rails 8 app of 2025, as in seed 000, most
// likely replicated with it. It names its GCS replicas gcs:// and writes generations of snapshots
// and WAL segments instead of LTX levels.
const LegacyVersion = "0.3.13"

// DefaultSyncInterval is Litestream's own default replica sync-interval (litestream.io/reference/config).
const DefaultSyncInterval = time.Second

// DefaultMonitorInterval is Litestream's own default db monitor-interval, in 0.3.13 and 0.5 alike
// (DefaultMonitorInterval in db.go of both, read 2026-12-01 at v0.3.13 and v0.5.16). In 0.5 each
// monitor tick with changes cuts one level-0 LTX file, and a replica's sync uploads every one
// since its last as its own object (Replica.Sync, replica.go of v0.5.16): a longer sync-interval
// delays uploads without cutting their number; a longer monitor-interval cuts it.
const DefaultMonitorInterval = time.Second

// The optional capabilities the runner finds by type assertion, checked at compile time.
var (
	_ backend.Crasher     = (*Backend)(nil)
	_ backend.Positioner  = (*Backend)(nil)
	_ backend.LagReporter = (*Backend)(nil)
	_ backend.Timeline    = (*Backend)(nil)
)

// Options are the backend's own options; the bucket model's (bucket.ModelOptions) follow them.
var Options = []param.Param{
	{Name: "sync_interval", Kind: param.KindDuration, Default: DefaultSyncInterval.String(), Min: 1e-9, Max: math.Inf(1),
		Help: "how often Litestream uploads what the database wrote since (its replica's sync-interval; its own default)"},
	{Name: "monitor_interval", Kind: param.KindDuration, Default: DefaultMonitorInterval.String(), Min: 1e-9, Max: math.Inf(1),
		Help: "how often Litestream checks the database's WAL (its db's monitor-interval; its own default). Litestream 0.5 cuts a file at each check with changes and uploads each as an object: its bucket operations follow this, not sync_interval"},
	{Name: "version", Kind: param.KindString,
		Help: LegacyVersion + " (the last release before the LTX format, installed beside the current one by scripts/setup) or the installed litestream's own version; unset: the installed litestream"},
}

func init() {
	backend.RegisterInfo(backend.Info{Name: Name, Description: "local disk, replicated by the real Litestream to the lab's emulated GCS bucket (workloads with a SQLite database only)",
		Options: append(slices.Clone(Options), bucket.ModelOptions...), New: New, CloudModel: "bucket",
		Programs: []backend.Program{{Name: "litestream", VersionArgs: []string{"version"}}, {Name: "litestream-" + LegacyVersion, VersionArgs: []string{"version"}}}})
}

// settings are the backend's own options, read.
type settings struct {
	SyncInterval    time.Duration `param:"sync_interval"`
	MonitorInterval time.Duration `param:"monitor_interval"`
	Version         string        `param:"version"`
}

// Backend is a local database replicated to a bucket by a litestream process.
type Backend struct {
	env          backend.Env
	bin          string
	model        bucket.Model
	syncInterval time.Duration
	// monitorInterval is the db's monitor-interval where the entry sets one (0: Litestream's own,
	// left out of its config as before the option was offered).
	monitorInterval time.Duration
	dir             string
	legacy          bool // Litestream 0.3: gcs:// URLs, generations/ objects

	lab     *bucket.Server
	child   *proc.Child
	version string
}

// New checks the options and finds the litestream binary.
func New(env backend.Env) (backend.Backend, error) {
	if env.Needs.SQLite == "" {
		if p := env.Needs.SQLiteParam; p != "" {
			return nil, fmt.Errorf("backend %q replicates one SQLite database, and the scenario names none: set workload.%s to the file the app keeps in {dir}, like `%s: app.db`", Name, p, p)
		}
		return nil, fmt.Errorf("backend %q replicates one SQLite database, and this workload keeps none: use local or gcsfuse", Name)
	}
	var s settings
	if err := param.Decode(Options, env.Options, &s); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	l := &Backend{env: env, syncInterval: s.SyncInterval, dir: filepath.Join(env.WorkDir, "data")}
	if _, set := env.Options["monitor_interval"]; set {
		l.monitorInterval = s.MonitorInterval
	}
	var err error
	program := "litestream"
	if s.Version == LegacyVersion {
		program, l.legacy = "litestream-"+LegacyVersion, true
	}
	if l.bin, err = tools.Find(program); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	if l.model, err = bucket.ModelFromOptions(env.Options); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	l.version = sysinfo.ProgramVersion(l.bin, "version")
	if v := s.Version; v != "" && strings.TrimPrefix(l.version, "v") != v {
		return nil, fmt.Errorf("backend %q: option version %q: want %s (installed as litestream-%s by scripts/setup) or the installed litestream's own %s, or leave it unset for that one",
			Name, v, LegacyVersion, LegacyVersion, strings.TrimPrefix(l.version, "v"))
	}
	return l, nil
}

// Name implements backend.Backend.
func (l *Backend) Name() string { return Name }

// Versions implements backend.Backend.
func (l *Backend) Versions() map[string]string { return map[string]string{"litestream": l.version} }

// replicaPath is where in the bucket the database's replica lives.
func (l *Backend) replicaPath() string { return l.env.Needs.SQLite }

// Start serves the lab bucket and starts `litestream replicate` for the database file.
func (l *Backend) Start(ctx context.Context) (backend.Target, error) {
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return backend.Target{}, err
	}
	// Bodies in the cell's work directory, which the run records: clean removes them after a kill.
	lab, err := bucket.Start(bucket.Config{Buckets: []string{bucket.LabBucket}, Model: l.model, StorageRoot: l.env.WorkDir})
	if err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
	}
	l.lab = lab
	return l.startReplicate(ctx)
}

// startReplicate runs `litestream replicate` for the database file in l.dir.
func (l *Backend) startReplicate(ctx context.Context) (backend.Target, error) {
	config := filepath.Join(l.env.WorkDir, "litestream.yml")
	if err := os.WriteFile(config, []byte(l.configYAML()), 0o644); err != nil {
		return backend.Target{}, err
	}
	child, _, err := proc.StartAndWaitFor("litestream", filepath.Join(l.env.WorkDir, "litestream.log"), l.environ(), "replicating to", 30*time.Second,
		append(slices.Clone(l.env.Wrap), tools.Pinned(l.env.CPUs, l.bin, "replicate", "-config", config)...)...)
	if err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
	}
	l.child = child
	return backend.Target{Dir: l.dir}, ctx.Err()
}

// configYAML is litestream replicate's configuration: the database and its one replica.
func (l *Backend) configYAML() string {
	db := fmt.Sprintf("  - path: %s\n", filepath.Join(l.dir, l.env.Needs.SQLite))
	if l.monitorInterval > 0 {
		db += fmt.Sprintf("    monitor-interval: %s\n", l.monitorInterval)
	}
	return fmt.Sprintf("dbs:\n%s    replicas:\n      - url: %s\n        sync-interval: %s\n", db, l.replicaURL(bucket.LabBucket), l.syncInterval)
}

// environ points Litestream at the lab bucket. AWS_CA_BUNDLE in a user's shell breaks Litestream's
// cloud clients on plain-http endpoints, so it is removed.
func (l *Backend) environ() []string {
	return append(tools.EnvWithout("AWS_CA_BUNDLE", "STORAGE_EMULATOR_HOST"), "STORAGE_EMULATOR_HOST="+l.lab.Host())
}

// positionBucket holds the copy of the replica taken at the moment of a crash.
const positionBucket = "persistlab-position-at-crash"

// Crash kills litestream (SIGKILL: the instance is gone, with any sync it had in flight), records
// the replica as the bucket holds it at that moment, and throws the local database away.
func (l *Backend) Crash() error {
	if l.child != nil {
		if err := l.child.Kill(); err != nil {
			return err
		}
		l.child = nil
	}
	if _, err := l.lab.Snapshot(bucket.LabBucket, positionBucket, l.replicaPath()+"/"); err != nil {
		return fmt.Errorf("backend %q: record replica position: %w", Name, err)
	}
	return os.RemoveAll(l.dir)
}

// Recover restores the database from the bucket into a fresh local directory, as a new instance's
// start-up script does (`litestream restore -if-replica-exists`), and replicates it again.
func (l *Backend) Recover(ctx context.Context) (backend.Target, error) {
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return backend.Target{}, err
	}
	if err := l.restore(ctx, bucket.LabBucket, filepath.Join(l.dir, l.env.Needs.SQLite)); err != nil {
		return backend.Target{}, err
	}
	return l.startReplicate(ctx)
}

// RestorePosition restores the replica as it was at the crash into dbPath.
func (l *Backend) RestorePosition(ctx context.Context, dbPath string) error {
	return l.restore(ctx, positionBucket, dbPath)
}

func (l *Backend) restore(ctx context.Context, bucketName, dbPath string) error {
	cmd := proc.Command(ctx, l.bin, "restore", "-if-replica-exists", "-o", dbPath, l.replicaURL(bucketName))
	cmd.Env = l.environ()
	if err := proc.RunLogged(cmd, filepath.Join(l.env.WorkDir, "litestream-restore.log"), proc.MaxOutputLines); err != nil {
		return fmt.Errorf("backend %q: %w", Name, err)
	}
	return nil
}

// replicaURL is the replica's URL in a bucket: gs:// since Litestream 0.5, gcs:// before.
func (l *Backend) replicaURL(bucketName string) string {
	scheme := "gs://"
	if l.legacy {
		scheme = "gcs://"
	}
	return scheme + bucketName + "/" + l.replicaPath()
}

// WritesSince implements backend.Timeline: Litestream's uploads by kind. Litestream 0.5 writes
// LTX files under ltx/LEVEL/: level 0 one per monitor tick with changes (uploaded at each sync
// interval), higher levels when it compacts them, level 9 its snapshots. Litestream 0.3 writes WAL
// segments and snapshots of a generation.
func (l *Backend) WritesSince(t time.Time) []backend.Write {
	if l.lab == nil {
		return nil
	}
	var out []backend.Write
	for _, w := range l.lab.WritesSince(t) {
		what := ltxKind(w.Object)
		if l.legacy {
			what = generationKind(w.Object)
		}
		out = append(out, backend.Write{What: what, Started: w.Started, Done: w.Done, Bytes: w.Bytes})
	}
	return out
}

// ltxKind names an object of a Litestream 0.5 replica by its LTX level.
func ltxKind(object string) string {
	_, rest, ok := strings.Cut(object, "/ltx/")
	level, _, _ := strings.Cut(rest, "/")
	switch {
	case !ok || level == "":
		return "other"
	case level == "0":
		return "sync (ltx L0)"
	case level == "9":
		return "snapshot (ltx L9)"
	}
	return "compaction (ltx L" + level + ")"
}

// generationKind names an object of a Litestream 0.3 replica:
// generations/ID/wal/INDEX_OFFSET.wal.lz4 at each sync, generations/ID/snapshots/INDEX.snapshot.lz4.
func generationKind(object string) string {
	_, rest, ok := strings.Cut(object, "/generations/")
	switch {
	case ok && strings.Contains(rest, "/wal/"):
		return "sync (wal segment)"
	case ok && strings.Contains(rest, "/snapshots/"):
		return "snapshot"
	}
	return "other"
}

// Stats are the bucket's counters since Start and litestream's CPU seconds.
func (l *Backend) Stats() backend.Stats {
	var cpu []time.Duration
	if l.child != nil {
		if t, err := proc.CPUTime(l.child.Pid()); err == nil {
			cpu = append(cpu, t)
		}
	}
	if l.lab == nil {
		return backend.StatsOf(nil, cpu...)
	}
	return backend.StatsOf(l.lab.Accounting(), cpu...)
}

// ReplicationLag waits for the first write to the replica that completes after lastCommit and
// returns how long after lastCommit that was: how long the last acknowledged write stayed only on
// local disk.
func (l *Backend) ReplicationLag(ctx context.Context, lastCommit time.Time) (time.Duration, error) {
	limit := time.NewTimer(2*l.syncInterval + 10*time.Second)
	defer limit.Stop()
	for {
		if _, at := l.lab.LastWriteUnder(bucket.LabBucket, l.replicaPath()+"/"); at.After(lastCommit) {
			return at.Sub(lastCommit), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-limit.C:
			return 0, fmt.Errorf("no replica write within %v of the last commit", 2*l.syncInterval+10*time.Second)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Stop stops litestream by its pid (SIGTERM lets it sync once more), then the bucket, then
// removes the local database.
func (l *Backend) Stop(ctx context.Context) error {
	var errs []error
	if l.child != nil {
		errs = append(errs, l.child.Stop(ctx))
	}
	if l.lab != nil {
		errs = append(errs, l.lab.Close())
		l.lab = nil
	}
	if !l.env.Keep {
		errs = append(errs, os.RemoveAll(l.dir))
	}
	return errors.Join(errs...)
}
