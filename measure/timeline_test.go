package measure

import (
	"sync"
	"testing"
	"time"
)

func TestTimelineWindowsHoldCountMaxAndMean(t *testing.T) {
	start := time.Now()
	tl := NewTimeline(start, 2*time.Second, 500*time.Millisecond)
	if tl.Width() != 500*time.Millisecond {
		t.Fatalf("width %v", tl.Width())
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ { // 4 goroutines, each: 10 answers in window 0 of 1..10 ms, one of 300 ms in window 2
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= 10; i++ {
				tl.Record(start.Add(100*time.Millisecond), time.Duration(i)*time.Millisecond)
			}
			tl.Record(start.Add(1200*time.Millisecond), 300*time.Millisecond)
		}()
	}
	wg.Wait()
	tl.Record(start.Add(-time.Second), time.Hour) // before the span
	tl.Record(start.Add(time.Minute), time.Hour)  // after it
	maxMs, avgMs, perSecond := tl.Series()
	if len(perSecond) != 3 || perSecond[0].V != 80 || perSecond[1].V != 0 || perSecond[2].V != 8 || perSecond[2].T != 1.0 {
		t.Fatalf("per second %+v", perSecond)
	}
	// Windows without an answer have no latency point; the others the exact max and mean.
	if len(maxMs) != 2 || maxMs[0].V != 10 || maxMs[1].V != 300 || avgMs[0].V != 5.5 || avgMs[1].V != 300 {
		t.Errorf("max %+v avg %+v", maxMs, avgMs)
	}
}

func TestTimelineWidensForLongRuns(t *testing.T) {
	tl := NewTimeline(time.Now(), time.Hour, 250*time.Millisecond)
	if tl.Width() != time.Hour/TimelineWindows {
		t.Errorf("width %v for an hour", tl.Width())
	}
}

func TestTimelineRecordAllocatesNothing(t *testing.T) {
	start := time.Now()
	tl := NewTimeline(start, time.Second, 10*time.Millisecond)
	at := start.Add(500 * time.Millisecond)
	if n := testing.AllocsPerRun(1000, func() { tl.Record(at, time.Millisecond) }); n != 0 {
		t.Errorf("%v allocations per Record", n)
	}
}
