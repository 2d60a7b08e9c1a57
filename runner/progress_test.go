package runner

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"persistlab/scenario"
)

func TestProgressShowsCellElapsedAndETA(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 3)
	sweep := scenario.Sweep{{Name: "vus"}}
	p.start(scenario.Cell{Backend: "gcsfuse", Params: map[string]string{"vus": "2"}, Repeat: 1}, sweep)
	p.start(scenario.Cell{Backend: "gcsfuse", Params: map[string]string{"vus": "4"}, Repeat: 1}, sweep)
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
	p = newProgress(&buf, 1)
	p.start(scenario.Cell{Backend: "local", Repeat: 1}, nil)
	if out := buf.String(); !strings.Contains(out, "cell 1/1  local run 1  elapsed") {
		t.Errorf("progress %q", out)
	}
	quiet := newProgress(nil, 3)
	quiet.start(scenario.Cell{}, nil)
	quiet.done() // must not panic or print anywhere
}
