package gitcommit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/internal/proc"
	"persistlab/workload"
)

// Prefill modes: which repositories exist before the measured changes.
const (
	PrefillNone    = "none"
	PrefillTouched = "touched" // those the first ceil(rate·time_limit) changes write
	PrefillAll     = "all"     // every file's
)

// Bounds of the pacing parameters.
const (
	MaxTimeLimit = 24 * time.Hour
	MaxRate      = 10_000 // changes/s: each is two git processes, far above what one machine runs
)

// NoLimitWritebackCap bounds the write-back's wait when no time_limit sets it (twice the limit).
const NoLimitWritebackCap = 10 * time.Minute

// writebackCap is the longest the timed syncfs after the changes is waited for.
func writebackCap(limit time.Duration) time.Duration {
	if limit <= 0 {
		return NoLimitWritebackCap
	}
	return 2 * limit
}

// holdsRepositories says whether dir holds a run's repositories (or anything under their root).
func holdsRepositories(dir string) bool {
	n, err := os.ReadDir(filepath.Join(dir, Root))
	return err == nil && len(n) > 0
}

// prefill makes the repositories of the prefill's files on an empty target: the driver, in the
// instance as the changes run, under the backend's Unmetered where it has one (the volume's model
// off, what it wrote then written back), so that the cell measures neither it, nor its
// write-back, nor the look at the target before it.
func (in *instance) prefill(ctx context.Context) error {
	used, _, _, err := fsUsage(in.env.Target.Dir)
	if err != nil {
		return err
	}
	env, err := in.driverEnv(false) // the prefill's gc, if one runs, ends with it: nothing detached
	if err != nil {
		return err
	}
	args := append(in.driverArgs(nil), "--prefill", in.s.Prefill, "--prefill-only")
	if in.s.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(in.s.Rate, 'g', -1, 64))
	}
	if in.s.TimeLimit > 0 {
		args = append(args, "--time-limit", in.s.TimeLimit.String())
	}
	log := filepath.Join(in.env.CellDir, "gitcommit-prefill.log")
	run := func(ctx context.Context) error {
		if holdsRepositories(in.env.Target.Dir) {
			return nil // a recovered instance's, or a run's that the changes then refuse
		}
		child, err := proc.Start("gitcommit prefill", log, env, args...)
		if err != nil {
			return err
		}
		stopOnCancel := context.AfterFunc(ctx, func() { _ = child.Stop(context.Background()) })
		defer stopOnCancel()
		<-child.Done()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if state := child.Cmd.ProcessState; state == nil || !state.Success() {
			return fmt.Errorf("gitcommit prefill failed (%v): %s", state, tail(log))
		}
		in.prefillDone = true
		return nil
	}
	if in.env.Target.Unmetered != nil {
		err = in.env.Target.Unmetered(ctx, run)
	} else {
		err = run(ctx)
	}
	if err != nil || !in.prefillDone {
		return err
	}
	in.prefilled, in.usedBefore = in.s.prefillFiles(), used
	in.prefillCommits = len(in.prefilled)
	if in.s.Plan.Layout == LayoutMonolithic {
		in.prefillCommits = min(1, len(in.prefilled))
	}
	return nil
}

// timeWriteBack times a syncfs of the target: what the changes left in the page cache reaching
// the volume. It waits at most writebackCap; a syncfs still running then goes on, and Stop waits
// for it.
func (in *instance) timeWriteBack(ctx context.Context, res *workload.Result) error {
	limit := writebackCap(in.s.TimeLimit)
	finished := make(chan struct{})
	var syncErr error
	t0 := time.Now()
	go func() {
		defer close(finished)
		syncErr = syncFS(in.env.Target.Dir)
	}()
	in.writingBack = finished
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var took time.Duration
	select {
	case <-finished:
		took = time.Since(t0)
		if syncErr != nil {
			return fmt.Errorf("write-back after the changes: %w", syncErr)
		}
	case <-timer.C:
		took = limit
		res.Facts["writeback"] = fmt.Sprintf("capped at %v: sustained_per_s is an upper bound", limit)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	m := res.Metrics
	m["writeback_s"] = took.Seconds()
	m["sustained_per_s"] = m["changes_per_s"]
	if took > res.Elapsed && took > 0 {
		m["sustained_per_s"] = m["changes_per_s"] * res.Elapsed.Seconds() / took.Seconds()
	}
	return nil
}

// syncFS writes back the file system holding dir (syncfs(2)).
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
