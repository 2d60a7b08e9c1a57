package volume

// limiter is a token bucket in its "virtual scheduling" form (GCRA, as in qemu's throttle with a
// burst): tokens accrue at rate up to burst; an I/O reserves its cost at once, going into debt if
// it must, and may start when the debt it leaves is no more than the bucket can hold. Later I/Os
// queue behind the debt, so a saturated volume serves exactly rate tokens per second. Times are
// seconds since the model's start. A zero rate limits nothing.
type limiter struct {
	rate, burst float64
	tat         float64 // when the bucket would be full again, had nothing more come
}

// newLimiter is a bucket of burst tokens refilled at rate, full at the start.
func newLimiter(rate, burst float64) limiter { return limiter{rate: rate, burst: burst} }

// reserve takes cost tokens for an I/O arriving at now and says when it may start. A negative
// cost gives tokens back (billing found it had counted too many): later I/Os start sooner.
func (l *limiter) reserve(now, cost float64) float64 {
	if l.rate <= 0 || cost == 0 {
		return now
	}
	if cost < 0 {
		l.tat += cost / l.rate // reserve clamps tat to now, so no more than a full bucket comes back
		return now
	}
	l.tat = max(l.tat, now) + cost/l.rate
	return max(now, l.tat-l.burst/l.rate)
}

// balance is the tokens in the bucket at now (negative while in debt).
func (l *limiter) balance(now float64) float64 {
	if l.rate <= 0 {
		return 0
	}
	return l.burst - max(0, l.tat-now)*l.rate
}

// peakBurst is the tokens a rate limit lets through at once: what arrives within a millisecond
// of its neighbours is not held apart (assumption: providers do not publish their granularity).
func peakBurst(rate float64) float64 { return max(1, rate/1000) }
