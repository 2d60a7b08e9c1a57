package measure

import (
	"sync/atomic"
	"time"
)

// Timeline keeps, per window of a run's time, how many requests completed and the largest and
// total latency among them, so a stall can be lined up with what else happened at that moment
// (a bucket upload, CPU throttling). Its windows are allocated once; Record allocates nothing and
// is safe from many goroutines.
type Timeline struct {
	start   time.Time
	width   time.Duration
	windows []timelineWindow
}

type timelineWindow struct {
	count, maxNs, sumNs atomic.Int64
}

// TimelineWindows bounds the windows a timeline holds: a long run gets wider windows.
const TimelineWindows = 400

// NewTimeline covers span from start in windows of at least minWidth.
func NewTimeline(start time.Time, span, minWidth time.Duration) *Timeline {
	width := max(minWidth, span/TimelineWindows)
	n := int(span/width) + 1
	return &Timeline{start: start, width: width, windows: make([]timelineWindow, n)}
}

// Record adds one request that completed at done after latency; one outside the span is ignored.
func (t *Timeline) Record(done time.Time, latency time.Duration) {
	i := int(done.Sub(t.start) / t.width)
	if i < 0 || i >= len(t.windows) {
		return
	}
	w := &t.windows[i]
	w.count.Add(1)
	w.sumNs.Add(int64(latency))
	for {
		old := w.maxNs.Load()
		if int64(latency) <= old || w.maxNs.CompareAndSwap(old, int64(latency)) {
			return
		}
	}
}

// Width is the timeline's window.
func (t *Timeline) Width() time.Duration { return t.width }

// Series are the windows up to the last with a request: max and mean latency in ms, and
// completions per second, each point at its window's start in seconds from the timeline's start.
func (t *Timeline) Series() (maxMs, avgMs, perSecond []Point) {
	last := -1
	for i := range t.windows {
		if t.windows[i].count.Load() > 0 {
			last = i
		}
	}
	for i := 0; i <= last; i++ {
		w := &t.windows[i]
		at := (time.Duration(i) * t.width).Seconds()
		n := w.count.Load()
		perSecond = append(perSecond, Point{T: at, V: float64(n) / t.width.Seconds()})
		if n == 0 {
			continue
		}
		maxMs = append(maxMs, Point{T: at, V: float64(w.maxNs.Load()) / 1e6})
		avgMs = append(avgMs, Point{T: at, V: float64(w.sumNs.Load()) / float64(n) / 1e6})
	}
	return maxMs, avgMs, perSecond
}
