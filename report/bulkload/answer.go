package bulkload

import (
	"fmt"
	"sort"

	"persistlab/report"
	"persistlab/results"
)

// plateauGrowth is the growth of write ops/s per step of the disk under which growth has stopped
// (the doublings table's rule).
const plateauGrowth = 1.3

// loaderRows are the rows of one loader count on a volume model, smallest disk first.
func loaderRows(rows []bulkRow, loaders string) []bulkRow {
	var out []bulkRow
	for _, row := range rows {
		if row.gib > 0 && (row.loaders == loaders || (loaders == "1" && row.loaders == "")) {
			out = append(out, row)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].gib < out[j].gib })
	return out
}

// bulkloadAnswer answers seed 001's question, whether a bigger disk loads faster and where that
// stops paying: each size's load time and price, the sizes in the tiers the run can tell apart,
// the smallest of the fastest, where growth of write I/O stops; then the seed's claims, judged.
func bulkloadAnswer(r *results.Results, a *report.Answer) {
	rows := bulkRows(r)
	if len(rows) == 0 {
		return
	}
	a.Question = "Does a bigger disk load the data faster, and where does it stop paying?"
	one := loaderRows(rows, "1")
	if len(one) == 0 {
		one = loaderRows(rows, rows[0].loaders)
	}
	if len(one) == 0 {
		return
	}
	var each []string
	var times []report.Ranked
	byBackend := map[string]bulkRow{}
	for _, row := range one {
		t := report.RankedOf(r, aggregateOf(r, row), "total_s")
		times = append(times, t)
		byBackend[row.backend] = row
		each = append(each, fmt.Sprintf("%d GB %s s at %.0f write ops/s ($%.2f/month)", row.gib, report.RangeText(t, "%.0f"), row.m["volume_write_ops_per_s"], row.price))
	}
	loaders := "one loader"
	if l := one[0].loaders; l != "" && l != "1" {
		loaders = l + " loaders"
	}
	a.Findings = append(a.Findings, fmt.Sprintf("load time with %s: %s", loaders, report.ListAnd(each)))
	if len(one) > 1 {
		tiers := report.Tiers(times, true)
		label := func(f report.Ranked) string { return fmt.Sprintf("%d GB", byBackend[f.Backend].gib) }
		if len(tiers) == 1 {
			var sizes []string
			for _, row := range one {
				sizes = append(sizes, fmt.Sprintf("%d GB", row.gib))
			}
			a.Findings = append(a.Findings, "this run cannot tell the load times of "+report.ListAnd(sizes)+" apart: a bigger disk did not load faster")
		} else {
			text := "fastest first: " + report.TiersText(tiers, label)
			best := tiers[0]
			smallest, largest := byBackend[best[0].Backend], byBackend[best[0].Backend]
			for _, f := range best {
				row := byBackend[f.Backend]
				if row.gib < smallest.gib {
					smallest = row
				}
				if row.gib > largest.gib {
					largest = row
				}
			}
			if len(best) == 1 {
				text += fmt.Sprintf("; the fastest is %d GB at $%.2f/month", smallest.gib, smallest.price)
			} else {
				text += fmt.Sprintf("; the smallest of the fastest is %d GB at $%.2f/month, and %d GB costs $%.2f/month more for a load this run cannot tell from it",
					smallest.gib, smallest.price, largest.gib, largest.price-smallest.price)
			}
			a.Findings = append(a.Findings, text)
		}
	}
	if stop, ok := plateauStep(one); ok {
		a.Findings = append(a.Findings, fmt.Sprintf("write ops/s stop growing between %d and %d GB (x%.2f where the disk's limit grew x%.2f, for $%.2f/month more): %s",
			stop[0].gib, stop[1].gib, growth(stop[0], stop[1]), stop[1].writeIOPS/stop[0].writeIOPS, stop[1].price-stop[0].price, boundOf(stop[1])))
	}
	if r.Scenario.Seed == "001" {
		a.AddClaims("001", seed001Claims(rows, one)...)
	}
}

// aggregateOf is a row's aggregate.
func aggregateOf(r *results.Results, row bulkRow) results.Aggregate {
	for _, a := range r.AggregatesOf(row.backend) {
		if l := a.Resolved["loaders"]; l == row.loaders {
			return a
		}
	}
	return results.Aggregate{Backend: row.backend, Median: row.m}
}

// growth is the write ops/s of b over a's.
func growth(a, b bulkRow) float64 {
	if a.m["volume_write_ops_per_s"] <= 0 {
		return 0
	}
	return b.m["volume_write_ops_per_s"] / a.m["volume_write_ops_per_s"]
}

// plateauStep is the first step between sizes whose write ops/s grew less than plateauGrowth.
func plateauStep(one []bulkRow) ([2]bulkRow, bool) {
	for i := 1; i < len(one); i++ {
		if g := growth(one[i-1], one[i]); g > 0 && g < plateauGrowth {
			return [2]bulkRow{one[i-1], one[i]}, true
		}
	}
	return [2]bulkRow{}, false
}

// seed001Claims judges what seed 001 concludes, in the doublings table's write ops/s and prices.
func seed001Claims(rows, one []bulkRow) []report.Claim {
	var out []report.Claim
	// 「ディスクサイズを2倍にすると、IO性能(IOPS, スループット)は約1.8倍になった」 (patterns 1, 3, 5)
	var marks []string
	for i := 1; i < len(one); i++ {
		a, b := one[i-1], one[i]
		if b.gib == 2*a.gib && b.gib <= 200 {
			g := growth(a, b)
			marks = append(marks, report.Mark(report.About(g, 1.8), fmt.Sprintf("%d to %d GB x%.2f", a.gib, b.gib, g)))
		}
	}
	out = append(out, report.Counted("doubling the disk gives about 1.8x the write I/O, up to 200 GB", marks))
	// 「ただし、一定以上はIO性能が伸びなくなった」 (patterns 6 and 8)
	const stops = "beyond some size the write I/O stops growing"
	stop, found := plateauStep(one)
	switch {
	case found:
		out = append(out, report.Claim{Text: stops, Verdict: report.True, Why: fmt.Sprintf("between %d and %d GB, x%.2f", stop[0].gib, stop[1].gib, growth(stop[0], stop[1]))})
	case len(one) > 1:
		var steps []string
		for i := 1; i < len(one); i++ {
			steps = append(steps, fmt.Sprintf("x%.2f", growth(one[i-1], one[i])))
		}
		out = append(out, report.Claim{Text: stops, Verdict: report.False, Why: fmt.Sprintf("it grew %s from step to step up to %d GB", report.ListAnd(steps), one[len(one)-1].gib)})
	default:
		out = append(out, report.NotJudged(stops, "the run has one disk size"))
	}
	// 「CPU、メモリ、NWのいずれも頭打ちになっている様子は見えないので、MySQL内部の可能性が高い」
	const inside = "where growth stops, neither the disk nor the CPU binds: MySQL itself does"
	if found {
		bound := boundOf(stop[1])
		v := report.False
		if len(boundParts(stop[1])) == 0 {
			v = report.True
		}
		out = append(out, report.Claim{Text: inside, Verdict: v, Why: fmt.Sprintf("%d GB: %s", stop[1].gib, bound)})
	} else {
		out = append(out, report.NotJudged(inside, "the write I/O never stopped growing in this run"))
	}
	// 「ディスクサイズから計算されるIO性能と実際に出ている性能が一致しない」
	marks = nil
	for _, row := range one {
		if row.writeIOPS > 0 && row.m["volume_write_ops_per_s"] > 0 {
			share := row.m["volume_write_ops_per_s"] / row.writeIOPS
			marks = append(marks, report.Mark(share < 0.9, fmt.Sprintf("%d GB %.0f%% of its limit", row.gib, 100*share)))
		}
	}
	out = append(out, report.Counted("the disk writes well below the I/O its size allows", marks))
	// 「50GBから100GBにディスクサイズを増やしたとき、$11/monthの追加コストでIO性能を倍にできる」
	const double = "50 to 100 GB doubles the write I/O for $11/month more"
	var from, to *bulkRow
	for i := range one {
		switch one[i].gib {
		case 50:
			from = &one[i]
		case 100:
			to = &one[i]
		}
	}
	if from == nil || to == nil || growth(*from, *to) == 0 {
		out = append(out, report.NotJudged(double, "the run lacks the 50 or 100 GB disk"))
	} else {
		g := growth(*from, *to)
		why := fmt.Sprintf("x%.2f for $%.2f/month more", g, to.price-from.price)
		switch {
		case report.About(g, 2):
			out = append(out, report.Claim{Text: double, Verdict: report.True, Why: why})
		case g >= plateauGrowth:
			out = append(out, report.Claim{Text: double, Verdict: report.Partly, Why: why + ": it grows, by less than double"})
		default:
			out = append(out, report.Claim{Text: double, Verdict: report.False, Why: why})
		}
	}
	// 「ほぼパターン1と変わらず」 (pattern 2, 50 GB), 「パターン3とIO関連のメトリクスについては変わらず」
	// (pattern 4, 100 GB); pattern 7 (400 GB) gained about 1.1x.
	const second = "a second loader adds little write I/O"
	two := loaderRows(rows, "2")
	marks = nil
	for _, t := range two {
		for _, o := range one {
			if o.backend == t.backend && o.loaders != t.loaders {
				g := growth(o, t)
				marks = append(marks, report.Mark(g > 0 && g <= 1+report.OneRunMargin, fmt.Sprintf("%d GB x%.2f", t.gib, g)))
			}
		}
	}
	if len(marks) == 0 {
		out = append(out, report.NotJudged(second, "the run has no row with two loaders beside one"))
	} else {
		out = append(out, report.Counted(second, marks))
	}
	return out
}
