// Package all registers every workload; the CLI imports it, the runner does not.
package all

import (
	_ "persistlab/workload/bulkload"  // registers itself
	_ "persistlab/workload/counter"   // registers itself
	_ "persistlab/workload/fio"       // registers itself
	_ "persistlab/workload/gitcommit" // registers itself
	_ "persistlab/workload/httpapp"   // registers itself
)
