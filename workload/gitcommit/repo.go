package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"persistlab/internal/proc"
)

// repos lists the repositories a run left under dir (the target): the one of the monolithic
// layout, or every file's of the distributed one, in a fixed order.
func repos(dir string) ([]string, error) {
	root := filepath.Join(dir, Root)
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		return []string{root}, nil
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), initSuffix) {
			continue // a durable init's staging directory is the driver's, not a repository
		}
		out = append(out, filepath.Join(root, e.Name()))
	}
	sort.Strings(out)
	return out, nil
}

// locationVars are the environment variables that tell git where a repository is, overriding its
// search from the working directory.
var locationVars = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"}

// confined is env for a git that works on the repository at dir and nowhere else: without a .git
// of its own, dir is no repository, rather than part of one above it (a user's, whose files git
// would then add and commit).
func confined(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(locationVars, name) {
			out = append(out, kv)
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return append(out, "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
}

// The most of git's output gitOutput holds: its stdout is read (a count, a ref; fsck's list of
// dangling objects, ignored, is the longest), of its stderr only the first lines are shown.
const (
	maxGitStdout = 16 << 20
	maxGitStderr = 64 << 10
)

// gitOutput runs git in dir, confined to it, with the workload's environment and returns its
// trimmed stdout. Its error is a *proc.CommandError naming the command "git ARGS" and keeping the
// first 3 lines of git's stderr (or stdout, if stderr is empty) on one line.
func gitOutput(ctx context.Context, git string, env []string, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, git, args...)
	cmd.Dir, cmd.Env = dir, confined(env, dir)
	what := "git " + strings.Join(args, " ")
	stdout, stderr := proc.NewLimitedBuffer(what, maxGitStdout), proc.NewLimitedBuffer(what, maxGitStderr)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if err == nil {
		err = stdout.Err()
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return "", &proc.CommandError{Args: append([]string{"git"}, args...), Output: firstLines(msg, 3), Err: err}
	}
	return strings.TrimSpace(stdout.String()), nil
}

// Tally is what the repositories under a directory hold.
type Tally struct {
	Repos   int
	Commits int64    // reachable from each repository's HEAD, summed
	Broken  []string // "fileN: what git said", for repositories whose HEAD does not read
}

// countCommits counts the commits reachable from each repository's HEAD, as `git rev-list
// --count HEAD` does. A repository whose first commit never happened counts 0; one whose HEAD
// does not read (a crash lost the ref's or an object's contents) counts 0 and is named in Broken.
func countCommits(ctx context.Context, git string, env []string, dir string) (Tally, error) {
	list, err := repos(dir)
	if err != nil {
		return Tally{}, err
	}
	t := Tally{Repos: len(list)}
	for _, repo := range list {
		if _, err := gitOutput(ctx, git, env, repo, "rev-parse", "-q", "--verify", "HEAD^{commit}"); err != nil {
			if ctx.Err() != nil {
				return t, ctx.Err()
			}
			if unborn(ctx, git, env, repo) {
				continue
			}
			t.Broken = append(t.Broken, filepath.Base(repo)+": "+err.Error())
			continue
		}
		out, err := gitOutput(ctx, git, env, repo, "rev-list", "--count", "HEAD")
		if err != nil {
			if ctx.Err() != nil {
				return t, ctx.Err()
			}
			t.Broken = append(t.Broken, filepath.Base(repo)+": "+err.Error())
			continue
		}
		n, err := strconv.ParseInt(out, 10, 64)
		if err != nil {
			return t, fmt.Errorf("git rev-list --count in %s said %q", repo, out)
		}
		t.Commits += n
	}
	return t, nil
}

// unborn says whether a repository's HEAD names a branch with no commit yet (a `git init` whose
// first commit did not happen): its ref file is absent, HEAD itself intact.
func unborn(ctx context.Context, git string, env []string, repo string) bool {
	ref, err := gitOutput(ctx, git, env, repo, "symbolic-ref", "-q", "HEAD")
	if err != nil || ref == "" {
		return false
	}
	_, err = os.Stat(filepath.Join(repo, ".git", filepath.FromSlash(ref)))
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	packed, _ := os.ReadFile(filepath.Join(repo, ".git", "packed-refs"))
	return !bytes.Contains(packed, []byte(" "+ref+"\n"))
}

// fsck runs `git fsck --full` on every repository and says which fail, in "fileN: output" form.
func fsck(ctx context.Context, git string, env []string, dir string) ([]string, error) {
	list, err := repos(dir)
	if err != nil {
		return nil, err
	}
	var failed []string
	for _, repo := range list {
		if _, err := gitOutput(ctx, git, env, repo, "fsck", "--full", "--no-progress"); err != nil {
			if ctx.Err() != nil {
				return failed, ctx.Err()
			}
			failed = append(failed, filepath.Base(repo)+": "+err.Error())
		}
	}
	return failed, nil
}

// DiskUse is the space a run's files take, as du counts it (allocated blocks).
type DiskUse struct {
	Git      int64 // everything but the checked-out files: .git directories, directories
	WorkTree int64 // the checked-out files
	Files    int64 // files in the work trees
}

// diskUse walks dir's repositories.
func diskUse(dir string) (DiskUse, error) {
	var u DiskUse
	root := filepath.Join(dir, Root)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no block count", path)
		}
		used := st.Blocks * 512
		rel, _ := filepath.Rel(root, path)
		inGit := rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator)) ||
			strings.Contains(rel, string(filepath.Separator)+".git"+string(filepath.Separator)) || strings.HasSuffix(rel, string(filepath.Separator)+".git")
		if inGit || !d.Type().IsRegular() {
			u.Git += used
			return nil
		}
		u.WorkTree += used
		u.Files++
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return u, nil
	}
	return u, err
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, " | ")
}
