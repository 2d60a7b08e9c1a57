package runner

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"persistlab/results"
	"persistlab/scenario"
)

// fakeSaveClock stands in for saveClock until the test ends; the test moves it.
func fakeSaveClock(t *testing.T) *time.Time {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	saveClock = func() time.Time { return now }
	t.Cleanup(func() { saveClock = time.Now })
	return &now
}

// A save is written between cells only once SaveShare times its predecessor's cost has passed
// since that one began, and no later than the first cell that ends after that: cells that last
// longer than SaveShare saves are each saved, short ones saved in groups, with the file (and so
// each save's cost) growing with every cell.
func TestSavesBetweenCellsCostAtMostAShareOfTheRun(t *testing.T) {
	now := fakeSaveClock(t)
	const perCell = time.Millisecond // what a save costs per cell the file holds
	type save struct {
		start time.Time
		cost  time.Duration
		cells int
	}
	var saves []save
	cells := 0
	s := &saver{write: func() error {
		cost := 5*time.Millisecond + time.Duration(cells)*perCell
		saves = append(saves, save{*now, cost, cells})
		*now = now.Add(cost)
		return nil
	}}
	s.save() // before the first cell
	var cellEnds []time.Time
	for _, phase := range []struct {
		cells  int
		length time.Duration
	}{{20, 2 * time.Second}, {2000, 3 * time.Millisecond}, {5, time.Hour}} {
		for range phase.cells {
			*now = now.Add(phase.length)
			cells++
			cellEnds = append(cellEnds, *now)
			s.afterCell()
		}
	}
	s.save() // at the end

	between := saves[1 : len(saves)-1]
	if last := saves[len(saves)-1]; last.cells != cells {
		t.Fatalf("the last save holds %d of %d cells", last.cells, cells)
	}
	for i, sv := range between {
		prev := saves[i] // between[i] follows saves[i]
		if gap := sv.start.Sub(prev.start); gap < SaveShare*prev.cost {
			t.Errorf("save %d began %v after the one before, which cost %v: under %d times that", i+1, gap, prev.cost, SaveShare)
		}
		// Due at prev.start + SaveShare*prev.cost: saved after the first cell to end then or later.
		due := prev.start.Add(SaveShare * prev.cost)
		first, _ := slices.BinarySearchFunc(cellEnds, due, func(end, due time.Time) int { return end.Compare(due) })
		if first < len(cellEnds) && sv.cells > first+1 {
			t.Errorf("save %d holds %d cells: due after cell %d", i+1, sv.cells, first+1)
		}
	}
	// Cells of 2 s and of an hour are each saved (a save costs 25 ms, then 2 s at most); those of 3 ms
	// are not.
	if len(between) < 25 {
		t.Fatalf("%d saves between %d cells", len(between), cells)
	}
	if between[19].cells != 20 || len(between) >= 20+2000 || between[len(between)-5].cells != 2021 {
		t.Errorf("%d saves between %d cells; the 20th holds %d cells", len(between), cells, between[19].cells)
	}
}

// When saving costs more than cells last, the file is written before the first cell and at the
// end only, and the last write holds every cell measured, however the run ends.
func TestTheLastSaveHoldsEveryCell(t *testing.T) {
	now := fakeSaveClock(t)
	for _, interruptAt := range []int{0, 6} { // 6: Ctrl-C as the 6th cell starts
		var saved []int // cells each save held
		derive := func(r *results.Results) {
			saved = append(saved, len(r.Cells))
			*now = now.Add(time.Hour) // every save costs an hour; the cells take no time
		}
		ctx, cancel := context.WithCancel(context.Background())
		progress := &cancelAtCell{at: interruptAt, cancel: cancel}
		takeLedger()
		work := t.TempDir()
		out := filepath.Join(work, "r.json")
		res, err := Run(ctx, fakeSpec("20..69", scenario.BackendSpec{Name: "fakedisk"}), Options{Out: out, WorkDir: filepath.Join(work, "scratch"), Derive: derive, Progress: progress})
		cancel()
		status, cells := results.StatusComplete, 100
		if interruptAt > 0 {
			status, cells = results.StatusInterrupted, interruptAt-1
		}
		if res == nil {
			t.Fatal(err)
		}
		if (err != nil) != (interruptAt > 0) || res.Status != status || len(res.Cells) != cells {
			t.Fatalf("interrupted at %d: %v, status %s, %d cells", interruptAt, err, res.Status, len(res.Cells))
		}
		back, err := results.Load(out)
		if err != nil || back.Status != status || len(back.Cells) != cells || !slices.Equal(saved, []int{0, cells}) {
			t.Errorf("interrupted at %d: the file holds %d of %d cells (%v); the saves held %v cells", interruptAt, len(back.Cells), cells, err, saved)
		}
	}
}

// cancelAtCell is a progress writer that cancels the run as cell number at starts (0: never).
type cancelAtCell struct {
	started, at int
	cancel      func()
}

func (c *cancelAtCell) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("cell ")) {
		if c.started++; c.started == c.at {
			c.cancel()
		}
	}
	return len(p), nil
}
