package main

import "persistlab/workload/gitcommit"

// cmdAppGitcommit runs seed 004's loop (the gitcommit workload's driver) in this process, so that
// it and its git run where the workload placed the process (an emulated instance, CPUs).
func cmdAppGitcommit(args []string) error {
	return gitcommit.MainFlags(newFlags("app gitcommit"), args)
}
