package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"persistlab/internal/cgroup"
	"persistlab/lib/readfile"
	"persistlab/param"
	"persistlab/workload"
)

// cgroupFact is the fact of a result whose driver ran without a cgroup of its own.
const cgroupFact = "driver_cgroup"

// gcWaitCap bounds the wait after the last change for a gc git detached: a monolithic
// repository's repack of a few hundred thousand objects takes seconds to minutes.
const gcWaitCap = 10 * time.Minute

// makeGroup makes the cgroup the driver and its git run in, recorded in the cell's directory for
// clean. A detached gc calls setsid, leaving the driver's process group, so gc_auto_detach needs
// the cgroup: nothing else would hold the gc.
func (in *instance) makeGroup() error {
	if in.group != nil || in.noGroup != "" {
		return nil
	}
	g, err := cgroup.NewGroup(in.env.CellDir, in.env.Target.Wrap)
	if err == nil {
		in.group = g
		return nil
	}
	if in.s.GCAutoDetach {
		return &param.FieldError{Field: "workload.gc_auto_detach", Value: "true",
			Allowed: "false on this machine: git's detached gc leaves the driver's session, and no cgroup can be made to hold it (" + err.Error() + ")"}
	}
	in.noGroup = err.Error()
	return nil
}

// waitDetachedGC waits, after the driver's end, for the gc git detached to end by itself (at most
// gcWaitCap), so that disk use is what git left, not a repack half done; and says which
// repositories hold a gc.log, whose presence makes git skip their automatic gc for a day
// (gc.logExpiry).
func (in *instance) waitDetachedGC(ctx context.Context, res *workload.Result, usedBefore int64) error {
	// On a volume of the cell's own, statfs reads the disk use at once, a gc still running: what
	// a du right after the last commit saw (the seed's ran after its script, its gc detached).
	if usedAtEnd, _, own, err := fsUsage(in.env.Target.Dir); err == nil && own {
		res.Metrics["disk_at_end_mib"] = float64(usedAtEnd-usedBefore) / (1 << 20)
	}
	waited, empty := in.group.WaitEmpty(ctx, gcWaitCap)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	res.Metrics["gc_after_s"] = waited.Seconds()
	if !empty {
		res.Facts["gc_after"] = fmt.Sprintf("capped at %v: git's detached gc still ran when disk use was read (stopped with the instance)", gcWaitCap)
	}
	logs, err := gcLogs(in.env.Target.Dir)
	if err != nil {
		return err
	}
	if logs != "" {
		res.Facts["gc_log"] = logs
	}
	return nil
}

// maxGCLog bounds what is read of one gc.log (git writes a detached gc's stderr there).
const maxGCLog = 64 << 10

// gcLogs says how many of the repositories under dir hold a gc.log, and the first line of the
// first, "" when none does.
func gcLogs(dir string) (string, error) {
	all, err := repos(dir)
	if err != nil {
		return "", err
	}
	var n int
	var first string
	for _, repo := range all {
		b, err := readfile.Regular(filepath.Join(repo, ".git", "gc.log"), maxGCLog)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		n++
		if first == "" {
			switch {
			case err != nil:
				first = err.Error()
			default:
				first = firstLines(strings.TrimSpace(string(b)), 1)
			}
		}
	}
	if n == 0 {
		return "", nil
	}
	return fmt.Sprintf("%d of %d repositories hold a gc.log, so git skips their automatic gc for a day: %s", n, len(all), first), nil
}
