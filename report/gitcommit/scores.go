package gitcommit

import (
	"fmt"
	"slices"

	"persistlab/lab"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/results"
)

// seed004MiB is a size the seed states in MB (10^6 bytes), in MiB.
func seed004MiB(mb float64) float64 { return mb * 1e6 / (1 << 20) }

// seed004Scores: the HDD types against each other, the SSDs' end pace, st1's floor (its slowest
// window beside the seed's floor, like with like), sc1's credit spending and the layouts' disk
// use, as seed 004's text states them (its charts are images). Each of the seed's figures is
// scored once.
func seed004Scores(r *results.Results) []report.Score {
	byType := map[string]map[string]float64{}
	for _, row := range gitRows(r, "distributed") {
		if _, seen := byType[row.typ]; !seen {
			byType[row.typ] = row.m
		}
	}
	metric := func(typ, name string) (float64, bool) {
		m := byType[typ]
		if m == nil || m[name] <= 0 {
			return 0, false
		}
		return m[name], true
	}
	var out []report.Score
	sc1, ok1 := metric("sc1", "total_s")
	st1, ok2 := metric("st1", "total_s")
	out = append(out, report.Score{Figure: "sc1 / st1 total time", Seed: seed004SC1OverST1Total, Ours: sc1 / st1, Measured: ok1 && ok2,
		Note: `seed: "a little under 4x", read as 3.8`})
	pace, ok := endPace(r, "io1", "gp2")
	out = append(out, report.Score{Figure: fmt.Sprintf("SSD end pace: median of io1's and gp2's last %d windows (changes/s)", endWindows),
		Seed: seed004SSDLastWindow, Ours: pace, Measured: ok,
		Note: `seed: the SSDs ended "around 180 commits/s", one figure for both; a median of windows, as one window can fall on a writeback dip`})
	floor, ok := metric("st1", "min_window_per_s")
	out = append(out, report.Score{Figure: "st1 floor: slowest window (changes/s)", Seed: seed004ST1Floor, Ours: floor, Measured: ok})
	spent, ok := creditSpentPerHour(r, "sc1")
	out = append(out, report.Score{Figure: "sc1 burst credits spent per hour (% of the bucket)", Seed: seed004CreditPctPerHour, Ours: spent, Measured: ok,
		Note: `seed: the HDD volumes' burst balance fell "about 20% in an hour", not saying whose; flat out at 500 GiB, AWS's rates drain sc1's bucket about 23% an hour and st1's about 72%, so it is read as sc1's`})
	dist, mono := gitRows(r, "distributed"), gitRows(r, "monolithic")
	if len(dist) > 0 {
		out = append(out, report.Score{Figure: "distributed repositories on disk (MiB)", Seed: seed004MiB(1100), Ours: diskMiB(dist[0].m), Measured: diskMiB(dist[0].m) > 0,
			Note: "seed: 1.1 GB"})
		out = append(out, report.Score{Figure: "the files as plain files (MiB)", Seed: seed004MiB(79), Ours: dist[0].m["as_files_mib"], Measured: dist[0].m["as_files_mib"] > 0,
			Note: "seed: 79 MB"})
	}
	if len(mono) > 0 {
		out = append(out, monolithicScore(mono))
	}
	return out
}

// monolithicScore sets the seed's 460 MB beside the first monolithic row run as the seed ran
// git, its automatic gc detached (git's default): the volume's use as the last change ended,
// what a du right after the seed's script saw. A run whose gc ran inline is reported, not
// tallied: its repository is packed when the last commit returns, which the seed's need not be.
func monolithicScore(mono []gitRow) report.Score {
	s := report.Score{Figure: "monolithic repository on disk (MiB)", Seed: seed004MiB(460), Note: "seed: 460 MB"}
	for _, row := range mono {
		if row.resolved["gc_auto_detach"] != "true" {
			continue
		}
		atEnd, ok := row.m["disk_at_end_mib"]
		s.Ours, s.Measured = atEnd, ok && atEnd > 0
		s.Figure = "monolithic repository on disk as the last change ended, git's gc detached (MiB)"
		if settled := diskMiB(row.m); settled > 0 {
			s.Note += fmt.Sprintf(", after its script, with git's defaults (gc.autoDetach true); %s's repository settled to %.1f MiB once its gc ended", row.backend, settled)
		}
		return s
	}
	s.Ours = diskMiB(mono[0].m)
	s.Measured = s.Ours > 0
	s.Reported = "git's automatic gc ran inline (gc_auto_detach false), where the seed's git, by its default, ran it detached while the commits went on: the repository is packed when the last commit returns; scenario ebs-git-gc scores the seed's configuration"
	return s
}

// endWindows is how many of a run's last windows its end pace is the median of.
const endWindows = 5

// endPace is the median of the last endWindows windows of every distributed-layout cell on a
// volume of the types named, pooled: where their pace ended.
func endPace(r *results.Results, types ...string) (float64, bool) {
	var windows []float64
	for _, c := range r.Cells {
		if c.Failure != "" || c.Resolved["layout"] != "distributed" {
			continue
		}
		m, ok := report.VolumeModel(r, c.Backend)
		if !ok || !slices.Contains(types, m.Type) {
			continue
		}
		series := c.Series["changes_per_s"]
		for _, p := range series[max(0, len(series)-endWindows):] {
			windows = append(windows, p.V)
		}
	}
	if len(windows) == 0 {
		return 0, false
	}
	return measure.Median(windows), true
}

// seed004CreditPctPerHour is how fast the seed's HDD volumes spent their burst balance.
const seed004CreditPctPerHour = 20

// creditSpentPerHour is the share of a volume type's burst bucket its first distributed-layout
// cell spent per hour, net of refill, as a burst balance metric shows it.
func creditSpentPerHour(r *results.Results, typ string) (float64, bool) {
	for _, b := range r.BackendOrder() {
		m, ok := report.VolumeModel(r, b)
		if !ok || m.Type != typ || m.CreditMiB <= 0 {
			continue
		}
		for _, c := range r.Cells {
			if c.Backend != b || c.Failure != "" || c.Resolved["layout"] != "distributed" {
				continue
			}
			series := c.Series[lab.StatsSeries(lab.VolumeCreditMiB)]
			if len(series) < 2 {
				continue
			}
			first, last := series[0], series[len(series)-1]
			if last.T <= first.T {
				continue
			}
			return 100 * (first.V - last.V) / m.CreditMiB / ((last.T - first.T) / 3600), true
		}
	}
	return 0, false
}
