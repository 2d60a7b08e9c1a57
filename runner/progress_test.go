package runner

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/scenario"
)

func TestProgressShowsCellElapsedAndETA(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 3, 0, 0)
	p.start(scenario.Cell{Backend: "gcsfuse", PointName: "vus=2", Repeat: 1})
	p.start(scenario.Cell{Backend: "gcsfuse", PointName: "vus=4", Repeat: 1})
	p.done()
	out := buf.String()
	for _, want := range []string{"cell 1/3", "gcsfuse vus=2 run 1", "eta ?", "cell 2/3", "elapsed", "2 cells in"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress %q lacks %q", out, want)
		}
	}
	// The second cell's ETA is known, whatever it is (a busy machine makes it longer).
	if !regexp.MustCompile(`cell 2/3[^\n]*eta \d`).MatchString(out) {
		t.Errorf("progress %q: the second cell has no ETA", out)
	}
	// A plan that sweeps nothing: one space between the backend and the repeat.
	buf.Reset()
	p = newProgress(&buf, 1, 0, 0)
	p.start(scenario.Cell{Backend: "local", Repeat: 1})
	if out := buf.String(); !strings.Contains(out, "cell 1/1  local run 1  elapsed") {
		t.Errorf("progress %q", out)
	}
	quiet := newProgress(nil, 3, 0, 0)
	quiet.start(scenario.Cell{})
	quiet.warn("nobody hears this")
	quiet.done() // must not panic or print anywhere
}

// Before any cell has finished, the ETA is the plan's estimate, marked as one; after, it is
// measured.
func TestProgressETAIsTheEstimateUntilACellHasRun(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 2, 90*time.Second, 0)
	p.start(scenario.Cell{Backend: "local", Repeat: 1})
	if out := buf.String(); !strings.Contains(out, "eta about 1m30s (estimate)") {
		t.Errorf("first cell: %q", out)
	}
	buf.Reset()
	p.start(scenario.Cell{Backend: "local", Repeat: 2})
	if out := buf.String(); strings.Contains(out, "estimate") || !regexp.MustCompile(`eta \d`).MatchString(out) {
		t.Errorf("second cell: %q", out)
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
	p := newProgress(&term, 3, 0, 40)
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
