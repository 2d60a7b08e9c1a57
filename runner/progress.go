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
	mu       sync.Mutex
	w        io.Writer
	total    int
	index    int
	t0       time.Time     // when the first cell started
	estimate time.Duration // the plan's estimate, the ETA until a cell has finished; 0: unknown
	line     string        // the status line on the terminal now, "" when none
	width    int           // the terminal's width; 0: unknown
}

func newProgress(w io.Writer, total int, estimate time.Duration, width int) *progress {
	return &progress{w: w, total: total, estimate: estimate, width: width}
}

func (p *progress) start(c scenario.Cell) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.index == 0 {
		p.t0 = time.Now()
	}
	elapsed := time.Since(p.t0).Round(time.Second)
	eta := "?"
	switch {
	case p.index > 0: // measured: the cells so far, start-up and all
		eta = (elapsed / time.Duration(p.index) * time.Duration(p.total-p.index)).Round(time.Second).String()
	case p.estimate > 0:
		eta = "about " + p.estimate.Round(time.Second).String() + " (estimate)"
	}
	p.index++
	p.line = fmt.Sprintf("cell %d/%d  %s  elapsed %s  eta %s", p.index, p.total, scenario.Label(c.Backend, c.PointName, fmt.Sprintf("run %d", c.Repeat)), elapsed, eta)
	if r := []rune(p.line); p.width > 1 && len(r) >= p.width { // the last column would wrap on some terminals
		p.line = string(r[:p.width-1])
	}
	fmt.Fprint(p.w, "\r\033[K"+p.line)
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
		elapsed = time.Since(p.t0).Round(time.Second)
	}
	fmt.Fprintf(p.w, "\r\033[K%d cells in %s\n", p.index, elapsed)
	p.line = ""
}
