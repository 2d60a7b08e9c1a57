package results

import "persistlab/scenario"

// CrashRun is one lost instance: load, SIGKILL at a random moment with the local disk thrown away,
// recovery from what persisted, and the count the new instance reads.
type CrashRun struct {
	scenario.Cell
	KillAfterS float64 `json:"kill_after_s"` // of load
	MaxAcked   int64   `json:"max_acked"`    // the highest count any client saw acknowledged
	Recovered  int64   `json:"recovered"`    // the count after recovery
	Lost       int64   `json:"lost"`         // acknowledged writes the recovered database lacks
	// UnackedKept counts writes the recovered database holds that no client saw acknowledged (requests
	// in flight at the kill); never more than the number of VUs.
	UnackedKept int64 `json:"unacked_kept"`
	// LostWindowMs spans the lost writes' acknowledgements, first to last; LostReachMs is how long
	// before the kill the first lost write was acknowledged.
	LostWindowMs float64 `json:"lost_window_ms"`
	LostReachMs  float64 `json:"lost_reach_ms"`
	// Position is the count held by the replica as recorded at the kill (Litestream); recovery must
	// not come back below it.
	Position   *int64  `json:"position,omitempty"`
	RecoveryMs float64 `json:"recovery_ms"` // from the new instance's start to its first answer
	Integrity  string  `json:"integrity"`   // PRAGMA integrity_check of the recovered database
	DBExisted  bool    `json:"db_existed"`  // whether recovery found a database at all
	// LoadS, OKBeforeKill and BackendStats cover the load before the kill: what the bucket was asked
	// to do for the durability the crash then showed.
	LoadS        float64            `json:"load_s"`
	OKBeforeKill int64              `json:"ok_before_kill"`
	BackendStats map[string]float64 `json:"backend_stats,omitempty"`
	Failure      string             `json:"failure,omitempty"`
}

// CrashSummary is a backend's crash runs at one VU level.
type CrashSummary struct {
	Backend           string  `json:"backend"`
	Point             string  `json:"point"`
	Runs              int     `json:"runs"`
	LostMin           int64   `json:"lost_min"`
	LostMedian        float64 `json:"lost_median"`
	LostMax           int64   `json:"lost_max"`
	LostEverything    int     `json:"lost_everything"` // runs that recovered none of what was acknowledged
	WindowMedianMs    float64 `json:"lost_window_median_ms"`
	ReachMedianMs     float64 `json:"lost_reach_median_ms"`
	ReachMaxMs        float64 `json:"lost_reach_max_ms"`
	RecoveryMedianMs  float64 `json:"recovery_median_ms"`
	AckedPerS         float64 `json:"acked_per_s"` // acknowledged writes per second of load, median over runs: what the durability costs in pace
	IntegrityFailures int     `json:"integrity_failures"`
	BelowPosition     int     `json:"below_position"`              // recoveries below the recorded replica position: must be 0
	Positions         int     `json:"positions,omitempty"`         // runs with a replica position recorded (a workload that can count its data)
	IntegrityChecked  int     `json:"integrity_checked,omitempty"` // runs whose recovered data was checked
	ClassAPerS        float64 `json:"class_a_per_s,omitempty"`     // median over runs, during load
	Costs             []Cost  `json:"costs,omitempty"`             // none where TooFewToPrice
	// TooFewToPrice: the median run counted fewer than MinPricedOps bucket operations (pricedOps).
	TooFewToPrice bool    `json:"too_few_to_price,omitempty"`
	ClassAOps     float64 `json:"class_a_ops_per_run,omitempty"`
	ClassBOps     float64 `json:"class_b_ops_per_run,omitempty"`
}
