package volume

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Many I/Os waiting at once all take turns while others keep coming: none is left behind, none
// wakes before its deadline, and the clock holds no waiter at the end. (The stall the clock once
// had, waiters readied onto the processor its thread kept through its nanosleeps, held 14 of 16
// for seconds while 2 went on, and showed only under FUSE: TestDeepQueueLeavesNoIOBehind.) How
// late waiters wake depends on this machine's load: reported, not asserted.
func TestEveryWaiterWakesWhileOthersKeepComing(t *testing.T) {
	const waiters, each = 16, time.Millisecond
	var mu sync.Mutex
	var latest, earliest time.Duration
	turns := make([]int, waiters)
	var wg sync.WaitGroup
	// Each waiter reads a file and writes its answer, as the image's reads do around their wait.
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := time.Now().Add(1500 * time.Millisecond)
	for w := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.Open(data)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			sink, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer sink.Close()
			buf := make([]byte, 4096)
			for i := int64(0); i == 0 || time.Now().Before(stop); i++ { // a turn at least
				f.ReadAt(buf, i%256*4096)
				t0 := time.Now()
				sleep(each)
				late := time.Since(t0) - each
				sink.Write(buf)
				mu.Lock()
				latest, earliest = max(latest, late), min(earliest, late)
				turns[w]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	least, most := turns[0], turns[0]
	for _, n := range turns {
		least, most = min(least, n), max(most, n)
	}
	t.Logf("%d waiters of %v each for 1.5 s: %d to %d turns each; the latest woke %v late", waiters, each, least, most, latest)
	if earliest < 0 {
		t.Errorf("a waiter of %v woke %v early", each, -earliest)
	}
	// Fair turns: the stall gave the held waiters one turn to the others' hundreds. A slow machine
	// slows every waiter alike.
	if least*10 < most {
		t.Errorf("waiters took %d to %d turns each: some were left behind", least, most)
	}
	if n := wakeClock.waiting(); n != 0 {
		t.Errorf("every waiter returned, yet the clock holds %d", n)
	}
}
