package httpapp

import (
	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/workload"
)

// newAppGroup makes the cgroup the app of one instance runs in, recorded in the cell's directory
// for clean. Where none can be made (no cgroup hierarchy this user may write) the app runs
// without one, and the reason says so in the results (addFacts).
func newAppGroup(env workload.Env) (*cgroup.Group, string) {
	g, err := cgroup.NewGroup(env.CellDir, env.Target.Wrap)
	if err != nil {
		return nil, err.Error()
	}
	return g, ""
}

// processes lists the app's processes: those in its cgroup, or without one, its process group.
func (in *instance) processes() []int {
	if in.group != nil {
		pids, _ := in.group.Members()
		return pids
	}
	var out []int
	for _, id := range proc.All() {
		if id.Group == in.child.Pid() {
			out = append(out, id.PID)
		}
	}
	return out
}

// AppCgroupFact is the fact of a result whose app ran without a cgroup of its own: why, and that
// only the app's process group was stopped at the end.
const AppCgroupFact = "app_cgroup"

func (in *instance) addFacts(out *workload.Result) {
	if in.noGroup != "" {
		out.Facts[AppCgroupFact] = "none (" + in.noGroup + "): only the app's process group is stopped at the end, not what it started outside it"
	}
}
