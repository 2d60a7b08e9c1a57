package fio

import (
	"fmt"

	"persistlab/param"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// The bucket model's figures that set seed 003's bandwidths: the bandwidth per request, and the
// wait before a read's first byte (class B, model gcsfuse-bench-2024's in the scenario) or an
// upload's (class A). All come from gcsfuse's benchmark page of July 2024 or are assumed, none
// from the seed, so the scoreboard (report.Scoreboard, provenance.FittedFrom) counts the ratios
// as predictions; a figure fitted from seed 003 would make them calibration.
var (
	seed003Reads  = []string{"DefaultModel().StreamBytesPerSecond", "DefaultModel().Read.Median", "BenchModel().Read.Median"}
	seed003Writes = []string{"DefaultModel().StreamBytesPerSecond", "DefaultModel().Write.Median"}
)

// seed003Scores: the ratios of seed 003's tables that survive scaling the benchmark down to this
// machine (bandwidth over bandwidth, same mode or same file size), from the scenario's published
// rows and ours at the same points.
func seed003Scores(r *results.Results) []report.Score {
	ours := map[string]map[float64]float64{} // rw: file size: our MiB/s at the published row's point
	for i := range r.Scenario.Published {
		p := &r.Scenario.Published[i]
		rw := p.Params["rw"]
		if rw == "" {
			continue
		}
		if ours[rw] == nil {
			ours[rw] = map[float64]float64{}
		}
		for _, sr := range report.SeedRows(r, p) {
			if size := publishedSize(p, sr.Row); size > 0 && sr.Ours.Median["mib_s"] > 0 {
				ours[rw][size] = sr.Ours.Median["mib_s"]
			}
		}
	}
	// Published rows name the points; a figure whose rows this run lacks is not measured.
	seedOnly := map[string]map[float64]float64{}
	for i := range r.Scenario.Published {
		p := &r.Scenario.Published[i]
		rw := p.Params["rw"]
		for _, row := range p.Rows {
			for j, c := range p.Columns {
				if c != "mib_s" || j >= len(row) {
					continue
				}
				v, ok := row[j].Float()
				size := publishedSize(p, row)
				if ok && size > 0 {
					if seedOnly[rw] == nil {
						seedOnly[rw] = map[float64]float64{}
					}
					seedOnly[rw][size] = v
				}
			}
		}
	}
	ratio := func(figure, rwA string, sizeA float64, rwB string, sizeB float64) report.Score {
		s := report.Score{Figure: figure, DependsOn: seed003Reads}
		if rwA == "write" || rwB == "write" {
			s.DependsOn = seed003Writes
		}
		x, y := seedOnly[rwA][sizeA], seedOnly[rwB][sizeB]
		if x <= 0 || y <= 0 {
			return report.Score{}
		}
		s.Seed = x / y
		if a, b := ours[rwA][sizeA], ours[rwB][sizeB]; a > 0 && b > 0 {
			s.Ours, s.Measured = a/b, true
		}
		return s
	}
	const kib, mib, gib = 1 << 10, 1 << 20, 1 << 30
	var out []report.Score
	for _, s := range []report.Score{
		ratio("random / sequential read, 1 GiB files", "randread", gib, "read", gib),
		ratio("sequential read, 128 KiB / 1 GiB files", "read", 128*kib, "read", gib),
		ratio("sequential read, 1 MiB / 1 GiB files", "read", mib, "read", gib),
		ratio("random read, 128 KiB / 1 GiB files", "randread", 128*kib, "randread", gib),
		ratio("random read, 1 MiB / 1 GiB files", "randread", mib, "randread", gib),
		ratio("write, 256 KiB / 1 GiB files", "write", 256*kib, "write", gib),
	} {
		if s.Figure != "" {
			out = append(out, s)
		}
	}
	return out
}

// publishedSize is a published row's file_size in bytes (written as in a scenario: 128KiB, 1GiB),
// 0 if it has none.
func publishedSize(p *scenario.Published, row []scenario.Value) float64 {
	for i, c := range p.Columns {
		if c == "file_size" && i < len(row) {
			if n, err := param.ParseSize(string(row[i])); err == nil {
				return float64(n)
			}
		}
	}
	return 0
}

// seed002Scores: the seed's four hypotheses for its written configuration (the first entry with
// the file cache; its variants are answered in the hypotheses above the scoreboard), each as k of
// n cases by seed002Test. The seed found each true, and its tables are images: it states verdicts,
// not figures. A share of cases against its "every case" is no 25% test (with three cases it is
// all or nothing), so these scores stay out of the 25% tally (report.Cases): each is set beside
// the seed's verdict as matching (every case holds), differing (a case fails) or cannot tell.
func seed002Scores(r *results.Results) []report.Score {
	pairs := cachePairs(r)
	if len(pairs) == 0 {
		return nil
	}
	test := seed002Test(r)
	var out []report.Score
	for i, v := range seed002Verdicts(r, pairs[0].off, pairs[0].on) {
		held, failed, open := v.count()
		s := report.Score{Figure: fmt.Sprintf("hypothesis %d: %s (%s)", i+1, v.claim, pairs[0].on), Seed: 1,
			Cases: &report.Cases{Held: held, Failed: failed, Open: open, Test: test}}
		if i == 0 {
			s.Note = "seed: each hypothesis true (◯), its table an image; ours, the cases (file sizes and modes) where it holds"
		}
		if len(v.cases) > 0 {
			s.Ours, s.Measured = float64(held)/float64(len(v.cases)), true
		}
		out = append(out, s)
	}
	return out
}
