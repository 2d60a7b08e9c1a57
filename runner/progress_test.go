package runner

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/scenario"
)

func TestProgressShowsCellElapsedAndETA(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 3)
	p.start(scenario.Cell{Backend: "gcsfuse", VUs: 2, Repeat: 1})
	p.start(scenario.Cell{Backend: "gcsfuse", VUs: 4, Repeat: 1})
	p.done()
	out := buf.String()
	for _, want := range []string{"cell 1/3", "gcsfuse vus=2 run 1", "eta ?", "cell 2/3", "elapsed", "eta 0s", "2 cells in"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress %q lacks %q", out, want)
		}
	}
	quiet := newProgress(nil, 3)
	quiet.start(scenario.Cell{})
	quiet.done() // must not panic or print anywhere
}
