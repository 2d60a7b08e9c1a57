package httpload

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"persistlab/internal/cgroup"
	"persistlab/workload"
)

// NewAppGroup makes the cgroup an app of one instance runs in, inside the instance's (Target.Wrap),
// recorded in the cell's directory for clean: whatever the app starts is stopped with it. Where
// none can be made (no cgroup hierarchy this user may write) the app runs without one, and the
// reason returned goes into its results (AddGroupFact). Every workload that starts an app
// (counter, http) runs it so.
func NewAppGroup(env workload.Env) (*cgroup.Group, string) {
	g, err := cgroup.NewGroup(env.CellDir, env.Target.Wrap)
	if err != nil {
		return nil, err.Error()
	}
	return g, ""
}

// AppLog is where the app of a cell's next instance logs: app.log for the first, app-2.log beside
// it for a recovered or second one; tag ("", "-2", ...) names that instance's other files.
func AppLog(cellDir string) (log, tag string) {
	log = filepath.Join(cellDir, "app.log")
	for i := 2; ; i++ {
		if _, err := os.Stat(log); err != nil {
			return log, tag
		}
		tag = fmt.Sprintf("-%d", i)
		log = filepath.Join(cellDir, "app"+tag+".log")
	}
}

// AppCgroupFact is the fact of a result whose app ran without a cgroup of its own.
const AppCgroupFact = "app_cgroup"

// AddGroupFact says in a result that the app ran without a cgroup, and why (noGroup, "" if it had one).
func AddGroupFact(out *workload.Result, noGroup string) {
	if noGroup != "" {
		out.Facts[AppCgroupFact] = "none (" + noGroup + "): only the app's process group is stopped at the end, not what it started outside it"
	}
}

// CPUUtil is CPU time over elapsed as a share of the CPUs the app was pinned to (all CPUs when it
// was not pinned).
func CPUUtil(cpu, elapsed time.Duration, cpus int) float64 {
	if cpus == 0 {
		cpus = runtime.NumCPU()
	}
	if elapsed <= 0 {
		return 0
	}
	return cpu.Seconds() / elapsed.Seconds() / float64(cpus)
}
