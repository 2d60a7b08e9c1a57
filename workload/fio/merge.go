package fio

import (
	"math"
	"math/big"
	"slices"
	"sort"
	"time"
)

// Merge combines jobs that ran side by side into one result named name:
//   - bytes, I/Os, bandwidth and IOPS are summed. fio's own group report instead divides the total
//     bytes by the longest job's runtime; the two agree when the jobs run equally long (time_based).
//   - runtimes and Elapsed are the longest; Error is the first non-zero one; CPU percentages are
//     weighted by Elapsed.
//   - latency: counts summed, min of mins, max of maxes, mean weighted by count, standard deviation
//     pooled the way fio pools it for group_reporting (stat.c __sum_stat).
//   - percentiles: from the summed histograms when every part has them (json+ output, as Run asks
//     for), computed as fio computes its own, so they equal what group_reporting would print.
//     Without histograms, each percentile is the largest of the parts' and UpperBound is set: the
//     merged distribution's percentile is never above it, but may be well below.
func Merge(name string, jobs []JobResult) JobResult {
	out := JobResult{Name: name}
	var reads, writes, syncs []LatencyStats
	var readsC, writesC []LatencyStats
	var cpuWeight float64
	for _, j := range jobs {
		addDirection(&out.Read, j.Read)
		addDirection(&out.Write, j.Write)
		reads, readsC = append(reads, j.Read.Lat), append(readsC, j.Read.Clat)
		writes, writesC = append(writes, j.Write.Lat), append(writesC, j.Write.Clat)
		syncs = append(syncs, j.Sync)
		if out.Error == 0 {
			out.Error = j.Error
		}
		out.Elapsed = max(out.Elapsed, j.Elapsed)
		w := j.Elapsed.Seconds()
		out.UsrCPU += j.UsrCPU * w
		out.SysCPU += j.SysCPU * w
		cpuWeight += w
	}
	if cpuWeight > 0 {
		out.UsrCPU /= cpuWeight
		out.SysCPU /= cpuWeight
	} else {
		for _, j := range jobs { // no runtimes to weight by: a plain mean
			out.UsrCPU += j.UsrCPU / float64(len(jobs))
			out.SysCPU += j.SysCPU / float64(len(jobs))
		}
	}
	out.Read.Lat, out.Read.Clat = MergeLatency(reads), MergeLatency(readsC)
	out.Write.Lat, out.Write.Clat = MergeLatency(writes), MergeLatency(writesC)
	out.Sync = MergeLatency(syncs)
	return out
}

func addDirection(sum *Direction, d Direction) {
	sum.IOBytes += d.IOBytes
	sum.IOs += d.IOs
	sum.BandwidthBytesPerSec += d.BandwidthBytesPerSec
	sum.IOPS += d.IOPS
	sum.Runtime = max(sum.Runtime, d.Runtime)
}

// MergeLatency combines latency summaries as Merge describes.
func MergeLatency(parts []LatencyStats) LatencyStats {
	var some []LatencyStats
	for _, p := range parts {
		if p.Count > 0 {
			some = append(some, p)
		}
	}
	switch len(some) {
	case 0:
		return LatencyStats{}
	case 1:
		return some[0]
	}
	out := LatencyStats{Min: some[0].Min, Max: some[0].Max}
	var mean, s float64 // s: sum of squared deviations, fio's S
	for _, p := range some {
		out.Min, out.Max = min(out.Min, p.Min), max(out.Max, p.Max)
		pm, ps, n, m := float64(p.Mean), float64(p.StdDev), float64(out.Count), float64(p.Count)
		ps = ps * ps * (m - 1)
		if out.Count == 0 {
			mean, s = pm, ps
		} else {
			delta := pm - mean
			mean = (pm*m + mean*n) / (n + m)
			s = ps + s + delta*delta*n*m/(n+m)
		}
		out.Count += p.Count
	}
	out.Mean = nanos(mean)
	out.StdDev = nanos(math.Sqrt(s / float64(out.Count-1)))

	ps := percentileList(some)
	if bins, ok := mergeBins(some); ok {
		out.Bins = bins
		out.Percentiles = PercentilesFromBins(bins, out.Count, ps)
		return out
	}
	for _, p := range ps {
		v := time.Duration(0)
		for _, part := range some {
			for _, q := range part.Percentiles {
				if q.P == p {
					v = max(v, q.Value)
				}
			}
		}
		out.Percentiles = append(out.Percentiles, Percentile{P: p, Value: v})
	}
	out.UpperBound = len(out.Percentiles) > 0
	return out
}

// percentileList is every P any part reports, sorted.
func percentileList(parts []LatencyStats) []float64 {
	seen := map[float64]bool{}
	var ps []float64
	for _, part := range parts {
		for _, q := range part.Percentiles {
			if !seen[q.P] {
				seen[q.P] = true
				ps = append(ps, q.P)
			}
		}
	}
	sort.Float64s(ps)
	return ps
}

// mergeBins sums histograms; ok is false if a part has none or one that does not cover its count.
func mergeBins(parts []LatencyStats) ([]Bin, bool) {
	sum := map[time.Duration]int64{}
	for _, p := range parts {
		var n int64
		for _, b := range p.Bins {
			sum[b.Value] += b.Count
			n += b.Count
		}
		if n != p.Count {
			return nil, false
		}
	}
	bins := make([]Bin, 0, len(sum))
	for v, c := range sum {
		bins = append(bins, Bin{Value: v, Count: c})
	}
	sort.Slice(bins, func(a, b int) bool { return bins[a].Value < bins[b].Value })
	return bins, true
}

// PercentilesFromBins computes percentiles of a histogram of total latencies exactly as fio does
// (stat.c calc_clat_percentiles): the value of the first bin at which the running count reaches
// p/100*total. fio does that arithmetic in x86 long double (64-bit mantissa); big.Float at 64 bits
// reproduces it, so a boundary case rounds the same way.
func PercentilesFromBins(bins []Bin, total int64, ps []float64) []Percentile {
	ps = slices.Clone(ps)
	sort.Float64s(ps)
	out := make([]Percentile, 0, len(ps))
	hundred := new(big.Float).SetPrec(64).SetInt64(100)
	n := new(big.Float).SetPrec(64).SetInt64(total)
	i, running := 0, int64(0)
	for _, p := range ps {
		want := new(big.Float).SetPrec(64).SetFloat64(p)
		want.Quo(want, hundred).Mul(want, n)
		for i < len(bins) && new(big.Float).SetInt64(running).Cmp(want) < 0 {
			running += bins[i].Count
			i++
		}
		if i == 0 || new(big.Float).SetInt64(running).Cmp(want) < 0 {
			break // p/100*total is beyond the histogram: fio reports an error, so report nothing
		}
		out = append(out, Percentile{P: p, Value: bins[i-1].Value})
	}
	return out
}
