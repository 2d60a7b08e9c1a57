package runner

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/scenario"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func withClock(p *progress) *fakeClock {
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p.now = clock.now
	return clock
}

func cellsOf(shapes ...string) []scenario.Cell {
	var cells []scenario.Cell
	for i, s := range shapes {
		backend, point, _ := strings.Cut(s, " ")
		cells = append(cells, scenario.Cell{Index: i, Backend: backend, PointName: point, Repeat: 1})
	}
	return cells
}

func TestProgressShowsCellElapsedAndETA(t *testing.T) {
	var buf bytes.Buffer
	cells := cellsOf("gcsfuse vus=2", "gcsfuse vus=4", "gcsfuse vus=8")
	p := newProgress(&buf, cells, nil, 0)
	clock := withClock(p)
	p.start(cells[0])
	clock.advance(75 * time.Second)
	p.start(cells[1])
	p.done()
	out := buf.String()
	for _, want := range []string{"cell 1/3", "gcsfuse vus=2 run 1", "eta ?", "cell 2/3  gcsfuse vus=4 run 1  elapsed 1m15s", "2 cells in 1m15s"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress %q lacks %q", out, want)
		}
	}
	// A plan that sweeps nothing: one space between the backend and the repeat.
	buf.Reset()
	p = newProgress(&buf, cellsOf("local"), nil, 0)
	p.start(scenario.Cell{Backend: "local", Repeat: 1})
	if out := buf.String(); !strings.Contains(out, "cell 1/1  local run 1  elapsed") {
		t.Errorf("progress %q", out)
	}
	quiet := newProgress(nil, cells, nil, 0)
	quiet.start(scenario.Cell{})
	quiet.warn("nobody hears this")
	quiet.done() // must not panic or print anywhere
}

// etaOf is the ETA the last status line in out shows.
func etaOf(out string) string {
	i := strings.LastIndex(out, "eta ")
	if i < 0 {
		return ""
	}
	return out[i+len("eta "):]
}

// Until MeasuredAfter cells have finished, the ETA is the plan's estimate of the cells left,
// marked as one; with a cell of unknown length, or no estimate, "?".
func TestProgressETAIsTheEstimateUntilAFewCellsHaveRun(t *testing.T) {
	var buf bytes.Buffer
	cells := cellsOf("local a", "local b", "local c", "local d")
	p := newProgress(&buf, cells, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}, 0)
	clock := withClock(p)
	for i, want := range []string{"about 1m30s (estimate)", "about 1m20s (estimate)", "about 1m0s (estimate)"} {
		p.start(cells[i])
		if got := etaOf(buf.String()); got != want {
			t.Errorf("cell %d: eta %q, want %q", i+1, got, want)
		}
		clock.advance(time.Minute)
	}
	buf.Reset()
	p = newProgress(&buf, cells, []time.Duration{10 * time.Second, 0, 30 * time.Second, 30 * time.Second}, 0)
	p.start(cells[0])
	if got := etaOf(buf.String()); got != "?" {
		t.Errorf("a cell of unknown length: eta %q", got)
	}
}

// Once MeasuredAfter cells have finished, the ETA is measured: each cell left counts the mean of
// the finished cells of its backend and point; else of its point; else its estimate scaled by
// the finished cells' measured-to-estimated ratio; else the mean of every finished cell.
func TestProgressETAIsMeasuredFromFinishedCells(t *testing.T) {
	var buf bytes.Buffer
	cells := cellsOf("a small", "a big", "a huge", "b small", "b big", "b huge", "b other", "a small", "b small")
	s := time.Second
	estimates := []time.Duration{10 * s, 20 * s, 40 * s, 10 * s, 20 * s, 40 * s, 30 * s, 10 * s, 10 * s}
	p := newProgress(&buf, cells, estimates, 0)
	clock := withClock(p)
	for i, took := range []time.Duration{2 * s, 60 * s, 78 * s} {
		p.start(cells[i])
		clock.advance(took)
	}
	// Finished: a small 2 s, a big 60 s, a huge 78 s; 140 s for 70 s estimated, 2x.
	p.start(cells[3])
	// b small 2 (its point) + b big 60 + b huge 78 + b other 30x2 + a small 2 (its own) + b small 2
	if got, want := etaOf(buf.String()), (204 * s).String(); got != want {
		t.Errorf("after 3 cells: eta %q, want %q", got, want)
	}
	if !strings.Contains(buf.String(), "cell 4/9  b small run 1  elapsed 2m20s") {
		t.Errorf("progress %q", buf.String())
	}
	clock.advance(4 * s) // b small took 4 s: 144 s for 80 s estimated, 1.8x
	p.start(cells[4])
	// b big 60 + b huge 78 + b other 30x1.8 + a small 2 (its own, not its point's 3) + b small 4
	if got, want := etaOf(buf.String()), (198 * s).String(); got != want {
		t.Errorf("after 4 cells: eta %q, want %q", got, want)
	}
	// Without an estimate, a point none has run counts the mean of every finished cell.
	buf.Reset()
	cells = cellsOf("a x", "a x", "a y", "a z")
	p = newProgress(&buf, cells, nil, 0)
	clock = withClock(p)
	for i, took := range []time.Duration{10 * s, 20 * s, 60 * s} {
		p.start(cells[i])
		clock.advance(took)
	}
	p.start(cells[3])
	if got, want := etaOf(buf.String()), (30 * s).String(); got != want {
		t.Errorf("no estimate: eta %q, want %q (the mean of 10, 20 and 60 s)", got, want)
	}
}

// screen is what a terminal shows after out: '\r' returns to the line's start, ESC [K erases to
// its end, '\n' starts a new line, any other byte is written at the cursor.
func screen(out string) []string {
	lines, col := []string{""}, 0
	for i := 0; i < len(out); i++ {
		last := len(lines) - 1
		switch {
		case out[i] == '\r':
			col = 0
		case out[i] == '\n':
			lines, col = append(lines, ""), 0
		case strings.HasPrefix(out[i:], "\033[K"):
			lines[last] = lines[last][:col]
			i += len("\033[K") - 1
		default:
			line := lines[last]
			if col < len(line) {
				lines[last] = line[:col] + out[i:i+1] + line[col+1:]
			} else {
				lines[last] = line + out[i:i+1]
			}
			col++
		}
	}
	return lines
}

// A warning during a cell takes a line of its own, never the end of the progress line, and the
// progress line comes back under it, no wider than the terminal.
func TestWarningDuringProgressTakesALineOfItsOwn(t *testing.T) {
	var term bytes.Buffer
	p := newProgress(&term, cellsOf("gcsfuse", "gcsfuse", "gcsfuse"), nil, 40)
	p.start(scenario.Cell{Backend: "gcsfuse", Repeat: 1})
	p.warn("the disk is nearly full")
	shown := screen(term.String())
	if len(shown) != 2 || shown[0] != "warning: the disk is nearly full" || !strings.HasPrefix(shown[1], "cell 1/3  gcsfuse run 1") {
		t.Errorf("the terminal shows %q", shown)
	}
	// A progress line as wide as the terminal would wrap, and returning to its start would clear
	// only its last row: it is cut to fit.
	if n := len(shown[1]); n >= 40 {
		t.Errorf("a progress line of %d characters on a terminal of 40: %q", n, shown[1])
	}
	p.start(scenario.Cell{Backend: "gcsfuse", Repeat: 2})
	p.warn("again")
	p.done()
	shown = screen(term.String())
	want := []string{"warning: the disk is nearly full", "warning: again"}
	if len(shown) != 4 || shown[0] != want[0] || shown[1] != want[1] || !strings.HasPrefix(shown[2], "2 cells in") || shown[3] != "" {
		t.Errorf("the terminal shows %q", shown)
	}
}

// fakeWarned warns through its environment as it starts, as the volume backend does of a disk
// too small for its image.
type fakeWarned struct{ fakeBackend }

func (b *fakeWarned) Start(ctx context.Context) (backend.Target, error) {
	if b.env.Warn == nil {
		record("warned on standard error")
	} else {
		b.env.Warn("the fake disk is nearly full")
	}
	return b.fakeBackend.Start(ctx)
}

func init() {
	backend.RegisterInfo(backend.Info{Name: "fakewarned", New: func(env backend.Env) (backend.Backend, error) {
		return &fakeWarned{fakeBackend{env: env}}, nil
	}})
}

// A backend's warning in the middle of a run reaches the terminal through the progress line:
// on lines of their own, one per cell.
func TestBackendWarningsDuringARunTakeLinesOfTheirOwn(t *testing.T) {
	spec := fakeSpec("1,2", scenario.BackendSpec{Name: "fakewarned"})
	spec.Repeat = 1
	plan, err := scenario.NewPlan(spec, Known())
	if err != nil {
		t.Fatal(err)
	}
	takeLedger()
	var term bytes.Buffer
	work := t.TempDir()
	if _, err := RunPlan(context.Background(), plan, Options{Out: filepath.Join(work, "r.json"), WorkDir: filepath.Join(work, "w"), Progress: &term}); err != nil {
		t.Fatal(err)
	}
	if log := takeLedger(); count(log, "warned on standard error") > 0 {
		t.Errorf("the backend had no way to warn on the terminal: %v", log)
	}
	warnings := 0
	for _, line := range screen(term.String()) {
		if strings.Contains(line, "warning") {
			warnings++
			if line != "warning: the fake disk is nearly full" {
				t.Errorf("a warning shares its line: %q", line)
			}
		}
	}
	if warnings != 2 {
		t.Errorf("%d warnings on the terminal, want one per cell:\n%q", warnings, term.String())
	}
}
