// Package report turns results files into the tables, comparisons and pages people read.
// Everything here works from a results file, never from a run's memory. A workload's own tables,
// charts and seed scores register from a package of their own (report/counter, report/fio, ...);
// report/all links them all, and a workload without one gets the generic table.
package report

import (
	"persistlab/backend"
	"persistlab/lab"
	"persistlab/measure"
	"persistlab/results"
)

// Load reads a results file and derives its aggregates anew with this version's code.
func Load(path string) (*results.Results, error) {
	r, err := results.Load(path)
	if err != nil {
		return nil, err
	}
	Summarize(r)
	return r, nil
}

// Summarize recomputes Aggregates from Cells, CrashSummaries from Crashes, and what the
// workload's presenter derives (seed 000's slopes).
func Summarize(r *results.Results) {
	r.FillResolved()
	summarizeCrashes(r)
	pres := presenterOf(r)
	groups, order := results.GroupByPoint(r, r.Cells, func(c results.Cell) (results.PointKey, bool) { return r.Key(c.Cell), c.Failure == "" })
	r.Aggregates = r.Aggregates[:0]
	for _, k := range order {
		cells := groups[k]
		a := results.Aggregate{Backend: k.Backend, Point: k.Point, Params: cells[0].Params, Resolved: cells[0].Resolved, Runs: len(cells),
			Median: map[string]float64{}, Total: map[string]float64{}}
		names := map[string]bool{}
		for _, c := range cells {
			for m := range c.Metrics {
				names[m] = true
			}
		}
		for m := range names {
			vals := make([]float64, 0, len(cells))
			for _, c := range cells {
				if v, ok := c.Metrics[m]; ok {
					vals = append(vals, v)
					a.Total[m] += v
				}
			}
			a.Median[m] = measure.Median(vals)
		}
		var helper []float64
		for _, c := range cells {
			if cpu, ok := c.BackendStats[backend.HelperCPUSeconds]; ok && c.ElapsedS > 0 {
				helper = append(helper, cpu/c.ElapsedS/float64(r.AppCPUCount()))
			}
		}
		if len(helper) > 0 {
			a.Median["helper_cpu_util"] = measure.Median(helper)
		}
		labRates(&a, cells, r.Ceilings[k.Backend])
		refaultShare(&a, cells)
		a.Bucket = bucketUse(cells, priceLists(r), pres.Work)
		r.Aggregates = append(r.Aggregates, a)
	}
	r.Fits = nil
	if pres.Summarize != nil {
		pres.Summarize(r)
	}
}

// labRates adds what the backend's lab part itself moved per second (medians over the runs), by
// the counters its ceiling names, for the comparison with that ceiling.
func labRates(a *results.Aggregate, cells []results.Cell, c lab.Ceiling) {
	for _, d := range []struct {
		stat, metric string
		scale        float64
	}{{c.ReadBytesStat, "lab_read_mib_s", 1 << 20}, {c.WriteBytesStat, "lab_write_mib_s", 1 << 20},
		{c.ReadOpsStat, "lab_read_iops", 1}, {c.WriteOpsStat, "lab_write_iops", 1}} {
		if d.stat == "" {
			continue
		}
		var vals []float64
		for _, cell := range cells {
			if v, ok := cell.BackendStats[d.stat]; ok && cell.ElapsedS > 0 {
				vals = append(vals, v/d.scale/cell.ElapsedS)
			}
		}
		if len(vals) > 0 {
			a.Median[d.metric] = measure.Median(vals)
		}
	}
}

// RefaultShareMetric is a row's page cache read again (results.RefaultBytesMetric) as a share of
// what its volume read meanwhile: the median over the cells that measured both. Absent where no
// cell did (not measured, as in files of earlier versions), or where the volume read nothing.
const RefaultShareMetric = "refault_share"

// refaultShare adds the row's RefaultShareMetric.
func refaultShare(a *results.Aggregate, cells []results.Cell) {
	var vals []float64
	for _, c := range cells {
		refaults, measured := c.Metrics[results.RefaultBytesMetric]
		reads, counted := c.BackendStats[lab.VolumeReadBytes]
		if measured && counted && reads > 0 {
			vals = append(vals, refaults/reads)
		}
	}
	if len(vals) > 0 {
		a.Median[RefaultShareMetric] = measure.Median(vals)
	}
}
