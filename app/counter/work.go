package counter

import (
	"time"
)

// Work burns a fixed amount of CPU per request, standing in for a web framework's own cost (the
// seed's Rails app spent about 4.7 ms of CPU per request; see the cloudrun-sqlite scenario). It is
// counted in loop iterations calibrated once at start, not in wall time, so a request that is
// preempted still does the same work.
type Work struct {
	iterations int
}

var workSink uint64

func spin(n int) {
	x := workSink | 1
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	workSink = x
}

// CalibrateWork measures this CPU's loop speed and returns work worth d of CPU per call.
func CalibrateWork(d time.Duration) Work {
	if d <= 0 {
		return Work{}
	}
	const probe = 1 << 20
	best := time.Duration(1 << 62)
	for i := 0; i < 5; i++ { // the fastest of five: least disturbed by other load
		t0 := time.Now()
		spin(probe)
		best = min(best, time.Since(t0))
	}
	return Work{iterations: int(float64(probe) * float64(d) / float64(best))}
}

// Do burns the calibrated CPU.
func (w Work) Do() {
	if w.iterations > 0 {
		spin(w.iterations)
	}
}
