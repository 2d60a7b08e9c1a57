package gitcommit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"persistlab/internal/proc"
	"persistlab/param"
	"persistlab/workload"
)

// The driver is seed 004's script: for each change of the plan, write the file, then `git add
// --all` and `git commit` in its repository, one git process each (in the distributed layout a
// new file's repository is made first with `git init`). It runs as its own process (`persistlab
// app gitcommit`) so that it and every git it starts live in the emulated instance, and it
// reports each change on its output as one line: "<change> <commits so far> <unix ns> <c|g|n>
// <inits>", c when git committed, g when it committed and began an automatic gc, n when there was
// nothing to commit, and the git inits the change needed first (the monolithic layout's one
// counts with the first change).

// Outcomes of a change, as the driver reports them.
const (
	Committed   = 'c'
	CommittedGC = 'g' // committed, and the commit began git's automatic gc (detached or not)
	Unchanged   = 'n' // the file already held this content: `git commit` had nothing to commit
)

// autoGCMessage begins what git prints on stderr when a command begins its automatic gc, in the
// background or not (builtin/gc.c; LC_ALL=C keeps it in English).
var autoGCMessage = []byte("Auto packing the repository")

// CommitMessage is the seed's.
const CommitMessage = "git bench"

// DriverConfig is what the driver runs.
type DriverConfig struct {
	Git  string // git executable
	Dir  string // the target directory; the repositories go under Dir/Root
	Plan Plan
	// InitFsync makes each `git init` durable and whole before the first change: git's core.fsync
	// does not cover what it writes, and a repository without it on disk is no repository after a
	// crash. The repository is made beside its place, synced, and renamed into it, so a crash in
	// the middle of an init leaves no half-written .git (a config git cannot read).
	InitFsync bool
	// Rate paces the changes: change i starts at Start + i/Rate, or at once when behind (0: each
	// as the last ends, the seed's closed loop).
	Rate float64
	// TimeLimit stops the run between changes once this long has passed since Start, and a paced
	// run at the first slot not before it (0: the plan's end alone stops it).
	TimeLimit time.Duration
	// Start is when the run began, which slots and the time limit count from (zero: when Drive
	// starts).
	Start time.Time
}

// gitRunner runs git in a repository, confined to it; its error is a *gitError.
type gitRunner func(dir string, args ...string) error

// newGitRunner returns the runner and what the last git it ran printed on stderr (its first
// maxGitStderr bytes).
func newGitRunner(ctx context.Context, gitPath string) (gitRunner, func() []byte) {
	// git's output is only read for its error and its gc notice: its first lines are enough.
	stdout, stderr := proc.NewLimitedBuffer("git", maxGitStderr), proc.NewLimitedBuffer("git", maxGitStderr)
	return func(dir string, args ...string) error {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, gitPath, args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, confined(os.Environ(), dir), stdout, stderr
		if err := cmd.Run(); err != nil {
			return &gitError{args: args, dir: dir, err: err, stdout: stdout.String(), stderr: stderr.String()}
		}
		return nil
	}, stderr.Bytes
}

// Drive runs the plan's changes and reports each on out. Cancelling ctx stops it between git
// processes (a killed driver stops at once).
func Drive(ctx context.Context, cfg DriverConfig, out io.Writer) error {
	if err := cfg.Plan.Validate(); err != nil {
		return err
	}
	start := cfg.Start
	if start.IsZero() {
		start = time.Now()
	}
	var deadline time.Time
	if cfg.TimeLimit > 0 {
		deadline = start.Add(cfg.TimeLimit)
	}
	w := bufio.NewWriter(out)
	changes := cfg.Plan.Iterate()
	git, lastStderr := newGitRunner(ctx, cfg.Git)
	if err := os.MkdirAll(filepath.Join(cfg.Dir, Root), 0o755); err != nil {
		return err
	}
	inits := 0 // since the last report
	if cfg.Plan.Layout == LayoutMonolithic {
		repo := cfg.Plan.RepoDir(cfg.Dir, 1)
		if err := os.MkdirAll(repo+"/files", 0o755); err != nil {
			return err
		}
		if _, err := os.Stat(repo + "/.git"); errors.Is(err, os.ErrNotExist) {
			if err := initRepo(repo, cfg.InitFsync, git); err != nil {
				return err
			}
			inits++
		}
	}
	commits := 0
	var line []byte
	for i := 0; i < cfg.Plan.Changes; i++ {
		if cfg.Rate > 0 {
			slot := start.Add(Slot(i, cfg.Rate))
			if !deadline.IsZero() && !slot.Before(deadline) {
				return nil
			}
			if err := sleepUntil(ctx, slot); err != nil {
				return err
			}
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return nil
		}
		ch := changes.Next()
		repo := cfg.Plan.RepoDir(cfg.Dir, ch.File)
		if cfg.Plan.Layout == LayoutDistributed {
			// A directory left without its .git (a crash between mkdir and git init) is made one.
			if _, err := os.Stat(filepath.Join(repo, ".git")); errors.Is(err, os.ErrNotExist) {
				if err := initRepo(repo, cfg.InitFsync, git); err != nil {
					return err
				}
				inits++
			}
		}
		if err := os.WriteFile(cfg.Plan.FilePath(cfg.Dir, ch.File), ch.Content, 0o644); err != nil {
			return err
		}
		if err := git(repo, "add", "--all"); err != nil {
			return err
		}
		outcome := byte(Committed)
		// Not -q: the seed's commit printed its summary (to /dev/null), diffstat included.
		if err := git(repo, "commit", "-m", CommitMessage); err != nil {
			var ge *gitError
			if !errors.As(err, &ge) || !ge.nothingToCommit() {
				return err
			}
			outcome = Unchanged
		} else {
			commits++
			if bytes.Contains(lastStderr(), autoGCMessage) {
				outcome = CommittedGC
			}
		}
		line = strconv.AppendInt(line[:0], int64(i+1), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(commits), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, time.Now().UnixNano(), 10)
		line = append(line, ' ', outcome, ' ')
		line = strconv.AppendInt(line, int64(inits), 10)
		line = append(line, '\n')
		inits = 0
		if _, err := w.Write(line); err != nil {
			return err
		}
		if err := w.Flush(); err != nil { // the workload times each change as it ends
			return err
		}
	}
	return nil
}

// sleepUntil waits until t, or returns ctx's error if it ends first; it never waits for a time
// already past.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Prefill makes the repositories of files, as a running crawler has them, one commit each of
// content no change writes (PrefillContent); in the monolithic layout its repository, holding
// the files, in one commit. It returns the commits it made.
func Prefill(ctx context.Context, cfg DriverConfig, files []int) (int, error) {
	if err := cfg.Plan.Validate(); err != nil {
		return 0, err
	}
	git, _ := newGitRunner(ctx, cfg.Git)
	content := cfg.Plan.PrefillContent()
	commit := func(repo string, files []int) error {
		if _, err := os.Stat(filepath.Join(repo, ".git")); errors.Is(err, os.ErrNotExist) {
			if err := initRepo(repo, cfg.InitFsync, git); err != nil {
				return err
			}
		}
		for _, f := range files {
			if err := os.WriteFile(cfg.Plan.FilePath(cfg.Dir, f), content, 0o644); err != nil {
				return err
			}
		}
		if err := git(repo, "add", "--all"); err != nil {
			return err
		}
		return git(repo, "commit", "-q", "-m", CommitMessage)
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, Root), 0o755); err != nil {
		return 0, err
	}
	if cfg.Plan.Layout == LayoutMonolithic {
		repo := cfg.Plan.RepoDir(cfg.Dir, 1)
		if err := os.MkdirAll(repo+"/files", 0o755); err != nil {
			return 0, err
		}
		if len(files) == 0 {
			return 0, nil
		}
		return 1, commit(repo, files)
	}
	for i, f := range files {
		if err := commit(cfg.Plan.RepoDir(cfg.Dir, f), []int{f}); err != nil {
			return i, err
		}
	}
	return len(files), nil
}

// initSuffix names the directory beside a repository where its git init is made whole before it
// takes its place (init_fsync).
const initSuffix = ".persistlab-init"

// initRepo makes repo and runs git init in it. Durable (init_fsync), the init runs in a directory
// of its own beside repo and is synced, then takes repo's place (the whole directory, or its .git
// where repo exists) and the rename is synced: a crash leaves no repo or a whole one, never an
// empty directory or a half-written .git. What an interrupted init left beside it is the driver's
// own, and removed first.
func initRepo(repo string, durable bool, git gitRunner) error {
	if !durable {
		if err := os.MkdirAll(repo, 0o755); err != nil {
			return err
		}
		return git(repo, "init")
	}
	staging := repo + initSuffix
	if err := os.RemoveAll(staging); err != nil {
		return err
	}
	if err := os.Mkdir(staging, 0o755); err != nil {
		return err
	}
	if err := git(staging, "init"); err != nil {
		return err
	}
	if err := syncInit(staging); err != nil {
		return err
	}
	if _, err := os.Stat(repo); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(staging, repo); err != nil {
			return err
		}
		return syncDirs(filepath.Dir(repo))
	}
	if err := os.Rename(filepath.Join(staging, ".git"), filepath.Join(repo, ".git")); err != nil {
		return err
	}
	if err := syncDirs(repo, staging); err != nil {
		return err
	}
	return os.Remove(staging)
}

// syncDirs syncs each directory: the names a rename moved between them.
func syncDirs(dirs ...string) error {
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("fsync %s: %w", d, err)
		}
	}
	return nil
}

// syncInit makes a new repository durable: the files git init wrote that make it one, then the
// directories that name them, up to the directory holding the repository.
func syncInit(repo string) error {
	for _, p := range []string{".git/HEAD", ".git/config", ".git/objects", ".git/refs/heads", ".git/refs", ".git", ".", ".."} {
		f, err := os.Open(filepath.Join(repo, p))
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("fsync %s: %w", filepath.Join(repo, p), err)
		}
	}
	return nil
}

type gitError struct {
	args           []string
	dir            string
	err            error
	stdout, stderr string
}

func (e *gitError) Error() string {
	msg := e.stderr
	if msg == "" {
		msg = e.stdout
	}
	return fmt.Sprintf("git %v in %s: %v: %s", e.args, e.dir, e.err, bytes.TrimSpace([]byte(msg)))
}

// Unwrap keeps git's exit status (an *exec.ExitError) or why it could not run reachable by
// errors.Is and errors.As; stdout is kept apart because a commit's nothing-to-commit is read there.
func (e *gitError) Unwrap() error { return e.err }

// nothingToCommit is `git commit` finding the index as HEAD has it (exit 1, says so on stdout;
// the driver runs git with LC_ALL=C).
func (e *gitError) nothingToCommit() bool {
	var exit *exec.ExitError
	return errors.As(e.err, &exit) && exit.ExitCode() == 1 && bytes.Contains([]byte(e.stdout), []byte("nothing to commit"))
}

// flagParams are the driver's flags that are the workload's parameters, by parameter: they are
// read and bounded by the same definitions (Params), so a flag takes what a scenario may.
var flagParams = map[string]string{"files": "files", "changes": "changes", "file_bytes": "file-bytes", "layout": "layout", "seed": "seed",
	"init_fsync": "init-fsync", "rate": "rate", "time_limit": "time-limit", "prefill": "prefill"}

// maxStartSkew bounds how far --start may lie from now: a run's start is a moment ago, not a
// wait of hours.
const maxStartSkew = time.Hour

// Main is the driver's command line (`persistlab app gitcommit`): flags, CPU pinning, then Drive
// to stdout until the plan ends or SIGTERM.
func Main(args []string) error {
	return MainFlags(flag.NewFlagSet("app gitcommit", flag.ContinueOnError), args)
}

// MainFlags is Main with its flags declared on fs, which the command line's help prints.
func MainFlags(fs *flag.FlagSet, args []string) error {
	git := fs.String("git", "git", "git executable")
	dir := fs.String("dir", "", "directory the repositories go under (as "+Root+"/)")
	values := workload.Resolve(Params, nil, nil)
	for _, p := range Params {
		name, ok := flagParams[p.Name]
		if !ok {
			continue
		}
		set := func(v string) error { values[p.Name] = v; return nil }
		if p.Kind == param.KindBool {
			fs.BoolFunc(name, p.Help, set)
		} else {
			fs.Func(name, p.Help, set)
		}
		fs.Lookup(name).DefValue = p.Default
	}
	cpuList := fs.String("cpu-list", "", "pin to these CPUs (like 1 or 0,1); git inherits it")
	startNs := fs.Int64("start", 0, "the run's start in Unix nanoseconds, which --rate's slots and --time-limit count from (0: now)")
	prefillOnly := fs.Bool("prefill-only", false, "make the repositories --prefill names and exit, making no change")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return fmt.Errorf("want --dir, the directory the repositories go under, and no other arguments")
	}
	s, err := read(values)
	if err != nil {
		var fe *param.FieldError
		if errors.As(err, &fe) {
			if name, ok := flagParams[strings.TrimPrefix(fe.Field, "workload.")]; ok {
				fe.Field = "--" + name
			}
		}
		return err
	}
	var start time.Time
	if *startNs != 0 {
		start = time.Unix(0, *startNs)
		if skew := time.Since(start); skew > maxStartSkew || skew < -maxStartSkew {
			return &param.FieldError{Field: "--start", Value: strconv.FormatInt(*startNs, 10), Allowed: fmt.Sprintf("a time within %v of now, in Unix nanoseconds (now: %d)", maxStartSkew, time.Now().UnixNano())}
		}
	}
	if *prefillOnly && s.Prefill == PrefillNone {
		return &param.FieldError{Field: "--prefill-only", Value: "true", Allowed: "with --prefill " + PrefillTouched + " or " + PrefillAll + ": what to make"}
	}
	if *cpuList != "" {
		cpus, err := proc.ParseCPUList(*cpuList)
		if err != nil {
			return fmt.Errorf("--cpu-list: %w", err)
		}
		if err := proc.PinSelf(cpus); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := DriverConfig{Git: *git, Dir: *dir, InitFsync: s.InitFsync, Plan: s.Plan, Rate: s.Rate, TimeLimit: s.TimeLimit, Start: start}
	if s.Prefill != PrefillNone {
		files := s.prefillFiles()
		t0 := time.Now()
		commits, err := Prefill(ctx, cfg, files)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "prefill %s: %d files, %d commits in %.1f s\n", s.Prefill, len(files), commits, time.Since(t0).Seconds())
		if *prefillOnly {
			return nil
		}
	}
	return Drive(ctx, cfg, os.Stdout)
}

// Report is one line of the driver's output.
type Report struct {
	Change, Commits int
	At              time.Time
	Committed       bool
	AutoGC          bool // the commit began git's automatic gc
	Inits           int  // git inits the change needed first
}

// ParseReport reads one line of the driver's output.
func ParseReport(line string) (Report, error) {
	var r Report
	var ns int64
	var outcome string
	if _, err := fmt.Sscanf(line, "%d %d %d %s %d", &r.Change, &r.Commits, &ns, &outcome, &r.Inits); err != nil {
		return r, fmt.Errorf("driver line %q: %w", line, err)
	}
	switch outcome {
	case string(rune(Committed)), string(rune(CommittedGC)), string(rune(Unchanged)):
	default:
		return r, fmt.Errorf("driver line %q: outcome %q, want c, g or n", line, outcome)
	}
	r.At, r.Committed = time.Unix(0, ns), outcome != string(rune(Unchanged))
	r.AutoGC = outcome == string(rune(CommittedGC))
	return r, nil
}
