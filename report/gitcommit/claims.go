package gitcommit

import (
	"fmt"
	"slices"

	"persistlab/report"
	"persistlab/results"
)

// ssdTypes are the EBS SSD types, whose pace seed 004 saw rise.
var ssdTypes = []string{"io1", "io2", "gp2", "gp3"}

// seed004Claims judges what seed 004 concludes, in the table's figures: the SSD and HDD paces over
// the commits, the HDD types against each other and against SSD, and the two layouts. Claims of
// pace are not judged on a plan smaller than the seed's, whose repositories never grow to where
// the seed's paces part.
func seed004Claims(r *results.Results, rows []answerRow) []report.Claim {
	byType := map[string]answerRow{}
	var dist, mono []answerRow
	for _, row := range rows {
		switch row.layout {
		case "distributed":
			dist = append(dist, row)
			if _, seen := byType[row.typ]; !seen && row.typ != "" {
				byType[row.typ] = row
			}
		case "monolithic":
			mono = append(mono, row)
		}
	}
	files, changes, small := planSize(r)
	pace := func(c report.Claim) report.Claim {
		if small {
			return report.NotJudged(c.Text, fmt.Sprintf("%s changes on %s files, under the seed's %d on %d", changes, files, seed004Changes, seed004Files))
		}
		return c
	}
	var out []report.Claim
	// 「SSDの方はコミット数が増えていくにつれ1秒あたりのコミット数は増えていき」
	out = append(out, pace(trend("SSD volumes commit faster as commits grow", byType, ssdTypes, true)))
	// 「逆にHDDの方はコミット数が増えるにつれてパフォーマンスが低下していきました」
	hddFall := trend("HDD volumes commit slower as commits grow", byType, hddTypes, false)
	out = append(out, pace(withBurstNote(r, hddFall, byType, hddTypes...)))
	// 「遅くなっているのはバーストのクレジットを使い切ったわけではありませんでした」
	out = append(out, pace(creditsNotTheCause(r, byType)))
	// 「ST1が20commits/secぐらいで下限に達したようにも見える」
	out = append(out, pace(withBurstNote(r, st1Floor(byType), byType, "st1")))
	// 「ST1とSC1も4倍弱ぐらい差が出る結果となりました」 (total time of the 20,000 commits)
	out = append(out, pace(withBurstNote(r, sc1OverST1(byType), byType, hddTypes...)))
	// 「SSD系とST1の差はこんなもんかなと思っていました」: SSD far ahead of st1, as expected
	out = append(out, pace(withBurstNote(r, ssdAheadOfST1(byType), byType, "st1")))
	if len(mono) > 0 {
		m := mono[0]
		// 「1つのレポジトリで全てを管理する方は2000コミットを超えたぐらいからパフォーマンスが下がっていっている」
		first, last := m.agg.Median["first_window_per_s"], m.agg.Median["last_window_per_s"]
		out = append(out, pace(report.Counted("one repository for all files slows down as commits grow",
			[]string{report.Compared(report.One(last), report.One(first), true, fmt.Sprintf("%s %.1f to %.1f changes/s", m.backend, first, last))})))
		// 「複数レポジトリの方が高速ですが」 (compared on io1)
		if d, ok := sameVolume(dist, m); ok {
			out = append(out, pace(report.Ahead("a repository per file commits faster than one for all files", d.pace, m.pace, false,
				fmt.Sprintf("%s %.1f vs %s %.1f changes/s", d.backend, d.pace.Value, m.backend, m.pace.Value))))
		}
	}
	if len(dist) > 0 && len(mono) > 0 {
		d, m := diskMiB(dist[0].agg.Median), diskMiB(mono[0].agg.Median)
		// 「複数レポジトリの方が高速ですが、もちろんこちらの方ががディスク容量は食います」 (1.1 GB vs 460 MB)
		out = append(out, report.Counted("a repository per file takes more disk than one for all files",
			[]string{report.Mark(d > m, fmt.Sprintf("%.0f vs %.0f MiB", d, m))}))
	}
	if len(dist) > 0 {
		// 「2万コミット分のファイルをそのまますべで保存すると79MB... git を使うよりも容量が少なかった」
		plain := dist[0].agg.Median["as_files_mib"]
		var marks []string
		for _, set := range [][]answerRow{dist, mono} {
			if len(set) > 0 && plain > 0 {
				git := diskMiB(set[0].agg.Median)
				marks = append(marks, report.Mark(plain < git, fmt.Sprintf("%.0f MiB of plain files vs %.0f MiB with %s", plain, git, layoutText(set[0].layout))))
			}
		}
		out = append(out, report.Counted("the changes kept as plain files take less disk than git", marks))
	}
	return out
}

// trend judges, over the volume types present, whether each one's pace from its first window to
// its last rises (or falls) by more than one run can tell.
func trend(text string, byType map[string]answerRow, types []string, rising bool) report.Claim {
	var marks []string
	for _, typ := range types {
		row, ok := byType[typ]
		if !ok {
			continue
		}
		first, last := row.agg.Median["first_window_per_s"], row.agg.Median["last_window_per_s"]
		marks = append(marks, report.Compared(report.One(last), report.One(first), !rising, fmt.Sprintf("%s %.1f to %.1f changes/s", row.backend, first, last)))
	}
	if len(marks) == 0 {
		return report.NotJudged(text, "the run has no "+report.ListAnd(types)+" volume")
	}
	return report.Counted(text, marks)
}

// creditsNotTheCause judges that the HDD types that slowed did so with burst credits left: their
// sampled balance never ran dry.
func creditsNotTheCause(r *results.Results, byType map[string]answerRow) report.Claim {
	const text = "the HDD slowdown is not their burst credits running out"
	var marks []string
	sampled := false
	for _, u := range report.BurstUses(r) {
		row, ok := byType[u.Type]
		if !ok || row.backend != u.Backend || !slices.Contains(hddTypes, u.Type) {
			continue
		}
		sampled = true
		first, last := row.agg.Median["first_window_per_s"], row.agg.Median["last_window_per_s"]
		if report.Compared(report.One(last), report.One(first), true, "slowed") != "slowed" {
			continue
		}
		if u.Drained > 0 {
			marks = append(marks, report.Mark(false, fmt.Sprintf("%s ran dry %.0f s into %.0f s", u.Backend, u.DrainedAt, u.DrainedOf)))
			continue
		}
		marks = append(marks, fmt.Sprintf("%s kept %.0f%% of its credits", u.Backend, 100*u.LeastLeft))
	}
	switch {
	case !sampled:
		return report.NotJudged(text, "no HDD volume's credit balance was sampled")
	case len(marks) == 0:
		return report.NotJudged(text, "no HDD volume slowed by more than one run can tell")
	}
	return report.Counted(text, marks)
}

// st1Floor judges that st1's pace levels off near 20 changes/s: its slowest window came before
// its last, which stays within the one-run margin of it; and the slowest is about 20.
func st1Floor(byType map[string]answerRow) report.Claim {
	const text = "st1 levels off at a floor near 20 commits/s"
	row, ok := byType["st1"]
	if !ok {
		return report.NotJudged(text, "the run has no st1 volume")
	}
	slowest, last := row.agg.Median["min_window_per_s"], row.agg.Median["last_window_per_s"]
	marks := []string{
		report.Mark(last > slowest && last <= (1+report.OneRunMargin)*slowest, fmt.Sprintf("levels off: slowest window %.1f, last %.1f", slowest, last)),
		report.Mark(report.About(slowest, seed004ST1Floor), fmt.Sprintf("near 20: %.1f", slowest)),
	}
	return report.Counted(text, marks)
}

// sc1OverST1 judges that sc1 takes a little under 4x as long as st1: TRUE about the seed's 3.8,
// PARTLY where sc1 is slower by another factor.
func sc1OverST1(byType map[string]answerRow) report.Claim {
	const text = "sc1 takes a little under 4x as long as st1"
	sc1, ok1 := byType["sc1"]
	st1, ok2 := byType["st1"]
	if !ok1 || !ok2 || st1.agg.Median["total_s"] <= 0 {
		return report.NotJudged(text, "the run lacks st1 or sc1")
	}
	ratio := sc1.agg.Median["total_s"] / st1.agg.Median["total_s"]
	figures := fmt.Sprintf("%.2fx: %.1f vs %.1f s", ratio, sc1.agg.Median["total_s"], st1.agg.Median["total_s"])
	slower := report.Ahead(text, st1.pace, sc1.pace, false, figures)
	switch {
	case slower.Verdict == report.True && report.About(ratio, seed004SC1OverST1Total):
		return slower
	case slower.Verdict == report.True:
		return report.Claim{Text: text, Verdict: report.Partly, Why: figures + ", slower but not about 3.8x"}
	}
	return slower
}

// ssdAheadOfST1 judges that every SSD type commits faster than st1, where the run tells them apart.
func ssdAheadOfST1(byType map[string]answerRow) report.Claim {
	const text = "SSD volumes commit far faster than st1"
	st1, ok := byType["st1"]
	if !ok {
		return report.NotJudged(text, "the run has no st1 volume")
	}
	var marks []string
	for _, typ := range ssdTypes {
		ssd, ok := byType[typ]
		if !ok {
			continue
		}
		marks = append(marks, report.Compared(ssd.pace, st1.pace, false, fmt.Sprintf("%s %.1f vs st1 %.1f changes/s", ssd.backend, ssd.pace.Value, st1.pace.Value)))
	}
	if len(marks) == 0 {
		return report.NotJudged(text, "the run has no SSD volume")
	}
	return report.Counted(text, marks)
}

// sameVolume is the distributed row on the same volume type as a monolithic one (the seed
// compared the layouts on io1).
func sameVolume(dist []answerRow, mono answerRow) (answerRow, bool) {
	for _, d := range dist {
		if d.typ == mono.typ {
			return d, true
		}
	}
	return answerRow{}, false
}

// withBurstNote adds to a judged claim that the volumes it rests on ran on burst credits they
// never used up.
func withBurstNote(r *results.Results, c report.Claim, byType map[string]answerRow, types ...string) report.Claim {
	var backends []string
	for _, typ := range types {
		if row, ok := byType[typ]; ok {
			backends = append(backends, row.backend)
		}
	}
	c.Why += report.BurstNote(r, backends...)
	return c
}
