package httpload

import (
	"math"
	"testing"
	"time"

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
