// Package all registers every workload and its presentation; the CLI imports it, the runner does not.
package all

import (
	_ "persistlab/workload/counter" // registers itself
)
