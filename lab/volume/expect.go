package volume

import "math"

// Job is a steady stream of I/O as fio sends it: bs bytes each, random or sequential, depth at
// once, for seconds (0: unknown, taken as short enough for full credits to last).
type Job struct {
	Write, Random bool
	BS            int64
	Depth         int
	Seconds       float64
}

// Expect is the I/O rate (I/Os per second) the model allows a job on a volume that starts with
// full credits: the lowest of what its IOPS, its throughput, the instance and its service time
// at that depth allow, each averaged over the job's time where a burst bucket runs dry in it.
func (l Limits) Expect(j Job) float64 {
	units := float64(j.BS) / float64(l.UnitBytes) // merged when sequential
	if j.Random {
		units = math.Ceil(units)
	}
	mib := float64(j.BS) / (1 << 20)
	if l.HDD {
		mib = units // a full MiB of throughput per unit
	}
	rate := math.Inf(1)
	limit := func(perSecond, cost float64) {
		if perSecond > 0 && cost > 0 {
			rate = min(rate, perSecond/cost)
		}
	}
	limit(averaged(l.BaseIOPS, l.BurstIOPS, l.CreditIOs, j.Seconds), units)
	limit(averaged(l.BaseMiBps, l.BurstMiBps, l.CreditMiB, j.Seconds), mib)
	if j.Write {
		limit(l.WriteIOPS, units)
		limit(l.WriteMiBps, mib)
		limit(l.Instance.WriteMiBps, float64(j.BS)/(1<<20))
	} else {
		limit(l.ReadIOPS, units)
		limit(l.ReadMiBps, mib)
	}
	limit(l.Instance.IOPS, 1)
	limit(l.Instance.MiBps, float64(j.BS)/(1<<20))
	if l.ServiceTime > 0 && j.Depth > 0 {
		limit(float64(j.Depth)/l.ServiceTime.Seconds(), 1)
	}
	return rate
}

// averaged is a bucket's mean rate over seconds from full: the burst while credits last, then
// the baseline.
func averaged(base, burst, credits, seconds float64) float64 {
	if burst <= base {
		return base
	}
	if seconds <= 0 {
		return burst
	}
	return min(burst, base+credits/seconds)
}
