package httpapp

import (
	"errors"
	"testing"
	"time"

	"persistlab/param"
	"persistlab/workload"
)

// k6 refuses a run under 1 s: with a k6 script, a shorter duration or warm-up is refused before
// the first cell, naming the field; persistlab's own driver takes any.
func TestK6ScriptsRefuseSubSecondRuns(t *testing.T) {
	w := &Workload{}
	script := workload.Params{"k6_script": "/s.js"}
	for _, c := range []struct {
		p                workload.Params
		duration, warmup time.Duration
		field            string
	}{
		{script, 500 * time.Millisecond, 0, "duration"},
		{script, 2 * time.Second, 500 * time.Millisecond, "warmup"},
		{script, time.Second, 0, ""},
		{script, 2 * time.Second, time.Second, ""},
		{workload.Params{}, 100 * time.Millisecond, 100 * time.Millisecond, ""},
	} {
		err := w.CheckDurations(c.p, c.duration, c.warmup)
		var fe *param.FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%v %v %v: %v", c.p, c.duration, c.warmup, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%v %v %v: %v, want a refusal of %s", c.p, c.duration, c.warmup, err, c.field)
		}
	}
}
