// Package all links every workload's presenter and seed scores into the report, as the command
// needs them; import it for its side effects.
package all

import (
	_ "persistlab/report/bulkload"
	_ "persistlab/report/counter"
	_ "persistlab/report/fio"
	_ "persistlab/report/gitcommit"
)
