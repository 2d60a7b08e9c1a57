package gitcommit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/backend"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// The test binary is also the driver: the workload runs `Self app gitcommit ...`.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "app" && os.Args[2] == "gitcommit" {
		if err := Main(os.Args[3:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func newWorkload(t *testing.T) *Workload {
	t.Helper()
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Skipf("git: %v", err)
	}
	return w.(*Workload)
}

func start(t *testing.T, w *Workload, dir string, fixed map[string]string) *instance {
	t.Helper()
	p := workload.Resolve(Params, fixed, nil)
	if err := w.Check(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: dir}, CellDir: t.TempDir(), Params: p, Self: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Stop(context.Background()) })
	return in.(*instance)
}

func drive(t *testing.T, fixed map[string]string) (*workload.Result, string) {
	t.Helper()
	dir := t.TempDir()
	res, err := start(t, newWorkload(t), dir, fixed).Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return res, dir
}

// git runs git in dir as a reader of the repositories, independently of the workload's code.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v: %s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestPlanRepeatsAndDrawsTheSeedsContent(t *testing.T) {
	p := Plan{Files: 50, Changes: 500, Layout: LayoutDistributed, Seed: 7}
	a, b, other := p.Iterate(), p.Iterate(), Plan{Files: 50, Changes: 500, Layout: LayoutDistributed, Seed: 8}.Iterate()
	line := regexp.MustCompile(`^\{0: \d+, 1: \d+, 2: \d+, 3: \d+, 4: \d+, 5: \d+, 6: \d+, 7: \d+, 8: \d+, 9: \d+\}\n$`)
	variants, files := map[string]bool{}, map[int]bool{}
	differs := false
	for i := 0; i < p.Changes; i++ {
		x, y, z := a.Next(), b.Next(), other.Next()
		if x.File != y.File || string(x.Content) != string(y.Content) {
			t.Fatalf("change %d differs under one seed: %d %q vs %d %q", i, x.File, x.Content, y.File, y.Content)
		}
		if x.File != z.File || string(x.Content) != string(z.Content) {
			differs = true
		}
		if !line.Match(x.Content) || strings.Count(string(x.Content), ": 100") != 1 || len(x.Content) != seedLineBytes {
			t.Fatalf("change %d: content %q is not the seed's line with one value 100", i, x.Content)
		}
		if x.File < 1 || x.File > p.Files {
			t.Fatalf("change %d: file %d outside 1..%d", i, x.File, p.Files)
		}
		variants[string(x.Content)], files[x.File] = true, true
	}
	if !differs {
		t.Error("seeds 7 and 8 drew the same changes")
	}
	if len(variants) != 10 || len(files) < 40 {
		t.Errorf("%d content variants and %d files drawn in 500 changes, want the seed's 10 and nearly all of 50", len(variants), len(files))
	}
	sized := Plan{Files: 3, Changes: 3, FileBytes: 100, Layout: LayoutDistributed, Seed: 1}.Iterate().Next()
	if len(sized.Content) != 100 {
		t.Errorf("file_bytes 100 gave %d bytes", len(sized.Content))
	}
}

func TestCommitCountIsWhatGitHas(t *testing.T) {
	res, dir := drive(t, map[string]string{"files": "20", "changes": "120", "window": "40"})
	m := res.Metrics
	var revList int64
	list, _ := filepath.Glob(filepath.Join(dir, Root, "file*"))
	for _, repo := range list {
		n, err := strconv.ParseInt(git(t, repo, "rev-list", "--count", "HEAD"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		revList += n
	}
	if int64(m["ok"]) != revList || m["ok"]+m["unchanged"] != 120 || m["changes"] != 120 {
		t.Errorf("ok %v + unchanged %v of changes %v; git rev-list counts %d commits", m["ok"], m["unchanged"], m["changes"], revList)
	}
	// Ten variants of the line: a change to an existing file repeats its content now and then.
	if m["unchanged"] == 0 || m["repos"] != float64(len(list)) {
		t.Errorf("unchanged %v (want some), repos %v for %d directories", m["unchanged"], m["repos"], len(list))
	}
	if got := len(res.Series["changes_per_s"]); got != 3 || res.Series["changes"][2].V != 120 {
		t.Errorf("series %v, want 3 windows of 40 changes ending at change 120", res.Series)
	}
	if m["changes_per_s"] <= 0 || m["min_window_per_s"] > m["max_window_per_s"] || res.Histograms["change"].Count() != 120 {
		t.Errorf("rates %v, %d changes timed", m, res.Histograms["change"].Count())
	}
	if res.Facts["git_version"] == "" || res.Facts["core_fsync"] != FsyncDefault {
		t.Errorf("facts %v", res.Facts)
	}
}

func TestOneSeedMakesTheSameCommits(t *testing.T) {
	heads := func(fixed map[string]string) []string {
		_, dir := drive(t, fixed)
		var out []string
		list, _ := repos(dir)
		for _, repo := range list {
			out = append(out, filepath.Base(repo)+"="+git(t, repo, "rev-parse", "HEAD"))
		}
		return out
	}
	fixed := map[string]string{"files": "5", "changes": "15", "layout": LayoutMonolithic, "seed": "3"}
	a, b := heads(fixed), heads(fixed)
	fixed["seed"] = "4"
	c := heads(fixed)
	if strings.Join(a, " ") != strings.Join(b, " ") || len(a) != 1 {
		t.Errorf("one seed, two histories: %v vs %v", a, b)
	}
	if strings.Join(a, " ") == strings.Join(c, " ") {
		t.Errorf("seeds 3 and 4 made the same history %v", a)
	}
}

func TestLayoutsDifferInDiskUse(t *testing.T) {
	fixed := map[string]string{"files": "30", "changes": "90"}
	dist, _ := drive(t, fixed)
	fixed["layout"] = LayoutMonolithic
	mono, monoDir := drive(t, fixed)
	if mono.Metrics["repos"] != 1 || dist.Metrics["repos"] < 20 {
		t.Errorf("repos: monolithic %v, distributed %v", mono.Metrics["repos"], dist.Metrics["repos"])
	}
	// A repository per file pays git init's templates per file: the seed's 1.1 GB against 460 MB.
	if dist.Metrics["git_mib"] < 3*mono.Metrics["git_mib"] {
		t.Errorf("git disk use: distributed %.2f MiB, monolithic %.2f MiB; want distributed several times larger", dist.Metrics["git_mib"], mono.Metrics["git_mib"])
	}
	if mono.Metrics["ok"] != float64(toInt(git(t, filepath.Join(monoDir, Root), "rev-list", "--count", "HEAD"))) {
		t.Errorf("monolithic: %v commits counted, git has %s", mono.Metrics["ok"], git(t, filepath.Join(monoDir, Root), "rev-list", "--count", "HEAD"))
	}
	if dist.Metrics["worktree_mib"] <= 0 || dist.Metrics["as_files_mib"] <= 0 {
		t.Errorf("work tree %.3f MiB, as files %.3f MiB", dist.Metrics["worktree_mib"], dist.Metrics["as_files_mib"])
	}
}

func toInt(s string) int { n, _ := strconv.Atoi(s); return n }

func TestKilledMidRunCountsWhatWasAcknowledged(t *testing.T) {
	w := newWorkload(t)
	dir := t.TempDir()
	in := start(t, w, dir, map[string]string{"files": "40", "changes": "100000"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		acked int64
		err   error
	}
	done := make(chan out, 1)
	go func() {
		_, acks, err := in.DriveAcked(ctx, 0)
		if err != nil {
			done <- out{err: err}
			return
		}
		done <- out{acked: acks.Max()}
	}()
	// Kill once git holds two commits, however long a busy machine takes to make them. The driver
	// reports each change (flushed) before it starts the next, so the second commit on disk means
	// the first was acknowledged: the kill lands mid-run with something to account for.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if c, err := in.Count(context.Background()); err == nil && c >= 2 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the driver ended before git held 2 commits: acknowledged %d, %v", r.acked, r.err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("git held fewer than 2 commits after 60 s")
		}
	}
	in.Kill()
	select {
	case <-in.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the killed driver did not exit")
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	n, err := in.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Local disk keeps what a killed process wrote: every acknowledged commit, and at most the one
	// in flight beyond them.
	if r.acked == 0 || n < r.acked || n > r.acked+1 {
		t.Errorf("acknowledged %d commits, git has %d", r.acked, n)
	}
	t.Logf("killed with %d commits acknowledged, git has %d", r.acked, n)
	// The kill may cut the `git init` of the file changed next: that one repository, holding
	// nothing acknowledged, may fail fsck; every other one must pass.
	if s := w.Inspect(dir, ""); !s.Exists || s.Count != n || (s.Integrity != "ok" && !strings.HasPrefix(s.Integrity, "1 of ")) {
		t.Errorf("inspect: %+v, want %d commits and fsck passing on every repository but the one in flight", s, n)
	}
}

func TestBadInputIsRefusedBeforeAnything(t *testing.T) {
	w := newWorkload(t)
	for _, c := range []struct {
		fixed map[string]string
		field string
	}{
		{map[string]string{"changes": "0"}, "workload.changes"},
		{map[string]string{"files": "0"}, "workload.files"},
		{map[string]string{"changes": "99999999999"}, "workload.changes"},
		{map[string]string{"window": "0"}, "workload.window"},
		{map[string]string{"layout": "sharded"}, "workload.layout"},
		{map[string]string{"fsync": "sometimes"}, "workload.fsync"},
		{map[string]string{"prefill": "touched"}, "workload.prefill"},
		{map[string]string{"prefill": "touched", "rate": "20"}, "workload.prefill"},
		{map[string]string{"prefill": "touched", "time_limit": "20s"}, "workload.prefill"},
		{map[string]string{"prefill": "some"}, "workload.prefill"},
		{map[string]string{"rate": "-1"}, "workload.rate"},
		{map[string]string{"rate": "20000"}, "workload.rate"},
		{map[string]string{"time_limit": "48h"}, "workload.time_limit"},
		{map[string]string{"time_limit": "-1s"}, "workload.time_limit"},
	} {
		err := w.Check(context.Background(), workload.Resolve(Params, c.fixed, nil))
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%v: %v, want an error naming %s", c.fixed, err, c.field)
		}
	}
}

func TestTargetTooSmallIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	w := newWorkload(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, 0) })
	p := workload.Resolve(Params, map[string]string{"files": "100", "changes": "1000"}, nil)
	_, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: dir}, CellDir: t.TempDir(), Params: p, Self: os.Args[0]})
	var fe *param.FieldError
	if !errors.As(err, &fe) || fe.Field != "workload.changes" || !strings.Contains(fe.Allowed, "free") {
		t.Errorf("a 1 MiB target for 1,000 changes: %v, want a refusal naming the free space", err)
	}
	if _, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: dir}, CellDir: t.TempDir(),
		Params: workload.Resolve(Params, map[string]string{"files": "1", "changes": "2"}, nil), Self: os.Args[0]}); err != nil {
		t.Errorf("2 changes on 1 MiB: %v", err)
	}
}

// A durable init (init_fsync) is whole or absent after a crash: what a crash in the middle of
// one left (a staging directory holding a .git whose config git cannot read) is not taken for a
// repository, and the next run makes the repository anew, whether its directory is there (the
// monolithic layout's, or one a run without init_fsync made) or not, and commits in it.
func TestAnInterruptedDurableInitLeavesNoBrokenRepository(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	plan := Plan{Files: 3, Changes: 30, Layout: LayoutDistributed, Seed: 1}
	for file := 1; file <= plan.Files; file++ {
		repo := plan.RepoDir(dir, file)
		staging := repo + initSuffix
		if err := os.MkdirAll(filepath.Join(staging, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(staging, ".git", "config"), []byte("\x00\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
		if file == 1 { // a directory without its .git
			if err := os.Mkdir(repo, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if list, err := repos(dir); err != nil || len(list) != 1 {
		t.Fatalf("after a crash in every init, repositories %v (%v): want the one directory alone, not the staging ones", list, err)
	}
	var out strings.Builder
	if err := Drive(context.Background(), DriverConfig{Git: gitBin, Dir: dir, Plan: plan, InitFsync: true}, &out); err != nil {
		t.Fatal(err)
	}
	failed, err := fsck(context.Background(), gitBin, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"), dir)
	if err != nil || len(failed) > 0 {
		t.Errorf("fsck after the next run: %v %v", failed, err)
	}
	list, _ := repos(dir)
	var commits int64
	for _, repo := range list {
		n, _ := strconv.ParseInt(git(t, repo, "rev-list", "--count", "HEAD"), 10, 64)
		commits += n
	}
	if len(list) != plan.Files || commits == 0 {
		t.Errorf("%d repositories, %d commits: want %d repositories with commits", len(list), commits, plan.Files)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, Root, "*"+initSuffix)); len(left) > 0 {
		t.Errorf("staging directories left: %v", left)
	}
}

// A git that fails keeps its exit status reachable: the caller can tell git's own refusal from
// a git that could not run.
func TestAGitErrorKeepsItsCause(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	run, _ := newGitRunner(context.Background(), gitBin)
	err = run(t.TempDir(), "rev-parse", "HEAD") // not a repository
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("git in no repository: %v, want its exit status through errors.As", err)
	}
	run, _ = newGitRunner(context.Background(), filepath.Join(t.TempDir(), "no-git"))
	err = run(t.TempDir(), "status")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a git that is not there: %v, want os.ErrNotExist through errors.Is", err)
	}
}

// With git's default gc.autoDetach, git's automatic gc runs in the background in a session of its
// own: the run waits for it before it reads disk use, the driver's cgroup holds it, and nothing
// of it outlives the run. Without it, the gc runs inside the commit that triggers it.
func TestADetachedGCIsWaitedForAndOwned(t *testing.T) {
	w := newWorkload(t)
	// gc.auto=1: git's automatic gc runs once objects/17 holds two loose objects, a few hundred
	// objects in, where the default 6,700 would take thousands of changes.
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "gc.auto")
	t.Setenv("GIT_CONFIG_VALUE_0", "1")
	for _, detach := range []string{"false", "true"} {
		dir := t.TempDir()
		in := start(t, w, dir, map[string]string{"layout": LayoutMonolithic, "files": "20", "changes": "400", "gc_auto_detach": detach})
		res, err := in.Drive(context.Background(), 0)
		if err != nil {
			t.Fatalf("gc_auto_detach %s: %v", detach, err)
		}
		if in.group == nil {
			t.Fatalf("gc_auto_detach %s: the driver ran without a cgroup: %s", detach, in.noGroup)
		}
		if left, err := in.group.Members(); err != nil || len(left) != 0 {
			t.Errorf("gc_auto_detach %s: processes %v (%v) still in the driver's cgroup when the run returned", detach, left, err)
		}
		gitDir := filepath.Join(dir, Root, ".git")
		packs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.pack"))
		if res.Metrics["auto_gcs"] < 1 || len(packs) == 0 {
			t.Errorf("gc_auto_detach %s: %v automatic gcs begun, %d packs in %s: want one at least, and its pack", detach, res.Metrics["auto_gcs"], len(packs), gitDir)
		}
		if _, err := os.Stat(filepath.Join(gitDir, "gc.pid")); err == nil {
			t.Errorf("gc_auto_detach %s: a gc still held its lock when disk use was read", detach)
		}
		if res.Facts["gc_auto_detach"] != detach || res.Facts["gc_log"] != "" {
			t.Errorf("gc_auto_detach %s: facts %q, gc_log %q", detach, res.Facts["gc_auto_detach"], res.Facts["gc_log"])
		}
		if _, waited := res.Metrics["gc_after_s"]; waited != (detach == "true") {
			t.Errorf("gc_auto_detach %s: gc_after_s reported %v", detach, waited)
		}
		groupDir := in.group.Dir
		if err := in.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(groupDir); !os.IsNotExist(err) {
			t.Errorf("gc_auto_detach %s: the driver's cgroup %s after Stop: %v", detach, groupDir, err)
		}
	}
}

// Each outcome the driver reports reads back as it was meant; another is refused, named.
func TestParseReportReadsEachOutcome(t *testing.T) {
	for _, c := range []struct {
		line              string
		committed, autoGC bool
	}{{"3 2 1000 c 0", true, false}, {"4 3 2000 g 1", true, true}, {"5 3 3000 n 0", false, false}} {
		r, err := ParseReport(c.line)
		if err != nil || r.Committed != c.committed || r.AutoGC != c.autoGC {
			t.Errorf("%q: %+v, %v; want committed %v, auto gc %v", c.line, r, err, c.committed, c.autoGC)
		}
	}
	if _, err := ParseReport("6 3 1 x 0"); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("an unknown outcome: %v, want an error naming it", err)
	}
}
