// Package all registers every backend; the CLI imports it, the runner does not.
package all

import (
	_ "persistlab/backend/cloudsql"   // registers itself
	_ "persistlab/backend/gcsfuse"    // registers itself
	_ "persistlab/backend/litestream" // registers itself
	_ "persistlab/backend/local"      // registers itself
	_ "persistlab/backend/mysql"      // registers itself
	_ "persistlab/backend/volume"     // registers itself
)
