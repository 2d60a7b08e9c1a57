package bulkload

import (
	"testing"

	"persistlab/workload"
	"persistlab/workload/conformance"
)

// bulkload on a local directory: the real MariaDB with a 16 MiB pool loads 3,000 rows of 300 bytes
// with two loaders; Stop twice leaves no mariadbd and no client behind.
func TestConformance(t *testing.T) {
	conformance.Run(t, Name, conformance.Options{
		Fixed: map[string]string{"rows": "3000", "row_bytes": "300", "loaders": "2", "buffer_pool": "16MiB"},
		// Drive reports the steady mean of every series it samples, two of them undeclared.
		Result: func(t *testing.T, res *workload.Result) {
			if m := res.Metrics; m["rows_loaded"] != 6000 || m["warnings"] != 0 || m["table_mib"] <= 0 {
				t.Errorf("rows %v, warnings %v, table %v MiB", m["rows_loaded"], m["warnings"], m["table_mib"])
			}
		},
	})
}
