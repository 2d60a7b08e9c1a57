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
// reports each change on its output as one line: "<change> <commits so far> <unix ns> <c|n>",
// c when git committed, n when there was nothing to commit.

// Outcomes of a change, as the driver reports them.
const (
	Committed = 'c'
	Unchanged = 'n' // the file already held this content: `git commit` had nothing to commit
)

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
}

// Drive runs the plan's changes and reports each on out. Cancelling ctx stops it between git
// processes (a killed driver stops at once).
func Drive(ctx context.Context, cfg DriverConfig, out io.Writer) error {
	if err := cfg.Plan.Validate(); err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	changes := cfg.Plan.Iterate()
	// git's output is only read for its error: its first lines are enough ("nothing to commit").
	stdout, stderr := proc.NewLimitedBuffer("git", maxGitStderr), proc.NewLimitedBuffer("git", maxGitStderr)
	git := func(dir string, args ...string) error {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, cfg.Git, args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, confined(os.Environ(), dir), stdout, stderr
		if err := cmd.Run(); err != nil {
			return &gitError{args: args, dir: dir, err: err, stdout: stdout.String(), stderr: stderr.String()}
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, Root), 0o755); err != nil {
		return err
	}
	if cfg.Plan.Layout == LayoutMonolithic {
		repo := cfg.Plan.RepoDir(cfg.Dir, 1)
		if err := os.MkdirAll(repo+"/files", 0o755); err != nil {
			return err
		}
		if _, err := os.Stat(repo + "/.git"); errors.Is(err, os.ErrNotExist) {
			if err := initRepo(repo, cfg.InitFsync, git); err != nil {
				return err
			}
		}
	}
	commits := 0
	var line []byte
	for i := 0; i < cfg.Plan.Changes; i++ {
		ch := changes.Next()
		repo := cfg.Plan.RepoDir(cfg.Dir, ch.File)
		if cfg.Plan.Layout == LayoutDistributed {
			// A directory left without its .git (a crash between mkdir and git init) is made one.
			if _, err := os.Stat(filepath.Join(repo, ".git")); errors.Is(err, os.ErrNotExist) {
				if err := initRepo(repo, cfg.InitFsync, git); err != nil {
					return err
				}
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
		}
		line = strconv.AppendInt(line[:0], int64(i+1), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(commits), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, time.Now().UnixNano(), 10)
		line = append(line, ' ', outcome, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
		if err := w.Flush(); err != nil { // the workload times each change as it ends
			return err
		}
	}
	return nil
}

// initSuffix names the directory beside a repository where its git init is made whole before it
// takes its place (init_fsync).
const initSuffix = ".persistlab-init"

// initRepo makes repo and runs git init in it. Durable (init_fsync), the init runs in a directory
// of its own beside repo and is synced, then takes repo's place (the whole directory, or its .git
// where repo exists) and the rename is synced: a crash leaves no repo or a whole one, never an
// empty directory or a half-written .git. What an interrupted init left beside it is the driver's
// own, and removed first.
func initRepo(repo string, durable bool, git func(dir string, args ...string) error) error {
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

// nothingToCommit is `git commit` finding the index as HEAD has it (exit 1, says so on stdout;
// the driver runs git with LC_ALL=C).
func (e *gitError) nothingToCommit() bool {
	var exit *exec.ExitError
	return errors.As(e.err, &exit) && exit.ExitCode() == 1 && bytes.Contains([]byte(e.stdout), []byte("nothing to commit"))
}

// flagParams are the driver's flags that are the workload's parameters, by parameter: they are
// read and bounded by the same definitions (Params), so a flag takes what a scenario may.
var flagParams = map[string]string{"files": "files", "changes": "changes", "file_bytes": "file-bytes", "layout": "layout", "seed": "seed", "init_fsync": "init-fsync"}

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
	return Drive(ctx, DriverConfig{Git: *git, Dir: *dir, InitFsync: s.InitFsync, Plan: s.Plan}, os.Stdout)
}

// Report is one line of the driver's output.
type Report struct {
	Change, Commits int
	At              time.Time
	Committed       bool
}

// ParseReport reads one line of the driver's output.
func ParseReport(line string) (Report, error) {
	var r Report
	var ns int64
	var outcome string
	if _, err := fmt.Sscanf(line, "%d %d %d %s", &r.Change, &r.Commits, &ns, &outcome); err != nil {
		return r, fmt.Errorf("driver line %q: %w", line, err)
	}
	if outcome != string(rune(Committed)) && outcome != string(rune(Unchanged)) {
		return r, fmt.Errorf("driver line %q: outcome %q, want c or n", line, outcome)
	}
	r.At, r.Committed = time.Unix(0, ns), outcome == string(rune(Committed))
	return r, nil
}
