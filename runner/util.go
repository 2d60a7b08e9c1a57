package runner

import (
	"fmt"
	"io"
	"time"

	"persistlab/scenario"
)

// progress prints "cell i/n, elapsed, ETA" lines; it is silent when given no writer.
type progress struct {
	w     io.Writer
	total int
	index int
	t0    time.Time
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: total, t0: time.Now()}
}

func (p *progress) start(c scenario.Cell, sweep scenario.Sweep) {
	if p.w == nil {
		return
	}
	elapsed := time.Since(p.t0).Round(time.Second)
	eta := "?"
	if p.index > 0 {
		eta = (elapsed / time.Duration(p.index) * time.Duration(p.total-p.index)).Round(time.Second).String()
	}
	p.index++
	fmt.Fprintf(p.w, "\r\033[Kcell %d/%d  %s  elapsed %s  eta %s", p.index, p.total, scenario.Label(c.Backend, c.Point(sweep), fmt.Sprintf("run %d", c.Repeat)), elapsed, eta)
}

func (p *progress) done() {
	if p.w != nil {
		fmt.Fprintf(p.w, "\r\033[K%d cells in %s\n", p.index, time.Since(p.t0).Round(time.Second))
	}
}
