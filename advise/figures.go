package advise

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"persistlab/cost"
	"persistlab/report"
	"persistlab/results"
)

// Measured reads a candidate's figures from its runs' results: steady (at the rate and at twice
// it) and crash (nil where the crash runs did not run); files name them in the evidence.
func (p *Plan) Measured(c Candidate, steady *results.Results, steadyFile string, crash *results.Results, crashFile string) Figures {
	f := Figures{AtRate: map[string]float64{}, AtDouble: map[string]float64{}, Crash: map[string]float64{}}
	var atRate, atDouble *results.Aggregate
	if steady != nil {
		for i, a := range steady.Aggregates {
			if a.Backend != c.Name {
				continue
			}
			rate, _ := strconv.ParseFloat(a.Params["rate"], 64)
			into := f.AtRate
			switch rate {
			case p.Rate:
				atRate = &steady.Aggregates[i]
			case 2 * p.Rate:
				into, atDouble = f.AtDouble, &steady.Aggregates[i]
			default:
				continue
			}
			for k, v := range a.Median {
				into[k] = v
			}
			if share, ok := report.ErrorShare(a); ok {
				into[MetricErrorRate] = share
			}
			if p.App.Kind == KindChanges {
				f.Notes = append(f.Notes, p.gitFigures(into, rate)...)
			}
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: row %s %s", steadyFile, a.Backend, a.Point))
		}
	}
	if crash != nil {
		from := c.Name
		if c.CrashFrom != "" {
			from = c.CrashFrom
		}
		for _, s := range crash.CrashSummaries {
			if s.Backend != from || s.Runs == 0 {
				continue
			}
			f.Crashes = s.Runs
			f.Crash[MetricLostAcked] = float64(s.LostMax)
			f.Crash["lost_acked_median"] = s.LostMedian
			f.Crash["lost_everything"] = float64(s.LostEverything)
			f.Crash[MetricLostWindow] = s.ReachMaxMs
			f.Crash["recovery_ms"] = s.RecoveryMedianMs
			f.Crash["integrity_failures"] = float64(s.IntegrityFailures)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: row %s %s (%d crashes)", crashFile, s.Backend, s.Point, s.Runs))
		}
		if c.CrashFrom != "" && f.Crashes > 0 {
			f.Notes = append(f.Notes, "its lost writes were measured on "+c.CrashFrom+" and are assumed for this type: every lab volume makes a flushed write durable the same way, differing only in limits and service times")
		}
	}
	var billNotes []string
	f.Bill, f.Priced, f.AtMostUSD, billNotes = p.bill(c, atRate, steady)
	f.Notes = append(f.Notes, billNotes...)
	if atDouble != nil {
		// The bill at twice the rate, from the run there: what the ranking there is judged by.
		twice := *p
		twice.Rate = 2 * p.Rate
		f.DoubleBill, f.DoublePriced, f.DoubleAtMostUSD, _ = twice.bill(c, atDouble, steady)
	}
	if c.Sizing != "" {
		f.Notes = append(f.Notes, c.Sizing)
	}
	if p.App.Kind == KindChanges && steady != nil && c.Volume != nil {
		f.Notes = append(f.Notes, p.gitVolumeNotes(c, steady)...)
	}
	if p.App.Kind == KindChanges && steady == nil && p.FailsCrash(f) {
		on := ""
		if c.CrashFrom != "" {
			on = " (on " + c.CrashFrom + ")"
		}
		f.Notes = append(f.Notes, "no steady cells: its crash runs"+on+" already fail a crash requirement")
	}
	for _, at := range []struct {
		m    map[string]float64
		rate float64
	}{{f.AtRate, p.Rate}, {f.AtDouble, 2 * p.Rate}} {
		got, answered := at.m["rate"]
		switch dropped := at.m["dropped"]; {
		case p.App.Kind == KindChanges:
		case p.App.perIteration():
			// An iteration may make several requests: k6 says it fell behind by the iterations it
			// could not start, every VU busy.
			if dropped > 0 {
				f.Notes = append(f.Notes, fmt.Sprintf("at %s/s k6 could not start %.0f iterations of the script, every connection busy: it fell behind, and its latency there includes the queue", rateText(at.rate), dropped))
			}
		case answered && got < MinServedShare*at.rate:
			f.Notes = append(f.Notes, fmt.Sprintf("at %s/s it answered %.1f/s: it fell behind, and its latency there includes the queue", rateText(at.rate), got))
		}
	}
	if p.App.perIteration() && atRate != nil {
		f.Notes = append(f.Notes, fmt.Sprintf("the script's iterations at %s/s made %.1f requests/s answered (%.2f an iteration): the bill is at those", rateText(p.Rate), p.requestsPerS(atRate), p.requestsPerS(atRate)/p.Rate))
	}
	return f
}

// requestsPerS is the requests the app answers a second at the rate: the rate itself, or, where a
// k6 script's iterations are the rate's unit, the 200 answers a second the run at the rate counted.
func (p *Plan) requestsPerS(atRate *results.Aggregate) float64 {
	if !p.App.perIteration() || atRate == nil {
		return p.Rate
	}
	if got := atRate.Median["rate"]; got > 0 && !math.IsInf(got, 0) {
		return got
	}
	return p.Rate
}

// requestsServed is the unit an HTTP app's bucket use is pooled over: its 200 answers.
var requestsServed = report.WorkUnit{Name: "app request", Units: func(c results.Cell) float64 { return c.M("ok") }}

// pooledBucketRates prices the bucket where the run at the rate alone counted too few operations
// (a gcsfuse upload comes at a SQLite checkpoint, a Litestream one at a sync: a short cell may
// catch none): every steady run of the candidate pooled, at the higher of its operations per
// second and its operations per request times the rate. The first is what a cost driven by time
// (syncs) comes to, the second what a cost driven by writes (checkpoints) does; the higher is
// the estimate a budget can be judged by without knowing which. Too few even pooled, each count
// is taken at its one-sided 95% upper bound (Poisson), and atMost says the price is a bound.
func (p *Plan) pooledBucketRates(c Candidate, atRate *results.Aggregate, steady *results.Results) (aPerS, bPerS float64, note string, priced, atMost bool) {
	ops := 0.0
	if atRate.Bucket != nil {
		ops = atRate.Bucket.ClassAOps + atRate.Bucket.ClassBOps
	}
	alone := fmt.Sprintf("the run at the rate counted %.0f bucket operations, too few to price alone (at least %d)", ops, report.MinPricedOps)
	if steady == nil {
		return 0, 0, alone + ", and no steady run to pool: not priced", false, false
	}
	pooled, ok := report.PooledBucketOf(steady, c.Name, requestsServed)
	if !ok || pooled.Seconds <= 0 || pooled.Units <= 0 {
		return 0, 0, alone + ", and no steady run counted any: not priced", false, false
	}
	classA, classB, how := pooled.ClassA, pooled.ClassB, "priced"
	if pooled.PricedOps < report.MinPricedOps {
		classA, classB, atMost = poissonUpper(classA), poissonUpper(classB), true
		how = fmt.Sprintf("too few even so: billed at most, each count at its 95%% upper bound (%.1f and %.1f),", classA, classB)
	}
	list := p.Platform.bucket()
	perS := cost.Usage{Bucket: list, ClassAPerS: classA / pooled.Seconds, ClassBPerS: classB / pooled.Seconds}
	perRequest := cost.Usage{Bucket: list, ClassAPerS: classA / pooled.Units * p.requestsPerS(atRate), ClassBPerS: classB / pooled.Units * p.requestsPerS(atRate)}
	basis := "per second"
	if bucketUSD(perRequest) > bucketUSD(perS) {
		perS, basis = perRequest, "per request at the rate"
	}
	return perS.ClassAPerS, perS.ClassBPerS, fmt.Sprintf("%s: its %d steady runs pooled (%.0f class A and %.0f class B operations in %.0f s and %.0f requests), %s %s, "+
		"the higher of per second and per request at the rate: an estimate, not this rate's own count",
		alone, pooled.Runs, pooled.ClassA, pooled.ClassB, pooled.Seconds, pooled.Units, how, basis), true, atMost
}

// poissonUpper is the one-sided 95% upper bound on the mean of a Poisson count k: -ln 0.05 = 3.0
// for none, else Wilson and Hilferty's approximation (within 0.5% of the exact bound from k = 1).
func poissonUpper(k float64) float64 {
	const z = 1.6449 // the normal's 95th percentile
	if k <= 0 {
		return -math.Log(0.05)
	}
	n := k + 1
	return n * math.Pow(1-1/(9*n)+z/(3*math.Sqrt(n)), 3)
}

// egress is the traffic between the platform and a bucket of another cloud, at the rate: what
// the run at the rate uploaded per request leaves the platform's network, what it read back
// leaves the bucket's. None where both are one cloud's, or the run counted no bytes.
func (p *Plan) egress(atRate *results.Aggregate) []cost.Egress {
	from, to := p.Platform.network(), p.Platform.bucketNetwork()
	if from == to || atRate == nil || atRate.Bucket == nil || atRate.Bucket.Unit != requestsServed.Name {
		return nil
	}
	b := atRate.Bucket
	return []cost.Egress{
		{What: fmt.Sprintf("uploads to the %s bucket (%.0f bytes a request, measured)", p.Platform.bucket(), b.BytesIn), From: from, BytesPerS: b.BytesIn * p.requestsPerS(atRate)},
		{What: fmt.Sprintf("reads from the %s bucket (%.0f bytes a request, measured)", p.Platform.bucket(), b.BytesOut), From: to, BytesPerS: b.BytesOut * p.requestsPerS(atRate)},
	}
}

// bucketUSD is what operations at u's rates cost a month on u's bucket (GCS where unset).
func bucketUSD(u cost.Usage) float64 {
	if u.Bucket == "" {
		u.Bucket = "GCS"
	}
	u.Egress, u.StoredBytes = nil, 0
	b, err := u.Bill()
	if err != nil {
		return 0
	}
	return b.Total()
}

// busyShare is the share of time an instance has a request in flight at the rate, for
// request-based billing: Poisson arrivals, each holding the instance for the server's mean time
// (the app's own service time where it reports one, else the client's, which includes the queue).
func busyShare(rate float64, atRate *results.Aggregate) (float64, bool) {
	if atRate == nil {
		return 0, false
	}
	mean, ok := atRate.Median["service_avg_ms"]
	if !ok || mean <= 0 {
		mean, ok = atRate.Median["avg_ms"]
	}
	if !ok || mean <= 0 || math.IsNaN(mean) || math.IsInf(mean, 0) {
		return 0, false
	}
	return min(1, 1-math.Exp(-rate*mean/1000)), true
}

// syncsUncounted says whether cells of length d are too short to count the syncs of a candidate
// that replicates at a sync interval (Litestream's sync_interval): shorter than two of them.
func syncsUncounted(c Candidate, d time.Duration) bool {
	iv, err := time.ParseDuration(c.Options["sync_interval"])
	return c.Bucket == BucketReplica && err == nil && d < 2*iv
}

// MinServedShare is the share of the asked rate a run must answer to count as keeping up: an open
// loop's answers lag its starts by one latency, so a run of a few hundred requests answers a little
// under the rate even when it keeps up.
const MinServedShare = 0.95

// bill is the candidate's monthly bill from what it measured at the rate: the platform, the
// bucket's operations and storage, the volume; priced is false where a line cannot be told.
//
// atMostUSD is the part of the bill that is an upper bound (bucket operations too few to count
// even pooled), 0 where every line is priced as measured.
func (p *Plan) bill(c Candidate, atRate *results.Aggregate, steady *results.Results) (lines []cost.Line, priced bool, atMostUSD float64, notes []string) {
	priced = true
	boundOps := false
	u := cost.Usage{}
	if p.Platform.Kind == "cloudrun" {
		// The instances always on (one unless --instances says more), billed instance-based, where
		// the data is on the instance: a single SQLite writer must stay up (scaling to zero throws
		// the instance's disk away), and Litestream replicates between requests, which
		// request-based billing's CPU throttling would stall.
		u.Billing, u.Instances = cost.InstanceBased, float64(p.Platform.instances())
		u.VCPUs, u.GiB, u.RequestsPerS = p.Platform.CPUs, float64(p.Platform.Memory)/(1<<30), p.requestsPerS(atRate)
	}
	if c.Machine != "" {
		if vcpus, gib, ok := cloudSQLSize(c.Machine); ok {
			u.Priced = append(u.Priced, cost.CloudSQLInstance(c.Machine, vcpus, gib))
		} else {
			priced = false
			notes = append(notes, "no list price for machine "+c.Machine)
		}
	}
	if c.Volume != nil {
		usd, how := c.Volume.MonthlyUSD()
		u.Priced = append(u.Priced, cost.Line{Item: "volume " + c.Volume.Type, USDPerMonth: usd, How: how, Source: "persistlab lab model volume"})
	}
	if c.Bucket != BucketNone {
		u.Bucket, u.StoredBytes = p.Platform.bucket(), float64(p.DBBytes)
		u.Egress = p.egress(atRate)
		switch {
		case syncsUncounted(c, p.Duration):
			// Litestream uploads at each sync: a cell that holds fewer than two counts its start's
			// uploads (the first snapshot), not the rate of its syncs.
			priced = false
			notes = append(notes, fmt.Sprintf("its cells (%s) are shorter than two of its sync intervals (%s): they count the uploads of its start, not those of its syncs, so its bucket operations are not priced; a longer --time runs longer cells (at most %s)",
				p.Duration, c.Options["sync_interval"], MaxDuration))
		case atRate == nil:
			priced = false
			notes = append(notes, "no steady run at the rate: the bucket's operations are not priced")
		case atRate.Bucket == nil || atRate.Bucket.TooFewToPrice:
			var note string
			u.ClassAPerS, u.ClassBPerS, note, priced, boundOps = p.pooledBucketRates(c, atRate, steady)
			notes = append(notes, note)
		default:
			u.ClassAPerS, u.ClassBPerS = atRate.Bucket.ClassAPerS, atRate.Bucket.ClassBPerS
		}
	}
	b, err := u.Bill()
	if err != nil {
		return nil, false, 0, append(notes, "the bill: "+err.Error())
	}
	// On gcsfuse the data is in the bucket, and on Cloud SQL on the server, so request-based billing
	// (while a request is in flight) is open too: the cheaper of the two is billed, and the other said.
	if p.Platform.Kind == "cloudrun" && c.offInstance() {
		if share, ok := busyShare(p.requestsPerS(atRate)/float64(p.Platform.instances()), atRate); ok { // each instance's share
			r := u
			r.Billing, r.BusyShare = cost.RequestBased, share
			if rb, err := r.Bill(); err == nil && rb.Total() < b.Total() {
				notes = append(notes, fmt.Sprintf("billed request-based, the cheaper: instance-based would cost $%.2f a month", b.Total()))
				b = rb
			} else if err == nil {
				notes = append(notes, fmt.Sprintf("billed instance-based, the cheaper: request-based would cost $%.2f a month (busy %.0f%% of the time; each busy spell billed rounded up to 0.1 s, and a fee per request)", rb.Total(), 100*share))
			}
		}
	}
	if boundOps {
		for _, l := range b.Lines {
			if strings.Contains(l.Item, " operations") {
				atMostUSD += l.USDPerMonth
			}
		}
	}
	return b.Lines, priced, atMostUSD, notes
}
