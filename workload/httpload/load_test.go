package httpload

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"persistlab/param"
	"persistlab/workload"
)

// Two instances' figures join as one cell's: the highest acknowledged count, not the sum, and the
// app's CPU share over the cell (each instance's share is of the same CPUs, so they add up over
// the time each ran).
func TestJoinInstanceFiguresKeepsTheHighestAckAndTheCellsCPUShare(t *testing.T) {
	part := func(acked, util float64, elapsed time.Duration) *workload.Result {
		r := workload.NewResult()
		r.Elapsed = elapsed
		r.Metrics["max_acked"], r.Metrics["app_cpu_util"], r.Metrics["ok"] = acked, util, acked
		return r
	}
	parts := []*workload.Result{part(100, 0.4, 2*time.Second), part(250, 0.3, time.Second)}
	merged := workload.Merge(parts)
	JoinInstanceFigures(merged, parts)
	if got := merged.Metrics["max_acked"]; got != 250 {
		t.Errorf("max_acked %v, want the highest, 250", got)
	}
	if got := merged.Metrics["app_cpu_util"]; math.Abs(got-(0.4*2+0.3*1)/2) > 1e-9 {
		t.Errorf("app_cpu_util %v, want 0.55", got)
	}
	if merged.Metrics["ok"] != 350 {
		t.Errorf("ok %v, want the sum", merged.Metrics["ok"])
	}
}

// Instances sharing a backend split the VUs to the last one and the rate evenly: no instance has
// two VUs more than another.
func TestSplitSharesEveryVUAndTheRate(t *testing.T) {
	for vus := 1; vus <= 12; vus++ {
		for of := 1; of <= vus; of++ {
			sumVUs, sumRate, least, most := 0, 0.0, vus, 0
			for i := range of {
				v, r := Split(vus, 30, workload.Share{Index: i, Of: of})
				sumVUs, sumRate = sumVUs+v, sumRate+r
				least, most = min(least, v), max(most, v)
			}
			if sumVUs != vus || math.Abs(sumRate-30) > 1e-9 || most-least > 1 {
				t.Errorf("%d VUs over %d instances: %d VUs (from %d to %d each) and %v requests/s in all", vus, of, sumVUs, least, most, sumRate)
			}
		}
	}
}

func TestCheckRateNamesTheRateForTheWrongLoop(t *testing.T) {
	for _, c := range []struct {
		mode    string
		rate    float64
		refused bool
	}{{ModeOpen, 0, true}, {ModeOpen, 5, false}, {ModeClosed, 5, true}, {ModeClosed, 0, false}} {
		err := CheckRate(c.mode, c.rate, strconv.FormatFloat(c.rate, 'g', -1, 64))
		var fe *param.FieldError
		if refused := errors.As(err, &fe); refused != c.refused || (refused && (fe.Field != "workload.rate" || fe.Allowed == "")) {
			t.Errorf("%s loop at %v requests/s: %v", c.mode, c.rate, err)
		}
	}
}
