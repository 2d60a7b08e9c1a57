package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"persistlab/cost"
	"persistlab/results"
	"persistlab/scenario"
)

// The operations a price rests on: the class that sets it, and nothing where nothing was counted.
func TestPricedOpsFollowThePrice(t *testing.T) {
	for _, c := range []struct{ a, b, want float64 }{
		{9, 0, 9}, {0, 1000, 1000}, {0, 0, 0}, {45, 135, 67.9},
		// 3 class A and 12 class B: (3·5 + 12·0.4)² / (3·25 + 12·0.16) = 392 / 76.9
		{3, 12, 5.1},
	} {
		if got := pricedOps(cost.DefaultPrices, c.a, c.b); math.Abs(got-c.want) > 0.05 {
			t.Errorf("pricedOps(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// A crash row whose runs counted a handful of uploads is marked, not priced.
func TestThinCrashRowsAreNotPriced(t *testing.T) {
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("gcsfuse")}
	for i := 1; i <= 3; i++ {
		r.Crashes = append(r.Crashes, results.CrashRun{Cell: scenario.Cell{Backend: "gcsfuse", Params: map[string]string{"vus": "4"}, Repeat: i},
			MaxAcked: 100, Recovered: 100, LoadS: 2, OKBeforeKill: 100, Integrity: "ok",
			BackendStats: map[string]float64{"bucket_class_a": 3, "bucket_class_b": 12}})
	}
	Summarize(r)
	if s := r.CrashSummaries[0]; !s.TooFewToPrice || len(s.Costs) != 0 || s.ClassAOps != 3 {
		t.Errorf("crash summary %+v", s)
	}
	var out bytes.Buffer
	writeCrashTable(&out, r)
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"1.50 * * 3 class A, 12 class B in the median crash run", "* not priced: gcsfuse vus=4 counts too few"} {
		if !strings.Contains(flat, want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
