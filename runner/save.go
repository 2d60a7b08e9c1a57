package runner

import "time"

// SaveShare bounds what writing the results file costs a run: after a cell, the file is written
// only once SaveShare times the last save's duration has passed since that save began, so saving
// takes at most about 1/SaveShare of the run. Cells that each last that long are saved one by one;
// a plan of many short cells, whose file grows with every cell, is saved less and less often,
// instead of re-encoding every cell after every cell.
const SaveShare = 20

// saveClock is the saver's time; tests make saves look slow with a clock of their own.
var saveClock = time.Now

// saver writes a run's results file: at once when asked (save: before the first cell and at the
// end, whatever stopped the run), and after a cell when due (afterCell).
type saver struct {
	write     func() error
	lastStart time.Time
	lastCost  time.Duration
}

func (s *saver) save() error {
	start := saveClock()
	err := s.write()
	s.lastStart, s.lastCost = start, saveClock().Sub(start)
	return err
}

// afterCell saves unless the last save began less than SaveShare times its duration ago.
func (s *saver) afterCell() error {
	if saveClock().Sub(s.lastStart) < SaveShare*s.lastCost {
		return nil
	}
	return s.save()
}
