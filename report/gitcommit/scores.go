package gitcommit

import (
	"persistlab/backend"
	"persistlab/report"
	"persistlab/results"
)

// seed004MiB is a size the seed states in MB (10^6 bytes), in MiB.
func seed004MiB(mb float64) float64 { return mb * 1e6 / (1 << 20) }

// seed004Scores: the HDD types against each other, the SSD's end pace, st1's floor (its slowest
// window beside the seed's floor, like with like) and the layouts' disk use, as seed 004's text
// states them (its charts are images).
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
	for _, typ := range []string{"io1", "gp2"} {
		v, ok := metric(typ, "last_window_per_s")
		out = append(out, report.Score{Figure: typ + " pace in the last window (changes/s)", Seed: seed004SSDLastWindow, Ours: v, Measured: ok})
	}
	floor, ok := metric("st1", "min_window_per_s")
	out = append(out, report.Score{Figure: "st1 floor: slowest window (changes/s)", Seed: seed004ST1Floor, Ours: floor, Measured: ok})
	for _, typ := range []string{"st1", "sc1"} {
		v, ok := creditSpentPerHour(r, typ)
		out = append(out, report.Score{Figure: typ + " burst credits spent per hour (% of the bucket)", Seed: seed004CreditPctPerHour, Ours: v, Measured: ok,
			Note: `seed: the HDD volumes' burst balance fell "about 20% in an hour", not saying whose: it may be sc1's alone`})
	}
	dist, mono := gitRows(r, "distributed"), gitRows(r, "monolithic")
	if len(dist) > 0 {
		out = append(out, report.Score{Figure: "distributed repositories on disk (MiB)", Seed: seed004MiB(1100), Ours: diskMiB(dist[0].m), Measured: diskMiB(dist[0].m) > 0,
			Note: "seed: 1.1 GB"})
		out = append(out, report.Score{Figure: "the files as plain files (MiB)", Seed: seed004MiB(79), Ours: dist[0].m["as_files_mib"], Measured: dist[0].m["as_files_mib"] > 0,
			Note: "seed: 79 MB"})
	}
	if len(mono) > 0 {
		out = append(out, report.Score{Figure: "monolithic repository on disk (MiB)", Seed: seed004MiB(460), Ours: diskMiB(mono[0].m), Measured: diskMiB(mono[0].m) > 0,
			Note: "seed: 460 MB"})
	}
	return out
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
			if c.Backend != b || c.Failure != "" || report.CellParams(r, c)["layout"] != "distributed" {
				continue
			}
			series := c.Series[backend.StatsSeries(backend.VolumeCreditMiB)]
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
