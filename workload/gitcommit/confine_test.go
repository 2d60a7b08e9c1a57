package gitcommit

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"persistlab/param"
)

// identity gives the driver's git a committer, as the workload's own configuration does.
func identity(t *testing.T) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = t\n\temail = t@localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

// A target inside a user's repository, with a file's directory left without its .git: git must
// not walk up into the user's repository and commit the user's files there.
func TestDriverNeverCommitsToARepositoryAbove(t *testing.T) {
	newWorkload(t) // skips without git
	identity(t)
	for _, withGitDir := range []bool{false, true} {
		outer := t.TempDir()
		git(t, outer, "init", "-q")
		if err := os.WriteFile(filepath.Join(outer, "README"), []byte("the user's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, outer, "add", "README")
		git(t, outer, "-c", "user.name=u", "-c", "user.email=u@localhost", "commit", "-q", "-m", "the user's")
		target := filepath.Join(outer, "target")
		leftover := filepath.Join(target, Root, FileName(1))
		if err := os.MkdirAll(leftover, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(leftover, "untracked"), []byte("the user's too\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if withGitDir {
			t.Setenv("GIT_DIR", filepath.Join(outer, ".git"))
		}
		if tally, err := countCommits(context.Background(), "git", readEnv(), target); err != nil || tally.Commits != 0 {
			t.Errorf("GIT_DIR set %v: commits under the target before the run: %+v, %v; want 0 (the user's are not the run's)", withGitDir, tally, err)
		}
		err := Drive(context.Background(), DriverConfig{Git: "git", Dir: target,
			Plan: Plan{Files: 1, Changes: 3, Layout: LayoutDistributed, Seed: 1}}, io.Discard)
		os.Unsetenv("GIT_DIR")
		if err != nil {
			t.Fatalf("GIT_DIR set %v: %v", withGitDir, err)
		}
		if n := git(t, outer, "rev-list", "--count", "HEAD"); n != "1" {
			t.Errorf("GIT_DIR set %v: the user's repository has %s commits, want its 1", withGitDir, n)
		}
		if staged := git(t, outer, "diff", "--cached", "--name-only"); staged != "" {
			t.Errorf("GIT_DIR set %v: the user's repository has staged %q", withGitDir, staged)
		}
		if _, err := os.Stat(filepath.Join(leftover, ".git")); err != nil {
			t.Errorf("GIT_DIR set %v: the leftover directory was not made a repository of its own: %v", withGitDir, err)
		}
	}
}

// The driver's flags take what the workload's parameters take, bounds included.
func TestDriverFlagsTakeTheParametersBounds(t *testing.T) {
	newWorkload(t)
	identity(t)
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--files", "1", "--changes", "1", "--file-bytes", "2097152"}, "--file-bytes"},
		{[]string{"--files", "1000001", "--changes", "1"}, "--files"},
		{[]string{"--changes", "0"}, "--changes"},
		{[]string{"--files", "1", "--changes", "1", "--layout", "sharded"}, "--layout"},
		{[]string{"--files", "1", "--changes", "1", "--seed", "-1"}, "--seed"},
		{[]string{"--files", "1", "--changes", "1", "--init-fsync=maybe"}, "--init-fsync"},
	} {
		dir := t.TempDir()
		err := Main(append([]string{"--dir", dir}, c.args...))
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != c.flag {
			t.Errorf("%v: %v, want a refusal naming %s", c.args, err, c.flag)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("%v: the refused run wrote to its directory", c.args)
		}
	}
	// A size as a scenario writes it.
	if err := Main([]string{"--dir", t.TempDir(), "--files", "1", "--changes", "1", "--file-bytes", "1KiB", "--init-fsync"}); err != nil {
		t.Errorf("--file-bytes 1KiB --init-fsync: %v", err)
	}
}

// git's stdout is read within a bound: more is an error naming the command, not memory spent.
// The fake git writes four times the bound, so that a reader holding it all would allocate at
// least all of it, where a bounded one allocates about half (a buffer doubling to its limit).
func TestGitOutputIsBounded(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "git")
	written := 4*maxGitStdout + 1
	script := "#!/bin/sh\nhead -c " + strconv.Itoa(written) + " /dev/zero\nhead -c 1048576 /dev/zero | tr '\\0' w >&2\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := gitOutput(context.Background(), fake, nil, dir, "rev-list", "--count", "HEAD")
	runtime.ReadMemStats(&after)
	want := "git rev-list --count HEAD: the output of git rev-list --count HEAD is " + strconv.Itoa(written) + " bytes"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %.200v; want it to start %q", err, want)
	}
	// The bound is the output itself, not the buffer's 2×limit plus a guess at what the runtime
	// allocates meanwhile: that guess (8 MiB) failed a CI beside a busy core by 95 KB, and the
	// half left between the two is the room.
	if used := after.TotalAlloc - before.TotalAlloc; used >= uint64(written) {
		t.Errorf("%d bytes of output allocated %d bytes: as much as holding all of it", written+1<<20, used)
	}
}
