package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"persistlab/cost"
	"persistlab/lab"
	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
)

func priceLists(r *results.Results) []scenario.Price {
	if r.Scenario != nil && len(r.Scenario.Prices) > 0 {
		return r.Scenario.Prices
	}
	return cost.DefaultPrices
}

// costs prices operations per unit of work (classA, classB) and per second (aPerS, bPerS).
func costs(prices []scenario.Price, classA, classB, aPerS, bPerS float64) []results.Cost {
	var out []results.Cost
	for _, p := range prices {
		price := func(a, b float64) float64 { return a/1000*p.ClassAPer1000 + b/1000*p.ClassBPer1000 }
		out = append(out, results.Cost{Prices: p.Name, USDPerUnit: price(classA, classB), USDPerMonth: price(aPerS, bPerS) * cost.SecondsPerMonth})
	}
	return out
}

// MinPricedOps is the fewest bucket operations a price may rest on. Uploads and listings come as
// rare events (gcsfuse uploads at a SQLite checkpoint, Litestream once per sync): their count n in
// a run is Poisson, known to about 1/sqrt(n), so a price from fewer than 10 errs by a third or
// more (1/sqrt(9)), and from 0 or 1 it is the luck of whether the run caught a checkpoint: a
// 5 s cell prices gcsfuse at $0.00 a month, or at $9.58 from the one checkpoint it caught. One
// checkpoint uploads several objects at once, so the true error is larger still: 10 is a floor.
const MinPricedOps = 10

// pricedOps is how many operations a price rests on: the count whose Poisson error equals the
// price's own. The price is a·pA + b·pB; with Poisson counts its variance is a·pA² + b·pB², so
// (a·pA + b·pB)² / (a·pA² + b·pB²) operations, which is a where class A sets the price and b
// where class B does. The least over the price lists; 0 when nothing was counted.
func pricedOps(prices []scenario.Price, classA, classB float64) float64 {
	n := math.Inf(1)
	for _, p := range prices {
		cost := classA*p.ClassAPer1000 + classB*p.ClassBPer1000
		variance := classA*p.ClassAPer1000*p.ClassAPer1000 + classB*p.ClassBPer1000*p.ClassBPer1000
		if variance > 0 {
			n = min(n, cost*cost/variance)
		} else if classA+classB == 0 {
			n = 0 // nothing counted: nothing to price from
		} // else both prices are 0: free at any count
	}
	if math.IsInf(n, 1) {
		return classA + classB
	}
	return n
}

// bucketRun is one run's bucket operations and the work and time they came with.
type bucketRun struct {
	classA, classB, bytesIn, bytesOut, throttled float64
	units, seconds                               float64
}

// bucketRuns are the cells' bucket counters, for cells that counted them over some work.
func bucketRuns(cells []results.Cell, work WorkUnit) []bucketRun {
	var out []bucketRun
	for _, c := range cells {
		units := work.units(c)
		if _, ok := c.BackendStats[lab.BucketClassA]; !ok || units <= 0 || c.ElapsedS <= 0 {
			continue
		}
		s := c.BackendStats
		out = append(out, bucketRun{s[lab.BucketClassA], s[lab.BucketClassB], s[lab.BucketBytesIn], s[lab.BucketBytesOut],
			s[lab.BucketThrottled], units, c.ElapsedS})
	}
	return out
}

// bucketUse is the median over runs of their bucket counters per unit of work, priced where the
// median run holds MinPricedOps operations or more; nil if no run counted.
func bucketUse(cells []results.Cell, prices []scenario.Price, work WorkUnit) *results.BucketUse {
	runs := bucketRuns(cells, work)
	if len(runs) == 0 {
		return nil
	}
	median := func(f func(bucketRun) float64) float64 {
		v := make([]float64, len(runs))
		for i, run := range runs {
			v[i] = f(run)
		}
		return measure.Median(v)
	}
	u := &results.BucketUse{Unit: work.Name,
		ClassA:            median(func(x bucketRun) float64 { return x.classA / x.units }),
		ClassB:            median(func(x bucketRun) float64 { return x.classB / x.units }),
		BytesIn:           median(func(x bucketRun) float64 { return x.bytesIn / x.units }),
		BytesOut:          median(func(x bucketRun) float64 { return x.bytesOut / x.units }),
		Throttled:         median(func(x bucketRun) float64 { return x.throttled }),
		ClassAPerS:        median(func(x bucketRun) float64 { return x.classA / x.seconds }),
		ClassBPerS:        median(func(x bucketRun) float64 { return x.classB / x.seconds }),
		ClassAOps:         median(func(x bucketRun) float64 { return x.classA }),
		ClassBOps:         median(func(x bucketRun) float64 { return x.classB }),
		PricedOps:         median(func(x bucketRun) float64 { return pricedOps(prices, x.classA, x.classB) }),
		UnitsPerRun:       median(func(x bucketRun) float64 { return x.units }),
		BucketBytesPerRun: median(func(x bucketRun) float64 { return x.bytesIn + x.bytesOut }),
	}
	unsupported := 0
	for _, run := range runs {
		if !work.supports(run.units, run.bytesIn+run.bytesOut) {
			unsupported++
		}
	}
	u.TooLittleWork = 2*unsupported > len(runs)
	if u.TooLittleWork {
		return u
	}
	if u.PricedOps < MinPricedOps {
		u.TooFewToPrice = true
		return u
	}
	u.Costs = costs(prices, u.ClassA, u.ClassB, u.ClassAPerS, u.ClassBPerS)
	return u
}

// PooledBucket is a backend's bucket use over every run of every row, summed: the operations over
// all the work and all the seconds. Rows ran at their own rates of work, so it prices the backend
// at the mix the run swept, not at any one rate; it stands in where single rows are too thin.
type PooledBucket struct {
	Rows, Runs     int
	ClassA, ClassB float64 // operations, summed
	Seconds        float64 // time, summed
	APerUnit       float64 // operations over all the work
	BPerUnit       float64
	APerS, BPerS   float64 // operations over all the seconds
	Units          float64 // the work, summed
	BytesInPerUnit float64 // bytes written to the bucket over all the work
	PricedOps      float64
	Costs          []results.Cost // nil if PricedOps < MinPricedOps
}

// PooledBucketOf pools backend's bucket use over every run of r's cells that work can count
// (advise prices a candidate so where one row's run counted too few operations); false if none.
func PooledBucketOf(r *results.Results, backend string, work WorkUnit) (PooledBucket, bool) {
	var p PooledBucket
	var units float64
	rows := map[string]bool{}
	for _, c := range r.Cells {
		if c.Backend != backend || c.Failure != "" {
			continue
		}
		for _, run := range bucketRuns([]results.Cell{c}, work) {
			if !work.supports(run.units, run.bytesIn+run.bytesOut) {
				continue // its price per unit would multiply a few operations' bytes (MaxExtrapolation)
			}
			rows[r.Key(c.Cell).Point] = true
			p.Runs++
			p.ClassA, p.ClassB = p.ClassA+run.classA, p.ClassB+run.classB
			p.BytesInPerUnit += run.bytesIn
			units, p.Seconds = units+run.units, p.Seconds+run.seconds
		}
	}
	if p.Runs == 0 {
		return p, false
	}
	p.Rows, p.Units = len(rows), units
	p.APerUnit, p.BPerUnit, p.BytesInPerUnit = p.ClassA/units, p.ClassB/units, p.BytesInPerUnit/units
	p.APerS, p.BPerS = p.ClassA/p.Seconds, p.ClassB/p.Seconds
	p.PricedOps = pricedOps(priceLists(r), p.ClassA, p.ClassB)
	if p.PricedOps >= MinPricedOps {
		p.Costs = costs(priceLists(r), p.APerUnit, p.BPerUnit, p.APerS, p.BPerS)
	}
	return p, true
}

// opsText says how many operations a run held: "4 class A, 0 class B".
func opsText(classA, classB float64) string {
	return fmt.Sprintf("%.0f class A, %.0f class B", classA, classB)
}

// tooFewToPriceNotes explain the rows marked * in a table of costs (thin names them), and price
// each of their backends pooled over its runs instead where work names the unit of work (nil for
// the crash table, whose rows are not pooled).
func tooFewToPriceNotes(r *results.Results, thin []string, backends []string, work *WorkUnit) []string {
	var notes []string
	if len(thin) > 0 {
		verb := "count"
		if len(thin) == 1 {
			verb = "counts"
		}
		notes = append(notes, fmt.Sprintf("* not priced: %s %s too few bucket operations in a run to price. A count n of such rare "+
			"events is known to about 1/sqrt(n), so a price resting on fewer than %d (class A and B weighted by their prices) errs by a third or more, "+
			"and its $0, or its month, would extrapolate the few uploads the run happened to catch (a SQLite checkpoint, a sync)",
			ListAnd(thin), verb, MinPricedOps))
	}
	if work == nil || len(backends) == 0 {
		return notes
	}
	scale, costScale := max(work.Scale, 1), max(work.CostScale, 1)
	prices := priceLists(r)
	notes = append(notes, "every run of each backend pooled, as the answer prices it: its operations and bytes summed over all its rows' work and all "+
		"their seconds (the rows ran at their own rates of work, so this prices the mix this run swept, not one rate):")
	for _, b := range backends {
		p, ok := PooledBucketOf(r, b, *work)
		if !ok {
			continue
		}
		line := fmt.Sprintf("%s: %s in %d run(s) of %d row(s), %.1f s", b, opsText(p.ClassA, p.ClassB), p.Runs, p.Rows, p.Seconds)
		if p.Costs == nil {
			line += fmt.Sprintf(": too few to price even pooled (under %d); run longer", MinPricedOps)
		} else {
			line += fmt.Sprintf(": %.2f class A and %.2f class B per %s", p.APerUnit*scale, p.BPerUnit*scale, work.Label)
			for _, c := range p.Costs {
				line += fmt.Sprintf(", $%.4f/%s %s", c.USDPerUnit*costScale, work.CostLabel, c.Prices)
			}
			line += fmt.Sprintf("; %.2f class A/s, $%.2f/month %s", p.APerS, p.Costs[0].USDPerMonth, prices[0].Name)
		}
		if work.Label != "" {
			line += fmt.Sprintf("; %s up per %s", sizeText(p.BytesInPerUnit*scale), work.Label)
		}
		notes = append(notes, line)
	}
	return notes
}

// indentWrap wraps text at 110 columns, its first line indented by first, the others by rest.
func indentWrap(text, first, rest string) string {
	return first + strings.ReplaceAll(WrapText(text, 110-len(first)), "\n  ", "\n"+rest)
}

// sizeText is a byte count in binary units: "64 KiB", "14.2 GiB".
func sizeText(b float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.size {
			return strconv.FormatFloat(b/u.size, 'g', 3, 64) + " " + u.name
		}
	}
	return strconv.FormatFloat(b, 'f', 0, 64) + " B"
}
