package report

import (
	"fmt"

	"persistlab/results"
	"persistlab/scenario"
)

// seed000Scores: seed 000's slopes and their ratio, its tails at few VUs, its maxima at 20 VUs
// and gcsfuse's throughput at 2 VUs, from the scenario's published tables. The Go counter's
// cpu_per_request is fitted from the seed's Litestream table, so with it the absolute slopes are
// calibration; the real Rails app's are predictions.
func seed000Scores(r *results.Results) []Score {
	gcs, ls := r.Published("gcsfuse"), r.Published("litestream")
	if gcs == nil || ls == nil {
		return nil
	}
	// The app's CPU per request sets every level of a closed loop on a saturated CPU (avg ≈ VUs x
	// CPU per request): slopes, maxima and rates; ratios of one row's figures, less so.
	levels := []string{"workload.cpu_per_request"}
	slope := map[string]float64{}
	for _, f := range r.Fits {
		slope[f.Backend] = f.AvgMsPerVU
	}
	var out []Score
	slopeScore := func(figure string, seed, ours float64, ok bool, dependsOn []string) {
		out = append(out, Score{Figure: figure, Seed: seed, Ours: ours, Measured: ok, DependsOn: dependsOn})
	}
	g, gok := slope["gcsfuse"]
	l, lok := slope["litestream"]
	slopeScore("gcsfuse / Litestream slope of avg latency", gcs.Slope/ls.Slope, g/l, gok && lok && l > 0, nil)
	slopeScore("gcsfuse slope (ms per VU)", gcs.Slope, g, gok, levels)
	slopeScore("Litestream slope (ms per VU)", ls.Slope, l, lok, levels)
	ratioAt := func(figure, b string, p *scenario.Published, vus float64, num, den string) {
		s := Score{Figure: figure}
		n, ok1 := publishedAt(p, vus, num)
		d, ok2 := publishedAt(p, vus, den)
		if !ok1 || !ok2 || d == 0 {
			return
		}
		s.Seed = n / d
		if a := aggregateAt(r, b, map[string]string{"vus": fmt.Sprint(vus)}); a != nil && a.Median[den] > 0 {
			s.Ours, s.Measured = a.Median[num]/a.Median[den], true
		}
		out = append(out, s)
	}
	ratioAt("gcsfuse p90 / median at 2 VUs", "gcsfuse", gcs, 2, "p90_ms", "med_ms")
	ratioAt("gcsfuse p90 / median at 4 VUs", "gcsfuse", gcs, 4, "p90_ms", "med_ms")
	ratioAt("Litestream p90 / median at 4 VUs", "litestream", ls, 4, "p90_ms", "med_ms")
	valueAt := func(figure, b string, p *scenario.Published, vus float64, column string, seedOf func(float64) float64, ours func(*results.Aggregate) float64) {
		v, ok := publishedAt(p, vus, column)
		if !ok {
			return
		}
		s := Score{Figure: figure, Seed: seedOf(v), DependsOn: levels}
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

// Seed 001's figures beyond its write operations (seed001WriteOps): the second loader's gain,
// as the seed states it per disk size, and pages written per write operation at 50 GB.
var seed001SecondLoader = map[int]struct {
	gain float64
	note string
}{
	50:  {1, `pattern 2: "almost the same as pattern 1"`},
	100: {1, `pattern 4: "IO metrics unchanged from pattern 3"`},
	400: {2800.0 / 2500, "pattern 7: 2,800 against pattern 6's 2,500 write ops/s"},
}

// seed001Scores: the growth of write operations per doubling of the disk, the second loader's
// gain, pages written per write operation, and the CPU in use, as seed 001 states them.
func seed001Scores(r *results.Results) []Score {
	rows := bulkRows(r)
	ops := map[int]map[string]float64{} // disk GB, loaders: write ops/s
	var cpu, pages, writes float64
	for _, row := range rows {
		if row.gib == 0 || row.m["volume_write_ops_per_s"] <= 0 {
			continue
		}
		if ops[row.gib] == nil {
			ops[row.gib] = map[string]float64{}
		}
		loaders := row.loaders
		if loaders == "" {
			loaders = "1"
		}
		ops[row.gib][loaders] = row.m["volume_write_ops_per_s"]
		if row.gib == 50 && loaders == "1" {
			cpu, pages, writes = row.m["server_cpu_util"], row.m["pages_written_per_s"], row.m["volume_write_ops_per_s"]
		}
	}
	var out []Score
	steps := [][2]int{{50, 100}, {100, 200}, {200, 400}, {400, 600}}
	for _, st := range steps {
		a, b := st[0], st[1]
		s := Score{Figure: fmt.Sprintf("write ops/s, %d GB over %d GB", b, a)}
		if x, y := seed001WriteOps[a], seed001WriteOps[b]; x > 0 && y > 0 {
			s.Seed = y / x
		} else if a == seed001StatedSameFrom && b == 600 {
			s.Seed, s.Note = 1, `seed: "almost the same result as pattern 6"`
		}
		if x, y := ops[a]["1"], ops[b]["1"]; x > 0 && y > 0 {
			s.Ours, s.Measured = y/x, true
		}
		out = append(out, s)
	}
	for _, gb := range []int{50, 100, 400} {
		st := seed001SecondLoader[gb]
		s := Score{Figure: fmt.Sprintf("write ops/s, two loaders over one, %d GB", gb), Seed: st.gain, Note: "seed: " + st.note}
		if x, y := ops[gb]["1"], ops[gb]["2"]; x > 0 && y > 0 {
			s.Ours, s.Measured = y/x, true
		}
		out = append(out, s)
	}
	out = append(out, Score{Figure: "InnoDB pages written per write op, 50 GB", Seed: 480.0 / 600, Ours: pages / writes, Measured: writes > 0 && pages > 0},
		Score{Figure: "server CPUs in use, 50 GB (a different CPU)", Seed: seed001CPUShare * seed001VCPUs, Ours: cpu, Measured: cpu > 0,
			Note: fmt.Sprintf("seed: about %.0f%% of %d vCPUs", 100*seed001CPUShare, seed001VCPUs)})
	return out
}

// seed004MiB is a size the seed states in MB (10^6 bytes), in MiB.
func seed004MiB(mb float64) float64 { return mb * 1e6 / (1 << 20) }

// seed004Scores: the HDD types against each other, the SSD's end pace, st1's floor (its slowest
// window beside the seed's floor, like with like) and the layouts' disk use, as seed 004's text
// states them (its charts are images).
func seed004Scores(r *results.Results) []Score {
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
	var out []Score
	sc1, ok1 := metric("sc1", "total_s")
	st1, ok2 := metric("st1", "total_s")
	out = append(out, Score{Figure: "sc1 / st1 total time", Seed: seed004SC1OverST1Total, Ours: sc1 / st1, Measured: ok1 && ok2,
		Note: `seed: "a little under 4x", read as 3.8`})
	for _, typ := range []string{"io1", "gp2"} {
		v, ok := metric(typ, "last_window_per_s")
		out = append(out, Score{Figure: typ + " pace in the last window (changes/s)", Seed: seed004SSDLastWindow, Ours: v, Measured: ok})
	}
	floor, ok := metric("st1", "min_window_per_s")
	out = append(out, Score{Figure: "st1 floor: slowest window (changes/s)", Seed: seed004ST1Floor, Ours: floor, Measured: ok})
	for _, typ := range []string{"st1", "sc1"} {
		v, ok := creditSpentPerHour(r, typ)
		out = append(out, Score{Figure: typ + " burst credits spent per hour (% of the bucket)", Seed: seed004CreditPctPerHour, Ours: v, Measured: ok,
			Note: `seed: the HDD volumes' burst balance fell "about 20% in an hour"`})
	}
	dist, mono := gitRows(r, "distributed"), gitRows(r, "monolithic")
	if len(dist) > 0 {
		out = append(out, Score{Figure: "distributed repositories on disk (MiB)", Seed: seed004MiB(1100), Ours: diskMiB(dist[0].m), Measured: diskMiB(dist[0].m) > 0,
			Note: "seed: 1.1 GB"})
		out = append(out, Score{Figure: "the files as plain files (MiB)", Seed: seed004MiB(79), Ours: dist[0].m["as_files_mib"], Measured: dist[0].m["as_files_mib"] > 0,
			Note: "seed: 79 MB"})
	}
	if len(mono) > 0 {
		out = append(out, Score{Figure: "monolithic repository on disk (MiB)", Seed: seed004MiB(460), Ours: diskMiB(mono[0].m), Measured: diskMiB(mono[0].m) > 0,
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
		m, ok := volumeModel(r, b)
		if !ok || m.Type != typ || m.CreditMiB <= 0 {
			continue
		}
		for _, c := range r.Cells {
			if c.Backend != b || c.Failure != "" || resolvedFor(r, b, c.Params)["layout"] != "distributed" {
				continue
			}
			series := c.Series["backend.volume_credit_mib"]
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

// seed003Bandwidth is the bucket's bandwidth per request, fitted from seed 003: every bandwidth
// of the seed's tables is bound by it.
var seed003Bandwidth = []string{"DefaultModel().StreamBytesPerSecond"}

// seed003Scores: the ratios of seed 003's tables that survive scaling the benchmark down to this
// machine (bandwidth over bandwidth, same mode or same file size), from the scenario's published
// rows and ours at the same points.
func seed003Scores(r *results.Results) []Score {
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
		for _, sr := range seedRows(r, p) {
			if size := publishedSize(p, sr.row); size > 0 && sr.ours.Median["mib_s"] > 0 {
				ours[rw][size] = sr.ours.Median["mib_s"]
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
	ratio := func(figure, rwA string, sizeA float64, rwB string, sizeB float64) Score {
		s := Score{Figure: figure, DependsOn: seed003Bandwidth}
		x, y := seedOnly[rwA][sizeA], seedOnly[rwB][sizeB]
		if x <= 0 || y <= 0 {
			return Score{}
		}
		s.Seed = x / y
		if a, b := ours[rwA][sizeA], ours[rwB][sizeB]; a > 0 && b > 0 {
			s.Ours, s.Measured = a/b, true
		}
		return s
	}
	const kib, mib, gib = 1 << 10, 1 << 20, 1 << 30
	var out []Score
	for _, s := range []Score{
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
			if n, err := scenario.ParseSize(string(row[i])); err == nil {
				return float64(n)
			}
		}
	}
	return 0
}

// seed002Scores: the seed's four hypotheses, each of which it found true in every case, as the
// share of the cases where ours holds, for the seed's written configuration (the first entry with
// the file cache; its variants are answered in the hypotheses above the scoreboard).
func seed002Scores(r *results.Results) []Score {
	off, on := cacheBackends(r)
	if off == "" || len(on) == 0 {
		return nil
	}
	var out []Score
	for i, v := range seed002Verdicts(r, off, on[0]) {
		s := Score{Figure: fmt.Sprintf("hypothesis %d holds, share of cases (%s)", i+1, on[0]), Seed: 1}
		if i == 0 {
			s.Note = "seed: each hypothesis true (◯); ours, the share of file sizes and modes where it holds"
		}
		if v.total > 0 {
			s.Ours, s.Measured = float64(v.holding())/float64(v.total), true
		}
		out = append(out, s)
	}
	return out
}
