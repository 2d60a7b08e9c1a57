package report

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/results"
	"persistlab/scenario"
)

func TestThresholdsJudgeEveryRowAsItsTableShowsIt(t *testing.T) {
	r := &results.Results{
		Scenario: &scenario.Spec{Name: "t", Repeat: 1, Thresholds: thresholds(t, "p95 < 200ms", "error_rate < 1%", "usd_per_month[S3] < 20", "rate > 0")},
		Units:    map[string]string{"p95_ms": "ms", "rate": "requests/s", "ok": "count", "errors": "count"},
		Aggregates: []results.Aggregate{
			{Backend: "local", Point: "vus=2", Median: map[string]float64{"p95_ms": 12, "rate": 100}, Total: map[string]float64{"ok": 1000, "errors": 0}},
			{Backend: "gcsfuse", Point: "vus=2", Median: map[string]float64{"p95_ms": 250, "rate": 80}, Total: map[string]float64{"ok": 990, "errors": 10},
				Bucket: &results.BucketUse{Costs: []results.Cost{{Prices: "GCS", USDPerMonth: 30}, {Prices: "S3", USDPerMonth: 19}}}},
		},
	}
	js := Judge(r)
	if len(js) != 4 {
		t.Fatalf("%d judgements", len(js))
	}
	p95, errRate, cost, rate := js[0], js[1], js[2], js[3]
	if p95.Held != 1 || len(p95.Crossed) != 1 || !strings.HasPrefix(p95.Crossed[0], "gcsfuse vus=2: 250 ms") || !p95.Failed() {
		t.Errorf("p95: %+v", p95)
	}
	// 10 of 1,000 requests failed: 1.0%, not below 1%.
	if errRate.Held != 1 || len(errRate.Crossed) != 1 || !strings.Contains(errRate.Crossed[0], "1.00%") {
		t.Errorf("error_rate: %+v", errRate)
	}
	// local wrote no bucket: its cost is not judged, never taken as $0.
	if cost.Held != 1 || len(cost.Crossed) != 0 || len(cost.Unjudged) != 1 || cost.Unjudged[0] != "local vus=2" || cost.Failed() {
		t.Errorf("usd_per_month[S3]: %+v", cost)
	}
	if rate.Held != 2 || rate.Failed() {
		t.Errorf("rate: %+v", rate)
	}
	_, crossed := Verdict(r)
	if len(crossed) != 2 || !strings.HasPrefix(crossed[0], "p95 < 200ms: crossed in gcsfuse") || !strings.HasPrefix(crossed[1], "error_rate < 1%") {
		t.Errorf("verdict %q", crossed)
	}
	var out bytes.Buffer
	writeThresholds(&out, r)
	for _, want := range []string{"p95 < 200ms", "CROSSED", "1 of 2", "local vus=2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestAThresholdNoRowCouldJudgeFailsTheRun(t *testing.T) {
	r := &results.Results{
		Scenario:   &scenario.Spec{Name: "t", Repeat: 1, Thresholds: thresholds(t, "usd_per_month < 20")},
		Aggregates: []results.Aggregate{{Backend: "local", Point: "vus=2", Median: map[string]float64{}, Total: map[string]float64{}}},
	}
	if _, crossed := Verdict(r); len(crossed) != 1 || !strings.Contains(crossed[0], "no row measured it") {
		t.Errorf("verdict %q", crossed)
	}
	r.Aggregates = nil // every cell failed
	if _, crossed := Verdict(r); len(crossed) != 1 {
		t.Errorf("no rows: verdict %q", crossed)
	}
}

func TestCrashThresholdsReadTheCrashRows(t *testing.T) {
	r := &results.Results{
		Scenario: &scenario.Spec{Name: "t", Repeat: 1, Crash: &scenario.Crash{Count: 2},
			Thresholds: thresholds(t, "lost_acked == 0", "integrity_failures == 0", "recovery_ms < 2s")},
		CrashSummaries: []results.CrashSummary{
			{Backend: "gcsfuse", Point: "vus=2", Runs: 2, LostMax: 3, RecoveryMedianMs: 500, IntegrityChecked: 2},
			{Backend: "litestream", Point: "vus=2", Runs: 2, LostMax: 0, RecoveryMedianMs: 2500},
		},
	}
	js := Judge(r)
	if lost := js[0]; lost.Held != 1 || len(lost.Crossed) != 1 || lost.Crossed[0] != "gcsfuse vus=2: 3" {
		t.Errorf("lost_acked: %+v", lost)
	}
	if integrity := js[1]; integrity.Held != 1 || len(integrity.Unjudged) != 1 || integrity.Failed() {
		t.Errorf("integrity_failures: %+v", integrity)
	}
	if recovery := js[2]; recovery.Held != 1 || len(recovery.Crossed) != 1 || !strings.Contains(recovery.Crossed[0], "2500 ms") {
		t.Errorf("recovery_ms: %+v", recovery)
	}
}
