// Package gitcommit is seed 004's workload: a crawler keeping page snapshots in git, `git add
// --all && git commit` after each random change to one of a few thousand small files, in one
// repository or one per file. The real git makes every commit; persistlab counts them, times them
// in windows, and reads the repositories' disk use and, after a crash, what git still has.
package gitcommit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// Name is the workload's name in scenarios.
const Name = "gitcommit"

// FsyncDefault leaves core.fsync unset: git 2.39 then syncs pack files, their indexes and the
// commit graph, but no loose object, index or ref (Documentation/config/core.txt).
const FsyncDefault = "default"

// Params are the workload's parameters; the defaults are seed 004's run.
var Params = []param.Param{
	{Name: "files", Kind: param.KindInt, Default: "5000", Min: 1, Max: 1_000_000, Help: "files the changes pick from (the seed's 5,000)"},
	{Name: "changes", Kind: param.KindInt, Default: "20000", Min: 1, Max: 10_000_000, Help: "changes, each followed by git add --all and git commit (the seed's 20,000)"},
	{Name: "file_bytes", Kind: param.KindSize, Default: "0", Min: 0, Max: 1 << 20,
		Help: "0: the seed's line (ten variants, so some commits find nothing to commit); else this many random bytes per version"},
	{Name: "layout", Kind: param.KindEnum, Default: LayoutDistributed, Allowed: []string{LayoutDistributed, LayoutMonolithic},
		Help: "distributed: a repository per file (bench_distributed.py); monolithic: one for all (bench_monolithic.py)"},
	{Name: "seed", Kind: param.KindInt, Default: "1", Min: 0, Max: 1 << 62, Help: "the random choice of file and content; one seed, one sequence of commits"},
	{Name: "window", Kind: param.KindInt, Default: "1000", Min: 1, Max: 10_000_000, Help: "changes per window of the commits/s series (the seed printed one per 1,000); the last window ends with the run"},
	{Name: "fsync", Kind: param.KindEnum, Default: FsyncDefault, Allowed: []string{FsyncDefault, "none", "objects", "committed", "added", "all"},
		Help: "git's core.fsync (default: unset, git's own default)"},
	{Name: "init_fsync", Kind: param.KindBool, Default: "false",
		Help: "fsync what each git init wrote (HEAD, config, their directories): core.fsync does not cover it (the seed did not)"},
	{Name: "time_limit", Kind: param.KindDuration, Default: "0s", Min: 0, Max: MaxTimeLimit.Seconds(),
		Help: "stop between changes once this long has passed since the first began, the plan's remaining changes not made, which is no failure (0: the plan's end alone)"},
	{Name: "rate", Kind: param.KindFloat, Default: "0", Min: 0, Max: MaxRate, Unit: "changes/s",
		Help: "pace the changes: change i starts at i/rate s, at once when behind, and its latency counts from then, as an open loop counts it (0: each as the last ends, the seed's closed loop)"},
	{Name: "prefill", Kind: param.KindEnum, Default: PrefillNone, Allowed: []string{PrefillNone, PrefillTouched, PrefillAll},
		Help: "before the measured changes, unmetered (a volume's model off, then written back), make the repositories (monolithic: the files) of the files the first ceil(rate·time_limit) changes write (touched: needs both) or of every file (all), one commit each; it counts in no metric but disk use"},
	{Name: "writeback", Kind: param.KindBool, Default: "false",
		Help: "after the changes, time a syncfs of the target, waited for at most twice time_limit (10 min without one): writeback_s and sustained_per_s"},
	{Name: "gc_auto_detach", Kind: param.KindBool, Default: "false",
		Help: "git's gc.autoDetach: true is git's default and the seed's, an automatic gc running in the background while the changes go on, waited for (at most 10 min) before disk use is read: gc_after_s; false runs it inside the commit that triggers it"},
}

// Metrics are what a gitcommit cell reports.
var Metrics = []workload.Metric{
	{Name: "changes_per_s", Unit: "changes/s", HigherBetter: true, Help: "changes (add + commit) per second over the run: the seed's commits/s"},
	{Name: "total_s", Unit: "s", Help: "time for every change: the seed's total time (time_limit at least, when it stopped the run)"},
	{Name: "first_window_per_s", Unit: "changes/s", HigherBetter: true}, {Name: "last_window_per_s", Unit: "changes/s", HigherBetter: true},
	{Name: "min_window_per_s", Unit: "changes/s", HigherBetter: true}, {Name: "max_window_per_s", Unit: "changes/s", HigherBetter: true},
	{Name: "change_p50_ms", Unit: "ms"}, {Name: "change_p95_ms", Unit: "ms"}, {Name: "change_p99_ms", Unit: "ms"}, {Name: "change_max_ms", Unit: "ms"},
	{Name: "ok", Unit: "count", Help: "commits git made (exit 0)"},
	{Name: "unchanged", Unit: "count", Help: "changes that left the file as it was: git had nothing to commit"},
	{Name: "repos", Unit: "count"},
	{Name: "disk_mib", Unit: "MiB", Help: "disk use of the run: the repositories and their files (the seed's du of benchmark_dir)"},
	{Name: "git_mib", Unit: "MiB", Help: "disk use of everything but the checked-out files"},
	{Name: "worktree_mib", Unit: "MiB", Help: "disk use of the checked-out files"},
	{Name: "as_files_mib", Unit: "MiB", Help: "every committed version (a prefill's too) kept as its own file instead (the seed's 79 MB), in blocks of the target"},
	{Name: "git_cpu_util", Unit: "share", Help: "CPU of the driver and every git it ran, over the run, as a share of one CPU"},
	{Name: "git_cpu_s", Unit: "s", Help: "CPU time of the driver and every git it ran"},
	{Name: "changes", Unit: "count", Help: "changes made (the last change's number)"},
	{Name: "inits", Unit: "count", Help: "git inits the changes needed (a new file's repository; the monolithic layout's one): 0 after a prefill of what they touch"},
	{Name: "writeback_s", Unit: "s", Help: "writeback: the syncfs of the target after the changes, or its cap when it took longer (a fact says so)"},
	{Name: "sustained_per_s", Unit: "changes/s", HigherBetter: true,
		Help: "writeback: changes_per_s × min(1, total_s / writeback_s), the pace the volume keeps once it must also write back what the page cache absorbed"},
	{Name: "auto_gcs", Unit: "count", Help: "commits that printed git's auto-packing notice: each found a gc needed (about 6,700 loose objects, gc.auto); with a detached gc still running, git starts no second one"},
	{Name: "gc_after_s", Unit: "s", Help: "gc_auto_detach: how long git's detached gc ran on after the last change"},
	{Name: "disk_at_end_mib", Unit: "MiB", Help: "gc_auto_detach, on a volume of the cell's own: disk use as the last change ended, a detached gc perhaps still running (disk_mib is after it)"},
}

func init() {
	workload.Register(workload.Info{
		Name:        Name,
		Description: "seed 004's git add + commit after each random change to small files (the real git)",
		Params:      Params,
		Metrics:     Metrics,
		Length:      length,
		Needs:       backend.Needs{},
		New:         New,
	})
}

// Workload is git, found, with the size of what `git init` writes.
type Workload struct {
	git      string
	version  string
	initSize int64 // bytes a fresh `git init` takes on disk (its templates)
}

var (
	_ workload.Workload     = (*Workload)(nil)
	_ workload.Inspector    = (*Workload)(nil)
	_ workload.Acknowledged = (*instance)(nil)
)

// New finds git; the workload takes no sections.
func New(spec scenario.Workload) (workload.Workload, error) {
	for name, section := range spec.Sections {
		return nil, &param.FieldError{Field: "workload." + name, Value: fmt.Sprint(section), Allowed: "a parameter: " + paramNames()}
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, &param.FieldError{Field: "workload.type", Value: Name, Allowed: "a workload whose program is installed: git is not on PATH (apt-get install git; scripts/setup does)"}
	}
	w := &Workload{git: git}
	out, err := proc.Output(exec.Command(git, "--version"), 64<<10) // one line
	if err != nil {
		return nil, err
	}
	w.version = strings.TrimPrefix(strings.TrimSpace(string(out)), "git version ")
	if w.initSize, err = measureInit(git); err != nil {
		return nil, err
	}
	return w, nil
}

func paramNames() string {
	names := make([]string, 0, len(Params))
	for _, p := range Params {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// measureInit is the disk use of an empty repository as this git makes it.
func measureInit(git string) (int64, error) {
	dir, err := os.MkdirTemp("", "persistlab-git-init-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if _, err := gitOutput(context.Background(), git, readEnv(), dir, "init", "-q"); err != nil {
		return 0, err
	}
	var total int64
	err = filepath.Walk(filepath.Join(dir, ".git"), func(_ string, info os.FileInfo, err error) error {
		if err == nil {
			if st, ok := info.Sys().(*unix.Stat_t); ok {
				total += st.Blocks * 512
			}
		}
		return err
	})
	return total, err
}

// Versions implements workload.Workload.
func (w *Workload) Versions() map[string]string { return map[string]string{"git": w.version} }

// settings are one cell's parameters, read.
type settings struct {
	Plan      Plan
	Window    int           `param:"window"`
	Fsync     string        `param:"fsync"`
	InitFsync bool          `param:"init_fsync"`
	TimeLimit time.Duration `param:"time_limit"`
	Rate      float64       `param:"rate"`
	Prefill   string        `param:"prefill"`
	Writeback bool          `param:"writeback"`
	// GCAutoDetach lets git's automatic gc detach (git's default): it leaves the driver's process
	// group and session, so the driver runs in a cgroup of its own that holds it.
	GCAutoDetach bool `param:"gc_auto_detach"`
}

func read(p workload.Params) (settings, error) {
	var s settings
	if err := param.Decode(Params, p, &s); err != nil {
		return s, param.Under("workload.", err)
	}
	if s.Prefill == PrefillTouched && (s.Rate <= 0 || s.TimeLimit <= 0) {
		return s, &param.FieldError{Field: "workload.prefill", Value: s.Prefill,
			Allowed: fmt.Sprintf("%s or %s; %s needs rate and time_limit, whose first ceil(rate·time_limit) changes name the files (rate %v, time_limit %v)",
				PrefillNone, PrefillAll, PrefillTouched, s.Rate, s.TimeLimit)}
	}
	return s, s.Plan.Validate()
}

// prefillFiles are the files whose repositories the prefill makes.
func (s settings) prefillFiles() []int {
	switch s.Prefill {
	case PrefillAll:
		files := make([]int, s.Plan.Files)
		for i := range files {
			files[i] = i + 1
		}
		return files
	case PrefillTouched:
		return s.Plan.FilesOf(PacedChanges(s.Rate, s.TimeLimit))
	}
	return nil
}

// length bounds a cell for plan estimates: its time limit, and the write-back's cap after it.
func length(p workload.Params) workload.Length {
	s, err := read(p)
	if err != nil || s.TimeLimit <= 0 {
		return workload.Length{}
	}
	if s.Writeback {
		return workload.Length{Bound: s.TimeLimit + writebackCap(s.TimeLimit), BoundBy: "time_limit and its write-back's cap"}
	}
	return workload.Length{Bound: s.TimeLimit, BoundBy: "time_limit"}
}

// Check implements workload.Workload.
func (w *Workload) Check(_ context.Context, p workload.Params) error {
	_, err := read(p)
	return err
}

// blockBytes is the allocation unit the estimate of a run's disk use counts in (ext4's and xfs's
// default 4 KiB block).
const blockBytes = 4096

// Estimate is about how much a run writes to its target: a `git init` per repository, and per
// change a loose blob, tree and commit object, a tree per subdirectory and the ref log's growth,
// each a block at least (a generous upper bound: git's objects of these files are below a block).
func (w *Workload) Estimate(p Plan) int64 {
	repos := int64(1)
	perChange := int64(5) // blob, two trees, commit, logs
	if p.Layout == LayoutDistributed {
		repos = int64(min(p.Files, p.Changes))
		perChange = 4
	}
	fileBlocks := (int64(p.FileBytes) + blockBytes - 1) / blockBytes
	perChange += 2 * max(0, fileBlocks-1) // a large file's blob (compressed, but random text barely is) and its checkout
	return repos*(w.initSize+3*blockBytes) + int64(p.Changes)*perChange*blockBytes
}

// Start checks the target can hold the run and makes the prefill's repositories, on an empty
// target; the others are made as the changes need them, and a target that already holds some (a
// recovered instance's) is left as it is.
func (w *Workload) Start(ctx context.Context, env workload.Env) (workload.Instance, error) {
	s, err := read(env.Params)
	if err != nil {
		return nil, err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(env.Target.Dir, &fs); err != nil {
		return nil, fmt.Errorf("read free space of %s: %w", env.Target.Dir, err)
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	if need := w.Estimate(s.Plan); need > free {
		return nil, &param.FieldError{Field: "workload.changes", Value: env.Params["changes"],
			Allowed: fmt.Sprintf("a run the target can hold: %s has %s free and this run may write about %s (files %d, layout %s)",
				env.Target.Dir, param.FormatSize(free), param.FormatSize(need), s.Plan.Files, s.Plan.Layout)}
	}
	in := &instance{w: w, s: s, env: env}
	if s.Prefill != PrefillNone {
		if err := in.prefill(ctx); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// driverArgs run the driver in the instance, in group (nil: none), with the plan's flags.
func (in *instance) driverArgs(group *cgroup.Group) []string {
	p := in.s.Plan
	args := slices.Concat(in.env.Target.Wrap, group.Wrap(), []string{in.env.Self, "app", "gitcommit", "--git", in.w.git, "--dir", in.env.Target.Dir,
		"--files", strconv.Itoa(p.Files), "--changes", strconv.Itoa(p.Changes), "--file-bytes", strconv.Itoa(p.FileBytes),
		"--layout", p.Layout, "--seed", strconv.FormatUint(p.Seed, 10)})
	if len(in.env.CPUs) > 0 {
		args = append(args, "--cpu-list", cpuList(in.env.CPUs))
	}
	if in.s.InitFsync {
		args = append(args, "--init-fsync")
	}
	return args
}

// readEnv is git's environment for reading repositories: no system or user configuration.
func readEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C")
}

// SeedDate is every commit's author and committer date (the seed's article's), so one plan always
// makes the same commits, hashes included.
const SeedDate = "2018-02-04T12:00:00+0000"

// driverEnv is the driver's and its git's environment: a configuration of the cell's own (identity,
// branch name, core.fsync, gc.autoDetach), fixed dates, messages in English. detach lets an
// automatic gc run in the background, as git's default does; without it the gc runs in the commit
// that triggers it.
func (in *instance) driverEnv(detach bool) ([]string, error) {
	cfg := "[user]\n\tname = persistlab\n\temail = persistlab@localhost\n[init]\n\tdefaultBranch = master\n" +
		"[gc]\n\tautoDetach = " + strconv.FormatBool(detach) + "\n"
	if in.s.Fsync != FsyncDefault {
		cfg += "[core]\n\tfsync = " + in.s.Fsync + "\n"
	}
	path := filepath.Join(in.env.CellDir, "gitconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+path, "LC_ALL=C",
		"GIT_AUTHOR_DATE="+SeedDate, "GIT_COMMITTER_DATE="+SeedDate), nil
}

type instance struct {
	w      *Workload
	s      settings
	env    workload.Env
	driver *proc.Child
	// group holds the driver and every git it starts, a detached gc too; nil where no cgroup
	// could be made (noGroup says why): then the driver's process group alone is stopped.
	group   *cgroup.Group
	noGroup string
	method  string // how disk use was measured
	// The prefill's files and commits, and the target's use before it (what disk use counts from).
	prefillDone    bool
	prefilled      []int
	prefillCommits int
	usedBefore     int64
	// writingBack is closed when the syncfs after the changes has returned (nil: none started).
	writingBack chan struct{}
}

// Drive implements workload.Instance: every change of the plan, to the end.
func (in *instance) Drive(ctx context.Context, _ time.Duration) (*workload.Result, error) {
	res, _, err := in.run(ctx, false)
	return res, err
}

// DriveAcked implements workload.Acknowledged: the plan's changes, each commit git made an
// acknowledgement, until the plan ends or the instance is killed.
func (in *instance) DriveAcked(ctx context.Context, _ time.Duration) (*workload.Result, *measure.AckLog, error) {
	return in.run(ctx, true)
}

// run starts the driver in the instance and reads its reports to its end.
func (in *instance) run(ctx context.Context, crash bool) (*workload.Result, *measure.AckLog, error) {
	if !in.prefillDone && holdsRepositories(in.env.Target.Dir) {
		return nil, nil, fmt.Errorf("%s already holds repositories: a run starts on an empty target", filepath.Join(in.env.Target.Dir, Root))
	}
	env, err := in.driverEnv(in.s.GCAutoDetach)
	if err != nil {
		return nil, nil, err
	}
	if err := in.makeGroup(); err != nil {
		return nil, nil, err
	}
	p := in.s.Plan
	args := in.driverArgs(in.group)
	log := filepath.Join(in.env.CellDir, "gitcommit.log")
	usedBefore := in.usedBefore
	if !in.prefillDone {
		if usedBefore, _, _, err = fsUsage(in.env.Target.Dir); err != nil {
			return nil, nil, err
		}
	}
	start := time.Now()
	if in.s.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(in.s.Rate, 'g', -1, 64))
	}
	if in.s.TimeLimit > 0 {
		args = append(args, "--time-limit", in.s.TimeLimit.String())
	}
	if in.s.Rate > 0 || in.s.TimeLimit > 0 {
		args = append(args, "--start", strconv.FormatInt(start.UnixNano(), 10))
	}
	child, out, err := proc.StartPiped("gitcommit driver", log, env, args...)
	if err != nil {
		return nil, nil, err
	}
	in.driver = child
	defer out.Close()
	stopOnCancel := context.AfterFunc(ctx, func() { _ = child.Stop(context.Background()) })
	defer stopOnCancel()

	res := workload.NewResult()
	change := measure.NewRecorder()
	var acks []measure.Ack
	var windows, done []measure.Point
	last, windowStart := start, start
	var commits, unchanged, lastChange, inits, autoGCs int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		r, err := ParseReport(sc.Text())
		if err != nil {
			_ = child.Kill()
			return nil, nil, err
		}
		if in.s.Rate > 0 { // from the change's slot: a change started late waited for its turn
			change.Record(r.At.Sub(start.Add(Slot(r.Change-1, in.s.Rate))))
		} else {
			change.Record(r.At.Sub(last))
		}
		last, lastChange = r.At, r.Change
		inits += r.Inits
		if r.AutoGC {
			autoGCs++
		}
		if r.Committed {
			commits = r.Commits
			if crash { // the prefill's commits, synced before the run, are reachable too
				acks = append(acks, measure.Ack{Count: int64(in.prefillCommits + r.Commits), At: r.At})
			}
		} else {
			unchanged++
		}
		if r.Change%in.s.Window == 0 || r.Change == p.Changes {
			n := r.Change - (len(windows) * in.s.Window)
			t := r.At.Sub(start).Seconds()
			windows = append(windows, measure.Point{T: t, V: float64(n) / r.At.Sub(windowStart).Seconds()})
			done = append(done, measure.Point{T: t, V: float64(r.Change)})
			windowStart = r.At
		}
	}
	<-child.Done()
	state := child.Cmd.ProcessState
	succeeded := state != nil && state.Success()
	killed := ctx.Err() != nil || (crash && lastChange < p.Changes && !succeeded)
	if state != nil {
		cpu := state.UserTime() + state.SystemTime()
		res.Metrics["git_cpu_s"] = cpu.Seconds()
		if el := last.Sub(start).Seconds(); el > 0 {
			res.Metrics["git_cpu_util"] = cpu.Seconds() / el
		}
		if !state.Success() && !killed {
			return nil, nil, fmt.Errorf("gitcommit driver failed (%v) after %d of %d changes: %s", state, lastChange, p.Changes, tail(log))
		}
	}
	if ctx.Err() != nil && !crash {
		return nil, nil, context.Cause(ctx)
	}
	res.Elapsed = last.Sub(start)
	// Stopped by its time limit, the run lasted that long at least (a paced run's last slot came
	// before it), and its last window ends with it.
	if timedOut := !killed && succeeded && lastChange < p.Changes && in.s.TimeLimit > 0; timedOut {
		res.Elapsed = max(res.Elapsed, in.s.TimeLimit)
		if n := lastChange - len(windows)*in.s.Window; n > 0 {
			t := last.Sub(start).Seconds()
			windows = append(windows, measure.Point{T: t, V: float64(n) / last.Sub(windowStart).Seconds()})
			done = append(done, measure.Point{T: t, V: float64(lastChange)})
		}
	}
	m := res.Metrics
	m["changes"], m["ok"], m["unchanged"], m["inits"] = float64(lastChange), float64(commits), float64(unchanged), float64(inits)
	m["auto_gcs"] = float64(autoGCs)
	m["total_s"] = res.Elapsed.Seconds()
	if res.Elapsed > 0 {
		m["changes_per_s"] = float64(lastChange) / res.Elapsed.Seconds()
	}
	if len(windows) > 0 {
		m["first_window_per_s"], m["last_window_per_s"] = windows[0].V, windows[len(windows)-1].V
		m["min_window_per_s"], m["max_window_per_s"] = windows[0].V, windows[0].V
		for _, w := range windows {
			m["min_window_per_s"], m["max_window_per_s"] = min(m["min_window_per_s"], w.V), max(m["max_window_per_s"], w.V)
		}
	}
	s := change.Summarize(res.Elapsed)
	m["change_p50_ms"], m["change_p95_ms"], m["change_p99_ms"], m["change_max_ms"] = s.MedMs, s.P95Ms, s.P99Ms, s.MaxMs
	res.Histograms["change"] = change
	res.Series["changes_per_s"], res.Series["changes"] = windows, done
	res.Facts["git_version"] = in.w.version
	res.Facts["core_fsync"] = in.s.Fsync
	res.Facts["init_fsync"] = strconv.FormatBool(in.s.InitFsync)
	res.Facts["gc_auto_detach"] = strconv.FormatBool(in.s.GCAutoDetach)
	if in.noGroup != "" {
		res.Facts[cgroupFact] = "none (" + in.noGroup + "): only the driver's process group is stopped at the end"
	}
	if in.prefillDone {
		res.Facts["prefill"] = fmt.Sprintf("%s: %d files' repositories made before the changes, %d commits, not measured", in.s.Prefill, len(in.prefilled), in.prefillCommits)
	}
	if killed {
		return res, measure.NewAckLog(acks), nil
	}
	if in.s.GCAutoDetach { // not killed: a crash's kill ends the gc too
		if err := in.waitDetachedGC(ctx, res, usedBefore); err != nil {
			return nil, nil, err
		}
	}
	if in.s.Writeback && !crash {
		if err := in.timeWriteBack(ctx, res); err != nil {
			return nil, nil, err
		}
	}
	if err := in.measureDisk(m, usedBefore, lastChange); err != nil {
		return nil, nil, err
	}
	res.Facts["disk_use"] = in.method
	return res, measure.NewAckLog(acks), nil
}

func cpuList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// tail is the end of a log, for error messages: its last 600 bytes, read alone however long it grew.
func tail(path string) string {
	const keep = 600
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	var from int64
	if st, err := f.Stat(); err == nil && st.Size() > keep {
		from = st.Size() - keep
	}
	b, err := io.ReadAll(io.NewSectionReader(f, from, keep))
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	s := strings.TrimSpace(string(b))
	if from > 0 {
		s = "..." + s
	}
	return s
}

// Stop implements workload.Instance: the driver, if it still runs, and the write-back after the
// changes, if it outlived its cap. It holds the target busy (a volume cannot unmount under it), so
// Stop waits for it, with the volume's model off where the backend can turn it off (what is left
// is written at this machine's speed: the cell's measurement is over).
func (in *instance) Stop(ctx context.Context) error {
	var err error
	if in.driver != nil {
		err = in.driver.Stop(ctx)
	}
	err = errors.Join(err, in.group.Close(cgroup.GroupWait)) // a detached gc still running
	if in.writingBack == nil {
		return err
	}
	wait := func(ctx context.Context) error {
		select {
		case <-in.writingBack:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("the write-back after the changes still runs on %s: %w", in.env.Target.Dir, context.Cause(ctx))
		}
	}
	select {
	case <-in.writingBack:
	default:
		if in.env.Target.Unmetered != nil {
			err = errors.Join(err, in.env.Target.Unmetered(ctx, wait))
		} else {
			err = errors.Join(err, wait(ctx))
		}
	}
	return err
}
