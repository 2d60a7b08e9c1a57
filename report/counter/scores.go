package counter

import (
	"fmt"

	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// seed000Scores: seed 000's slopes and their ratio, its tails at few VUs, its maxima at 20 VUs
// and gcsfuse's throughput at 2 VUs, from the scenario's published tables. The Go counter's
// cpu_per_request is fitted from the seed's Litestream table, so with it the absolute levels are
// calibration. With the real Rails app they are set by the CPU the app runs on, whose speed
// against the seed's Cloud Run instance no published figure gives: they are reported beside the
// seed's and kept out of the tally. The scale-free figures (the slope ratio, tails over medians)
// are predictions.
func seed000Scores(r *results.Results) []report.Score {
	gcs, ls := r.Published("gcsfuse"), r.Published("litestream")
	if gcs == nil || ls == nil {
		return nil
	}
	// The app's CPU per request sets every level of a closed loop on a saturated CPU (avg ≈ VUs x
	// CPU per request): slopes, maxima and rates; ratios of one row's figures, less so.
	levels := []string{"workload.cpu_per_request"}
	const speedBound = "an absolute level, set by the speed of the CPU the app runs on, which this machine does not share with the seed's Cloud Run instance"
	slope := map[string]float64{}
	for _, f := range r.Fits {
		slope[f.Backend] = f.AvgMsPerVU
	}
	var out []report.Score
	slopeScore := func(figure string, seed, ours float64, ok bool, dependsOn []string) {
		s := report.Score{Figure: figure, Seed: seed, Ours: ours, Measured: ok, DependsOn: dependsOn}
		if dependsOn != nil {
			s.Reported = speedBound
		}
		out = append(out, s)
	}
	g, gok := slope["gcsfuse"]
	l, lok := slope["litestream"]
	slopeScore("gcsfuse / Litestream slope of avg latency", gcs.Slope/ls.Slope, g/l, gok && lok && l > 0, nil)
	// Which software reproduces the seed: the same ratio for every other pairing of a gcsfuse entry
	// and a Litestream entry scored against the seed's tables (named variants: other releases or
	// defaults), shown beside it and not tallied.
	for _, ge := range entriesOf(r, "gcsfuse") {
		for _, le := range entriesOf(r, "litestream") {
			if ge == "gcsfuse" && le == "litestream" || r.Published(ge) == nil || r.Published(le) == nil {
				continue
			}
			vg, vgok := slope[ge]
			vl, vlok := slope[le]
			if !vgok || !vlok || vl <= 0 {
				continue // a variant the run left out is no figure of it
			}
			out = append(out, report.Score{Figure: ge + " / " + le + " slope of avg latency", Seed: gcs.Slope / ls.Slope, Ours: vg / vl,
				Measured: true, Reported: variantReported})
		}
	}
	slopeScore("gcsfuse slope (ms per VU)", gcs.Slope, g, gok, levels)
	slopeScore("Litestream slope (ms per VU)", ls.Slope, l, lok, levels)
	// ratioAt scores one row's num over den; a variant's (reported set) only where the run has it.
	ratioAt := func(figure, b string, p *scenario.Published, vus float64, num, den, reported string) {
		s := report.Score{Figure: figure, Reported: reported}
		n, ok1 := publishedAt(p, vus, num)
		d, ok2 := publishedAt(p, vus, den)
		if !ok1 || !ok2 || d == 0 {
			return
		}
		s.Seed = n / d
		if a := aggregateAt(r, b, map[string]string{"vus": fmt.Sprint(vus)}); a != nil && a.Median[den] > 0 {
			s.Ours, s.Measured = a.Median[num]/a.Median[den], true
		}
		if s.Measured || reported == "" {
			out = append(out, s)
		}
	}
	ratioAt("gcsfuse p90 / median at 2 VUs", "gcsfuse", gcs, 2, "p90_ms", "med_ms", "")
	ratioAt("gcsfuse p90 / median at 4 VUs", "gcsfuse", gcs, 4, "p90_ms", "med_ms", "")
	ratioAt("Litestream p90 / median at 4 VUs", "litestream", ls, 4, "p90_ms", "med_ms", "")
	// The variants' tails, as scale-free as the defaults': beside the seed's, not tallied.
	for _, e := range entriesOf(r, "gcsfuse") {
		if p := r.Published(e); e != "gcsfuse" && p != nil {
			ratioAt(e+" p90 / median at 2 VUs", e, p, 2, "p90_ms", "med_ms", variantReported)
			ratioAt(e+" p90 / median at 4 VUs", e, p, 4, "p90_ms", "med_ms", variantReported)
		}
	}
	for _, e := range entriesOf(r, "litestream") {
		if p := r.Published(e); e != "litestream" && p != nil {
			ratioAt(e+" p90 / median at 4 VUs", e, p, 4, "p90_ms", "med_ms", variantReported)
		}
	}
	valueAt := func(figure, b string, p *scenario.Published, vus float64, column string, seedOf func(float64) float64, ours func(*results.Aggregate) float64) {
		v, ok := publishedAt(p, vus, column)
		if !ok {
			return
		}
		s := report.Score{Figure: figure, Seed: seedOf(v), DependsOn: levels, Reported: speedBound}
		if a := aggregateAt(r, b, map[string]string{"vus": fmt.Sprint(vus)}); a != nil {
			s.Ours, s.Measured = ours(a), true
		}
		out = append(out, s)
	}
	same := func(v float64) float64 { return v }
	valueAt("gcsfuse max at 20 VUs (ms)", "gcsfuse", gcs, 20, "max_ms", same, func(a *results.Aggregate) float64 { return a.Median["max_ms"] })
	valueAt("Litestream max at 20 VUs (ms)", "litestream", ls, 20, "max_ms", same, func(a *results.Aggregate) float64 { return a.Median["max_ms"] })
	// A closed loop's rate is its VUs over its mean latency.
	valueAt("gcsfuse requests/s at 2 VUs", "gcsfuse", gcs, 2, "avg_ms", func(avg float64) float64 { return 2 / avg * 1000 },
		func(a *results.Aggregate) float64 { return a.Median["rate"] })
	return out
}

// variantReported says why a named variant's figure is out of the tally.
const variantReported = "a named variant (another release or its defaults), shown beside the seed's entries and not tallied"

// entriesOf are the labels of the scenario's entries of backend name, in the scenario's order.
func entriesOf(r *results.Results, name string) []string {
	var out []string
	for _, b := range r.Scenario.Backends {
		if b.Name == name {
			out = append(out, b.ID())
		}
	}
	return out
}

// aggregateAt is backend b's row at the swept parameter values given, nil if the run has none.
func aggregateAt(r *results.Results, b string, params map[string]string) *results.Aggregate {
	for i := range r.Aggregates {
		a := &r.Aggregates[i]
		if a.Backend != b {
			continue
		}
		match := true
		for k, v := range params {
			if results.ParamNumber(a.Params[k]) != results.ParamNumber(v) || (a.Params[k] == "" && v != "") {
				match = false
				break
			}
		}
		if match {
			return a
		}
	}
	return nil
}

// publishedAt is the seed's value of column in backend b's published row whose first column is key.
func publishedAt(p *scenario.Published, key float64, column string) (float64, bool) {
	if p == nil {
		return 0, false
	}
	col := -1
	for i, c := range p.Columns {
		if c == column {
			col = i
		}
	}
	if col < 0 {
		return 0, false
	}
	for _, row := range p.Rows {
		if k, ok := row[0].Float(); ok && k == key {
			return row[col].Float()
		}
	}
	return 0, false
}
