package volume

import (
	"container/heap"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Go's timers wake an idle program on a millisecond grid (time.Sleep of 200 µs took about 1.1 ms
// here), and a service time of 1 ms must stay 1 ms. So waits go to one clock thread that sleeps
// in nanosleep (about 0.1 ms late) until the earliest deadline, never longer than clockTick (a
// wait added meanwhile with an earlier deadline is late by at most that), and wakes each waiter
// through its channel. One thread does the timing however deep the queue; idle, it blocks.
const clockTick = 250 * time.Microsecond

type waiter struct {
	deadline time.Time
	ch       chan struct{}
}

type waiters []*waiter

func (h waiters) Len() int           { return len(h) }
func (h waiters) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h waiters) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *waiters) Push(x any)        { *h = append(*h, x.(*waiter)) }
func (h *waiters) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}

type clock struct {
	mu      sync.Mutex
	pending waiters
	idle    chan struct{} // the clock thread blocks on it while nothing waits
	pool    sync.Pool
}

var wakeClock = newClock()

func newClock() *clock {
	c := &clock{idle: make(chan struct{}, 1), pending: make(waiters, 0, 1024)}
	c.pool.New = func() any { return &waiter{ch: make(chan struct{}, 1)} }
	go c.run()
	return c
}

// sleep waits d; nothing when d is not positive.
func sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	wakeClock.wait(time.Now().Add(d))
}

// sleepUnless waits d, or until cut closes.
func sleepUnless(d time.Duration, cut <-chan struct{}) {
	if d <= 0 {
		return
	}
	wakeClock.waitUnless(time.Now().Add(d), cut)
}

func (c *clock) wait(deadline time.Time) { c.waitUnless(deadline, nil) }

func (c *clock) waitUnless(deadline time.Time, cut <-chan struct{}) {
	w := c.pool.Get().(*waiter)
	w.deadline = deadline
	c.mu.Lock()
	heap.Push(&c.pending, w)
	c.mu.Unlock()
	select {
	case c.idle <- struct{}{}:
	default:
	}
	select {
	case <-w.ch:
		c.pool.Put(w)
	case <-cut:
		// Still in the heap: the clock wakes it at its deadline into its buffered channel, and
		// it is not reused.
	}
}

// waiting is how many waiters the clock holds.
func (c *clock) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

func (c *clock) run() {
	runtime.LockOSThread() // its nanosleeps block this thread only
	for {
		c.mu.Lock()
		now := time.Now()
		woke := false
		for len(c.pending) > 0 && !c.pending[0].deadline.After(now) {
			heap.Pop(&c.pending).(*waiter).ch <- struct{}{}
			woke = true
		}
		var next time.Duration = -1
		if len(c.pending) > 0 {
			next = min(c.pending[0].deadline.Sub(now), clockTick)
		}
		c.mu.Unlock()
		if woke {
			// The woken goroutines are queued on this thread's processor, which it keeps through
			// its nanosleeps: unless it hands it over, they wait until another processor steals
			// them (under FUSE most of a queue of 16 reads waited seconds while 2 went on).
			runtime.Gosched()
		}
		if next < 0 {
			<-c.idle
			continue
		}
		ts := unix.NsecToTimespec(int64(next))
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
	}
}
