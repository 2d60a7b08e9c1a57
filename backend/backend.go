// Package backend is where data lives: every backend gives a workload a directory (a local disk, a
// FUSE mount of a bucket, a replicated disk) and cleans up after it. Backends register themselves
// by name, like database/sql drivers, with what they are and the options they take (Info).
package backend

import (
	"context"
	"sort"
	"strings"
	"time"

	"persistlab/lab"
	"persistlab/lib/registry"
	"persistlab/param"
)

// Needs is what a workload asks of a backend. Every backend gives a directory; a replicating
// backend (Litestream) follows one SQLite database and cannot serve a workload without one.
type Needs struct {
	// SQLite names the database file the workload keeps in Target.Dir, "" if it keeps none.
	SQLite string
	// SQLiteParam is the workload parameter that names that file, where the workload can keep a
	// database the scenario names (an app's); "" where it keeps none of its own choosing.
	SQLiteParam string
	// MySQL says the workload can use a MySQL server a backend names (Target.DSN) instead of
	// starting its own on Target.Dir.
	MySQL bool
}

// LagReporter is a backend that can say how long after the last commit it made that commit durable.
type LagReporter interface {
	ReplicationLag(ctx context.Context, lastCommit time.Time) (time.Duration, error)
}

// Checker is a backend that can tell, before the first cell and starting nothing, whether it
// can run (a user's server that does not answer).
type Checker interface {
	Check(ctx context.Context) error
}

// Crasher is a backend that can lose its instance, as Cloud Run loses one, and start a new one
// from what persisted.
type Crasher interface {
	// Crash kills the backend's processes with SIGKILL and throws the instance's local disk away.
	Crash() error
	// Recover starts a new instance from what persisted and says where its data now is.
	Recover(ctx context.Context) (Target, error)
}

// MultiInstance is a backend that several app instances can share at once, each through its own
// mount (gcsfuse): what Cloud Run does when it scales a service out. wrap is the new instance's
// command prefix for its helper processes, as Env.Wrap is the first's (each instance has its own
// CPU limit).
type MultiInstance interface {
	AddInstance(ctx context.Context, wrap []string) (Target, error)
}

// Positioner is a backend that records, at Crash, the replication position it had reached, and
// can restore that position into a database file of its own, so a crash run can check that
// recovery lost nothing the replica already held.
type Positioner interface {
	RestorePosition(ctx context.Context, dbPath string) error
}

// Sampler is a backend some of whose counters are worth seeing over a cell's time, not only as
// totals: a volume's burst credits draining, its throttled time growing. The runner samples
// Stats during the measured run and records those keys as series.
type Sampler interface {
	SampledStats() []string
}

// Timeline is a backend whose writes to the cloud are worth lining up with a cell's latency over
// time: gcsfuse uploads a file when SQLite syncs it (at a WAL checkpoint), Litestream at each sync
// interval. The runner records each write of the measured run.
type Timeline interface {
	WritesSince(t time.Time) []Write
}

// Write is one completed write to the cloud: what it wrote (a kind a reader can tell apart: a
// file's name, an LTX level), when it started and ended, and its bytes.
type Write struct {
	What          string
	Started, Done time.Time
	Bytes         int64
}

// InstanceWrapper is a backend that runs its emulated instance in a cgroup of its own (a volume's
// instance memory), its programs put there by Target.Wrap.
type InstanceWrapper interface {
	WrapsInstance() bool
}

// InstanceMemory is a backend whose emulated instance's page cache is charged to a memory cgroup
// of its own (a volume's bounded instance memory), where the runner reads how much of it was read
// again after it was evicted.
type InstanceMemory interface {
	// InstanceMemoryCgroup is the cgroup's directory; "" while there is none (the instance has
	// this machine's memory).
	InstanceMemoryCgroup() string
}

// CeilingProber is a backend whose lab part (the emulated bucket or volume) runs on this machine:
// it measures what that part moves with the cloud model off, so a result near it can be flagged
// as bound by this machine rather than by the model. A backend on a real cloud service has no
// such ceiling and says so with ok false.
type CeilingProber interface {
	ProbeCeiling(ctx context.Context) (c lab.Ceiling, ok bool, err error)
}

// ProbeSpacer is a CeilingProber that says, before it probes, the most its probe stores under its
// work directory, so that the run's room is checked before the first probe.
type ProbeSpacer interface {
	CeilingProbeBytes() int64
}

// LocalCopier is a backend that keeps other than one copy, under its work directory, of what a
// workload writes on its target: none for a user's server, more where a lab bucket keeps the
// objects a local staging file or cache also holds. Backends that are not one keep one.
type LocalCopier interface {
	LocalCopies() int
}

// Target is what a started backend gives the workload.
type Target struct {
	Dir string // the directory the workload keeps its files in
	// Wrap, when set, is a command prefix that runs a program inside the emulated instance (a
	// volume's instance: its memory, page cache included, bounded by a cgroup). A workload puts it
	// before every program it runs on the target.
	Wrap []string
	// DSN, when set, is a MySQL server the workload uses as it is (a user's Cloud SQL): no server of
	// its own, only the server's own counters. Dir is then scratch space on this machine.
	DSN string
	// Unmetered, when set, runs fn with the backend's cost model off, writes back what fn left in
	// the page cache (syncfs of Dir) still off, then turns the model on again: set-up a workload
	// makes before it is measured (a crawler's repositories), which must neither take a short
	// cell's time nor move the backend's counters (Stats). Nil where there is no model to turn off:
	// the workload then runs fn as it is.
	Unmetered func(ctx context.Context, fn func(context.Context) error) error
}

// Env is what a backend is given to start from.
type Env struct {
	WorkDir string // a fresh directory this backend owns for one cell
	CPUs    []int  // CPUs of the system under test; helper processes run there too
	// Wrap, when set, is a command prefix that runs a helper process (gcsfuse, Litestream) inside
	// the instance's CPU limit, where the app runs too: a container's limit covers every process
	// in it. A backend puts it before every helper it starts for the instance.
	Wrap    []string
	Options map[string]string // from the scenario's backends[].options
	Needs   Needs             // what the workload asks of it; New refuses what it cannot serve
	// Keep leaves the data in WorkDir after Stop (run --keep), for a user to look at; processes
	// and mounts are stopped all the same.
	Keep bool
	// Warn says something the user should know at once (on the run's terminal, above its progress
	// line); nil: on standard error.
	Warn func(string)
}

// Stats are cumulative counters a backend keeps (bucket requests, bytes, CPU seconds); the runner
// records their growth over the measured run.
type Stats map[string]float64

// Counted is a source of counters: the lab bucket's accounting.
type Counted interface {
	Flatten() map[string]float64
}

// StatsOf gathers a backend's counters: its bucket's, and the CPU seconds of its helper processes
// (they share the app's CPUs, as in a Cloud Run container).
func StatsOf(bucket Counted, helperCPU ...time.Duration) Stats {
	st := Stats{}
	if bucket != nil {
		for k, v := range bucket.Flatten() {
			st[k] = v
		}
	}
	for _, cpu := range helperCPU {
		st[HelperCPUSeconds] += cpu.Seconds()
	}
	return st
}

// HelperCPUSeconds is the Stats key for the CPU time of a backend's own process (gcsfuse, Litestream).
const HelperCPUSeconds = "helper_cpu_s"

// Backend is one place data lives. Stop must undo everything Start did, also after a failed
// Start, and must be safe to call twice.
type Backend interface {
	Name() string
	Start(ctx context.Context) (Target, error)
	Stats() Stats
	Stop(ctx context.Context) error
	Versions() map[string]string // component name -> version, for results files
}

// Factory makes a backend from its environment. Given a declared backend's options, each name
// declared and each value checked by its Param, it checks what only it can: combinations, files,
// programs, what the workload needs.
type Factory func(Env) (Backend, error)

// Info describes a backend to the runner, to validation and to users, as workload.Info describes
// a workload.
type Info struct {
	Name        string
	Description string // where the data lives, in a line
	// Options are what a scenario's backends[].options may set, each with its kind, default,
	// bounds, unit and help. New refuses any other name and any value its Param refuses.
	Options []param.Param
	New     Factory
	// CloudModel names the provenance table of the cloud model its entries run on ("bucket",
	// "volume"), whose figures a scenario's provenance lists; "" for none, where NoModel says why.
	CloudModel string
	// NoModel says why an entry with these options has no cloud model in its way (this machine's
	// own disk, a user's server, a real bucket); "" where it has one. Nil: never, where CloudModel
	// is set.
	NoModel func(options map[string]string) string
	// VolumeModel, for a backend whose entries are emulated volumes, describes an entry from its
	// options, for the report; nil for others.
	VolumeModel VolumeModeler
	// Transfer says what the cloud model allows an entry's files, for a plan's estimate; nil where
	// a volume model's throughput or nothing says it.
	Transfer Transferer
	// FileCache says what an entry has of a file cache on the instance's disk, for the report; nil
	// for a backend that has none.
	FileCache func(options map[string]string) FileCache
	// Programs are the programs of its own its entries run, as the tools directory names them,
	// for persistlab version (which finds each as New does); nil for none.
	Programs []Program
}

// Program is a program a backend's entries run, and how it says its version.
type Program struct {
	Name        string   // "gcsfuse", "gcsfuse-3.2.8": found in the tools directory, then on PATH
	VersionArgs []string // what makes it print its version first: "--version"
}

// FileCache is what an entry has of a file cache on the instance's disk, in front of its cloud
// storage (gcsfuse's): the report judges an entry with the cache against one without it that runs
// the same software.
type FileCache struct {
	On bool
	// Software names what the entry runs, apart from its cache ("3.2.8/v2.4"): two entries of one
	// backend and one Software differ in their caches alone.
	Software string
}

var backends = registry.New[Info]("backend")

// RegisterInfo makes a backend available by name; backends call it from init. A second
// registration of a name panics.
func RegisterInfo(info Info) { backends.Register(info.Name, info) }

// Names lists the registered backends.
func Names() []string { return backends.Names() }

// Lookup finds a registered backend.
func Lookup(name string) (Info, error) { return backends.Lookup(name) }

// New makes the named backend: it checks the options and what the workload needs, and finds the
// programs it runs, but starts nothing. An option the backend does not declare, or a value its
// declaration refuses, is a *param.FieldError whose Field is "options.NAME" (the runner puts the
// backend entry before it: backends[1].options.file_cache).
func New(name string, env Env) (Backend, error) {
	info, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if err := info.CheckOptions(env.Options); err != nil {
		return nil, err
	}
	return info.New(env)
}

// CheckOptions checks options against the backend's declaration: every name declared (in order
// of name, so the first error is always the same) and every value allowed by its Param.
func (info Info) CheckOptions(opts map[string]string) error {
	names := make([]string, 0, len(opts))
	for k := range opts {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p, ok := param.Find(info.Options, k)
		if !ok {
			choices := "none"
			if len(info.Options) > 0 {
				choices = strings.Join(param.Names(info.Options), ", ")
			}
			return &param.FieldError{Field: "options." + k, Value: opts[k], Allowed: "one of backend " + info.Name + "'s options: " + choices}
		}
		if err := p.Check("options."+k, opts[k]); err != nil {
			return err
		}
	}
	return nil
}
