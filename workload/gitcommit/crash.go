package gitcommit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"persistlab/workload"
)

// Kill implements workload.Acknowledged: SIGKILL to the driver and the git it runs, a detached gc
// too.
func (in *instance) Kill() {
	if in.driver != nil {
		in.driver.SignalKill()
	}
	in.group.Kill()
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Exited implements workload.Acknowledged.
func (in *instance) Exited() <-chan struct{} {
	if in.driver == nil {
		return closed
	}
	return in.driver.Done()
}

// Count implements workload.Acknowledged: the commits reachable from the repositories' HEADs.
func (in *instance) Count(ctx context.Context) (int64, error) {
	t, err := countCommits(ctx, in.w.git, readEnv(), in.env.Target.Dir)
	return t.Commits, err
}

// Inspect implements workload.Inspector: the commits git still reaches after a crash, and what
// `git fsck --full` says of each repository.
func (w *Workload) Inspect(dir, _ string) workload.Survivor {
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(dir, Root)); err != nil {
		return workload.Survivor{Integrity: "no repositories: " + err.Error()}
	}
	t, err := countCommits(ctx, w.git, readEnv(), dir)
	if err != nil {
		return workload.Survivor{Exists: true, Integrity: err.Error()}
	}
	failed, err := fsck(ctx, w.git, readEnv(), dir)
	if err != nil {
		return workload.Survivor{Exists: true, Count: t.Commits, Integrity: err.Error()}
	}
	if len(failed) == 0 {
		return workload.Survivor{Exists: true, Count: t.Commits, Integrity: "ok"}
	}
	report := fmt.Sprintf("%d of %d repositories fail git fsck --full (%d with an unreadable HEAD): %s",
		len(failed), t.Repos, len(t.Broken), strings.Join(failed[:min(3, len(failed))], "; "))
	return workload.Survivor{Exists: true, Count: t.Commits, Integrity: report}
}
