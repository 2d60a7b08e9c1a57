package runner

import (
	"fmt"
	"io"
	"sync"
	"time"

	"persistlab/scenario"
)

// progress keeps one status line ("cell i/n, elapsed, ETA") at the foot of a terminal, rewritten
// in place; a warning clears it, takes a line of its own and the status line is drawn again
// under it. It is silent when given no writer.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	cells   []scenario.Cell // the plan's, in the order they run
	perCell []time.Duration // the plan's estimate of each cell (0: unknown); nil: none
	now     func() time.Time
	index   int             // cells started
	t0      time.Time       // when the first cell started
	began   time.Time       // when the cell running now started
	took    []time.Duration // each finished cell's time, start-up and saving included
	line    string          // the status line on the terminal now, "" when none
	width   int             // the terminal's width; 0: unknown
}

// MeasuredAfter is how many cells must have finished before the ETA is measured rather than the
// plan's estimate: one cell may be all start-up, or the smallest point of the sweep.
const MeasuredAfter = 3

func newProgress(w io.Writer, cells []scenario.Cell, perCell []time.Duration, width int) *progress {
	return &progress{w: w, cells: cells, perCell: perCell, width: width, now: time.Now}
}

func (p *progress) start(c scenario.Cell) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.index == 0 {
		p.t0 = now
	} else {
		p.took = append(p.took, now.Sub(p.began))
	}
	p.began = now
	elapsed := now.Sub(p.t0).Round(time.Second)
	eta := "?"
	if left, measured := p.remaining(); measured {
		eta = left.Round(time.Second).String()
	} else if left > 0 {
		eta = "about " + left.Round(time.Second).String() + " (estimate)"
	}
	p.index++
	p.line = fmt.Sprintf("cell %d/%d  %s  elapsed %s  eta %s", p.index, len(p.cells), scenario.Label(c.Backend, c.PointName, fmt.Sprintf("run %d", c.Repeat)), elapsed, eta)
	if r := []rune(p.line); p.width > 1 && len(r) >= p.width { // the last column would wrap on some terminals
		p.line = string(r[:p.width-1])
	}
	fmt.Fprint(p.w, "\r\033[K"+p.line)
}

// remaining is the time the cells from the one starting now on will take, and whether it is
// measured. Until MeasuredAfter cells have finished it is the plan's estimate of them (0 when a
// cell's is unknown). After, each cell left counts the mean time of the finished cells of its
// backend and sweep point; failing those, of its point on any backend (cells differ more by point,
// a file's size, than by backend); failing those, the plan's estimate of it times the finished
// cells' measured-to-estimated ratio; failing that, the mean of every finished cell.
func (p *progress) remaining() (time.Duration, bool) {
	estimate := func(i int) time.Duration {
		if i < len(p.perCell) {
			return p.perCell[i]
		}
		return 0
	}
	if len(p.took) < MeasuredAfter {
		var left time.Duration
		for i := p.index; i < len(p.cells); i++ {
			if estimate(i) <= 0 {
				return 0, false
			}
			left += estimate(i)
		}
		return left, false
	}
	type sum struct {
		d time.Duration
		n int
	}
	add := func(s sum, d time.Duration) sum { return sum{s.d + d, s.n + 1} }
	mean := func(s sum) time.Duration { return s.d / time.Duration(s.n) }
	shapeOf := func(c scenario.Cell) [2]string { return [2]string{c.Backend, c.PointName} }
	byShape, byPoint := map[[2]string]sum{}, map[string]sum{}
	var all sum
	var planned, plannedTook time.Duration // of the finished cells with an estimate
	for i, d := range p.took {
		c := p.cells[i]
		byShape[shapeOf(c)] = add(byShape[shapeOf(c)], d)
		byPoint[c.PointName] = add(byPoint[c.PointName], d)
		all = add(all, d)
		if e := estimate(i); e > 0 {
			planned, plannedTook = planned+e, plannedTook+d
		}
	}
	var left time.Duration
	for i := p.index; i < len(p.cells); i++ {
		c := p.cells[i]
		switch shape, point := byShape[shapeOf(c)], byPoint[c.PointName]; {
		case shape.n > 0:
			left += mean(shape)
		case point.n > 0:
			left += mean(point)
		case estimate(i) > 0 && planned > 0:
			left += time.Duration(float64(estimate(i)) * float64(plannedTook) / float64(planned))
		default:
			left += mean(all)
		}
	}
	return left, true
}

// say writes a line of its own above the status line.
func (p *progress) say(text string) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.line != "" {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(p.w, text)
	if p.line != "" {
		fmt.Fprint(p.w, p.line)
	}
}

func (p *progress) warn(note string) { p.say("warning: " + note) }

// warner is warn for a backend (backend.Env.Warn); nil without a terminal, where a backend warns
// on standard error.
func (p *progress) warner() func(string) {
	if p.w == nil {
		return nil
	}
	return p.warn
}

func (p *progress) done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Duration(0)
	if p.index > 0 {
		elapsed = p.now().Sub(p.t0).Round(time.Second)
	}
	fmt.Fprintf(p.w, "\r\033[K%d cells in %s\n", p.index, elapsed)
	p.line = ""
}
