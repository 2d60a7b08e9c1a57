package report

import (
	"fmt"
	"io"

	"persistlab/lab"
	"persistlab/measure"
	"persistlab/results"
)

func summarizeCrashes(r *results.Results) {
	groups, order := results.GroupByPoint(r, r.Crashes, func(c results.CrashRun) (results.PointKey, bool) { return r.Key(c.Cell), c.Failure == "" })
	r.CrashSummaries = r.CrashSummaries[:0]
	for _, k := range order {
		runs := groups[k]
		s := results.CrashSummary{Backend: k.Backend, Point: k.Point, Runs: len(runs), LostMin: runs[0].Lost, LostMax: runs[0].Lost}
		var lost, window, reach, recovery, aps, bps, perOKA, perOKB, acked, opsA, opsB, priced []float64
		for _, c := range runs {
			if c.LoadS > 0 {
				acked = append(acked, float64(c.OKBeforeKill)/c.LoadS)
			}
			if _, ok := c.BackendStats[lab.BucketClassA]; ok && c.LoadS > 0 && c.OKBeforeKill > 0 {
				aps = append(aps, c.BackendStats[lab.BucketClassA]/c.LoadS)
				bps = append(bps, c.BackendStats[lab.BucketClassB]/c.LoadS)
				perOKA = append(perOKA, c.BackendStats[lab.BucketClassA]/float64(c.OKBeforeKill))
				perOKB = append(perOKB, c.BackendStats[lab.BucketClassB]/float64(c.OKBeforeKill))
				opsA = append(opsA, c.BackendStats[lab.BucketClassA])
				opsB = append(opsB, c.BackendStats[lab.BucketClassB])
				priced = append(priced, pricedOps(priceLists(r), c.BackendStats[lab.BucketClassA], c.BackendStats[lab.BucketClassB]))
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
			s.Costs = costs(priceLists(r), measure.Median(perOKA), measure.Median(perOKB), s.ClassAPerS, measure.Median(bps))
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
func writeCrashTable(w io.Writer, r *results.Results) {
	if len(r.CrashSummaries) > 0 {
		WriteTable(w, crashTable(r))
	}
}

// crashTable is the crash runs' summary, a row per backend and point.
func crashTable(r *results.Results) Table {
	t := Table{Title: "crash runs: the instance killed (SIGKILL) at a random moment, its local disk thrown away, recovered from what persisted",
		Columns: []string{"backend", "point", "crashes", "acked/s", "lost min", "lost med", "lost max", "lost all", "window ms", "reach ms (med/max)",
			"recovery ms", "integrity fails", "below replica", "class A/s", "$/month " + priceLists(r)[0].Name, ""}}
	var thin []string
	for _, s := range r.CrashSummaries {
		cost := "-"
		if len(s.Costs) > 0 {
			cost = fmt.Sprintf("%.2f", s.Costs[0].USDPerMonth)
		}
		mark := ""
		if s.TooFewToPrice {
			cost, mark = "*", "* "+opsText(s.ClassAOps, s.ClassBOps)+" in the median crash run"
			thin = append(thin, s.Backend+" "+s.Point)
		}
		integrity, below := "-", "-" // not checked, or no replica position recorded: nothing to count
		if s.IntegrityChecked > 0 {
			integrity = fmt.Sprint(s.IntegrityFailures)
		}
		if s.Positions > 0 {
			below = fmt.Sprint(s.BelowPosition)
		}
		t.Rows = append(t.Rows, []string{s.Backend, s.Point, fmt.Sprint(s.Runs), fmt.Sprintf("%.1f", s.AckedPerS), fmt.Sprint(s.LostMin),
			fmt.Sprintf("%.0f", s.LostMedian), fmt.Sprint(s.LostMax), fmt.Sprintf("%d/%d", s.LostEverything, s.Runs), fmt.Sprintf("%.0f", s.WindowMedianMs),
			fmt.Sprintf("%.0f / %.0f", s.ReachMedianMs, s.ReachMaxMs), fmt.Sprintf("%.0f", s.RecoveryMedianMs), integrity, below,
			fmt.Sprintf("%.2f", s.ClassAPerS), cost, mark})
	}
	t.Notes = tooFewToPriceNotes(r, thin, nil, nil)
	for _, s := range r.CrashSummaries {
		if s.LostEverything == s.Runs {
			t.Notes = append(t.Notes, s.Backend+" lost every acknowledged write in every crash: nothing it holds survives the instance")
		}
	}
	t.Notes = append(t.Notes,
		"acked/s: acknowledged writes per second of load before the kill (the pace the durability setting allows)",
		"lost: acknowledged writes missing after recovery; window: first to last lost acknowledgement",
		"reach: how long before the kill the first lost write was acknowledged",
		"below replica: recoveries that came back below the replica position recorded at the kill (must be 0)")
	return t
}
