package volume

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Many I/Os waiting at once all wake near their deadlines: none is left behind while others keep
// coming. (The stall the clock once had, waiters readied onto the processor its thread kept
// through its nanosleeps, showed only under FUSE: TestCalibrationDeepQueueNoneLeftBehind.)
func TestEveryWaiterWakesWhileOthersKeepComing(t *testing.T) {
	const waiters, each = 16, time.Millisecond
	var mu sync.Mutex
	var worst time.Duration
	var wg sync.WaitGroup
	// Each waiter reads a file and writes its answer, as the image's reads do around their wait.
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := time.Now().Add(1500 * time.Millisecond)
	for range waiters {
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
			for i := int64(0); time.Now().Before(stop); i++ {
				t0 := time.Now()
				f.ReadAt(buf, i%256*4096)
				sleep(each)
				sink.Write(buf)
				if late := time.Since(t0) - each; late > 0 {
					mu.Lock()
					worst = max(worst, late)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d waiters of %v each for 1.5 s: the latest woke %v late", waiters, each, worst)
	// Generous: this machine is shared; the defect held waiters for seconds.
	if worst > 200*time.Millisecond {
		t.Errorf("a waiter of %v woke %v late", each, worst)
	}
}
