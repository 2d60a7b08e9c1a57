package counter

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
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

// CalibrateWork measures this CPU's loop speed and returns work worth d of CPU per call. It times
// the loop by the thread's own CPU clock, not the wall's: under a CPU limit (a CFS quota, a
// weight beside a spinner) the wall time of the probe includes the time the limit held it back,
// and the work would come out short by that share (0.44 of a request's CPU under a 0.25 CPU quota
// of 5 ms periods, timed by the wall). The fastest of five is least disturbed by other load.
func CalibrateWork(d time.Duration) Work {
	if d <= 0 {
		return Work{}
	}
	runtime.LockOSThread() // the thread's clock counts this goroutine's loop alone
	defer runtime.UnlockOSThread()
	const probe = 1 << 20
	best := time.Duration(1 << 62)
	for i := 0; i < 5; i++ {
		t0 := threadCPU()
		spin(probe)
		best = min(best, threadCPU()-t0)
	}
	if best <= 0 {
		best = time.Nanosecond
	}
	return Work{iterations: int(float64(probe) * float64(d) / float64(best))}
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID); the wall clock where the
// kernel does not give it.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}

// Do burns the calibrated CPU.
func (w Work) Do() {
	if w.iterations > 0 {
		spin(w.iterations)
	}
}
