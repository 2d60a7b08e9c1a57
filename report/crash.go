package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"persistlab/measure"
	"persistlab/scenario"
)

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

func summarizeCrashes(r *Results) {
	groups, order := groupByPoint(r, r.Crashes, func(c CrashRun) (pointKey, bool) { return r.key(c.Cell), c.Failure == "" })
	r.CrashSummaries = r.CrashSummaries[:0]
	for _, k := range order {
		runs := groups[k]
		s := CrashSummary{Backend: k.backend, Point: k.point, Runs: len(runs), LostMin: runs[0].Lost, LostMax: runs[0].Lost}
		var lost, window, reach, recovery, aps, bps, perOKA, perOKB, acked, opsA, opsB, priced []float64
		for _, c := range runs {
			if c.LoadS > 0 {
				acked = append(acked, float64(c.OKBeforeKill)/c.LoadS)
			}
			if _, ok := c.BackendStats["bucket_class_a"]; ok && c.LoadS > 0 && c.OKBeforeKill > 0 {
				aps = append(aps, c.BackendStats["bucket_class_a"]/c.LoadS)
				bps = append(bps, c.BackendStats["bucket_class_b"]/c.LoadS)
				perOKA = append(perOKA, c.BackendStats["bucket_class_a"]/float64(c.OKBeforeKill))
				perOKB = append(perOKB, c.BackendStats["bucket_class_b"]/float64(c.OKBeforeKill))
				opsA = append(opsA, c.BackendStats["bucket_class_a"])
				opsB = append(opsB, c.BackendStats["bucket_class_b"])
				priced = append(priced, pricedOps(r.prices(), c.BackendStats["bucket_class_a"], c.BackendStats["bucket_class_b"]))
			}
			s.LostMin, s.LostMax = min(s.LostMin, c.Lost), max(s.LostMax, c.Lost)
			lost = append(lost, float64(c.Lost))
			recovery = append(recovery, c.RecoveryMs)
			if c.Lost > 0 {
				window = append(window, c.LostWindowMs)
				reach = append(reach, c.LostReachMs)
				s.ReachMaxMs = max(s.ReachMaxMs, c.LostReachMs)
			}
			if c.MaxAcked > 0 && c.Lost == c.MaxAcked {
				s.LostEverything++
			}
			if c.Integrity != "" { // "": the workload could not check (an app without a named SQLite file)
				s.IntegrityChecked++
				if c.Integrity != "ok" {
					s.IntegrityFailures++
				}
			}
			if c.Position != nil {
				s.Positions++
				if c.Recovered < *c.Position {
					s.BelowPosition++
				}
			}
		}
		if len(aps) > 0 {
			s.ClassAPerS = measure.Median(aps)
			s.ClassAOps, s.ClassBOps = measure.Median(opsA), measure.Median(opsB)
			s.TooFewToPrice = measure.Median(priced) < MinPricedOps
		}
		if len(aps) > 0 && !s.TooFewToPrice {
			s.Costs = costs(r.prices(), measure.Median(perOKA), measure.Median(perOKB), s.ClassAPerS, measure.Median(bps))
		}
		s.LostMedian = measure.Median(lost)
		s.RecoveryMedianMs = measure.Median(recovery)
		if len(acked) > 0 {
			s.AckedPerS = measure.Median(acked)
		}
		if len(window) > 0 {
			s.WindowMedianMs, s.ReachMedianMs = measure.Median(window), measure.Median(reach)
		}
		r.CrashSummaries = append(r.CrashSummaries, s)
	}
}

// writeCrashTable prints the crash runs' summary per backend.
func writeCrashTable(w io.Writer, r *Results) {
	if len(r.CrashSummaries) == 0 {
		return
	}
	fmt.Fprintf(w, "\ncrash runs: the instance killed (SIGKILL) at a random moment, its local disk thrown away, recovered from what persisted\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\tpoint\tcrashes\tacked/s\tlost min\tlost med\tlost max\tlost all\twindow ms\treach ms (med/max)\trecovery ms\tintegrity fails\tbelow replica\tclass A/s\t$/month "+r.prices()[0].Name+"\t")
	var thin []string
	for _, s := range r.CrashSummaries {
		cost := "-"
		if len(s.Costs) > 0 {
			cost = fmt.Sprintf("%.2f", s.Costs[0].USDPerMonth)
		}
		mark := ""
		if s.TooFewToPrice {
			cost, mark = "*", "  * "+opsText(s.ClassAOps, s.ClassBOps)+" in the median crash run"
			thin = append(thin, s.Backend+" "+s.Point)
		}
		integrity, below := "-", "-" // not checked, or no replica position recorded: nothing to count
		if s.IntegrityChecked > 0 {
			integrity = fmt.Sprint(s.IntegrityFailures)
		}
		if s.Positions > 0 {
			below = fmt.Sprint(s.BelowPosition)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%d\t%.0f\t%d\t%d/%d\t%.0f\t%.0f / %.0f\t%.0f\t%s\t%s\t%.2f\t%s\t%s\n", s.Backend, s.Point, s.Runs, s.AckedPerS, s.LostMin, s.LostMedian, s.LostMax,
			s.LostEverything, s.Runs, s.WindowMedianMs, s.ReachMedianMs, s.ReachMaxMs, s.RecoveryMedianMs, integrity, below, s.ClassAPerS, cost, mark)
	}
	tw.Flush()
	writeTooFewToPrice(w, r, thin, nil, nil)
	for _, s := range r.CrashSummaries {
		if s.LostEverything == s.Runs {
			fmt.Fprintf(w, "  %s lost every acknowledged write in every crash: nothing it holds survives the instance\n", s.Backend)
		}
	}
	fmt.Fprintln(w, "  acked/s: acknowledged writes per second of load before the kill (the pace the durability setting allows);")
	fmt.Fprintln(w, "  lost: acknowledged writes missing after recovery; window: first to last lost acknowledgement;")
	fmt.Fprintln(w, "  reach: how long before the kill the first lost write was acknowledged; below replica: recoveries")
	fmt.Fprintln(w, "  that came back below the replica position recorded at the kill (must be 0)")
}
