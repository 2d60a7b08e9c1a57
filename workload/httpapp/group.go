package httpapp

import "persistlab/internal/proc"

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
