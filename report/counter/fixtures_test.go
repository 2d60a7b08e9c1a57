package counter

import "persistlab/report/reporttest"

// The fixtures shared with the report's own tests, under the names the tests use.
var (
	cell        = reporttest.Cell
	counterSpec = reporttest.CounterSpec
	scaled      = reporttest.Scaled
	thresholds  = reporttest.Thresholds
)

const recorded = "../testdata/cloudrun-sqlite-quick.json" // a real `persistlab run cloudrun-sqlite --quick`
