package scenario

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestThresholdsReadAsK6Writes(t *testing.T) {
	units := map[string]string{"p95_ms": "ms", "rate": "requests/s", "app_cpu_util": "share", "ok": "count", "errors": "count", "write_lat_p99.9_ms": "ms"}
	for _, tc := range []struct {
		text, metric, op string
		value            float64
		crash            bool
	}{
		{"p95_ms < 200ms", "p95_ms", "<", 200, false},
		{"p95 < 0.2s", "p95_ms", "<", 200, false}, // k6's p(95): the latency's
		{"p95_ms<=1_000", "p95_ms", "<=", 1000, false},
		{"p95 < 1_000ms", "p95_ms", "<", 1000, false},
		{"error_rate < 1%", "error_rate", "<", 0.01, false},
		{"error_rate < 0.01", "error_rate", "<", 0.01, false},
		{"app_cpu_util >= 50%", "app_cpu_util", ">=", 0.5, false},
		{"rate > 1e2", "rate", ">", 100, false},
		{"usd_per_month[S3] != 20", "usd_per_month", "!=", 20, false},
		{"lost_acked == 0", "lost_acked", "==", 0, true},
		{"recovery_ms < 2s", "recovery_ms", "<", 2000, true},
		{"write_lat_p99.9_ms < 50ms", "write_lat_p99.9_ms", "<", 50, false},
	} {
		th, err := ParseThreshold(tc.text)
		if err == nil {
			err = th.Resolve("thresholds[0]", units, tc.crash)
		}
		if err != nil || th.Metric != tc.metric || th.Op != tc.op || th.Value != tc.value {
			t.Errorf("%q = %+v, %v; want %s %s %v", tc.text, th, err, tc.metric, tc.op, tc.value)
		}
		again := th
		if err := again.Resolve("thresholds[0]", units, tc.crash); err != nil || again.Value != th.Value {
			t.Errorf("%q resolved twice: %v, %v", tc.text, again.Value, err) // Validate runs twice per run
		}
	}
	for _, tc := range []struct {
		text  string
		crash bool
		want  string
	}{
		{"p95_ms < 200GB", false, "METRIC OP VALUE"},
		{"p95_ms ~ 200", false, "METRIC OP VALUE"},
		{"p95_ms < ", false, "METRIC OP VALUE"},
		{"p95_ms < 1e999", false, "finite"},
		{"speed < 3", false, "p95_ms"},
		{"lost_acked == 0", false, "--crash"},
		{"p95_ms < 200ms", true, "crash run"},
		{"rate < 2ms", false, "requests/s, not a duration"},
		{"ok < 5%", false, "count, not a share"},
		{"rate[S3] < 5", false, "usd_per_month"},
	} {
		th, err := ParseThreshold(tc.text)
		if err == nil {
			err = th.Resolve("thresholds[3]", units, tc.crash)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want one mentioning %q", tc.text, err, tc.want)
		}
	}
}

func TestThresholdOperators(t *testing.T) {
	for _, tc := range []struct {
		op               string
		below, at, above bool
	}{{"<", true, false, false}, {"<=", true, true, false}, {">", false, false, true}, {">=", false, true, true},
		{"==", false, true, false}, {"!=", true, false, true}} {
		th := Threshold{Op: tc.op, Value: 10}
		if th.Holds(9) != tc.below || th.Holds(10) != tc.at || th.Holds(11) != tc.above {
			t.Errorf("%s 10: holds for 9, 10, 11 = %v %v %v", tc.op, th.Holds(9), th.Holds(10), th.Holds(11))
		}
	}
}

func TestScenarioThresholdsAreCheckedBeforeTheRun(t *testing.T) {
	const base = "name: t\nworkload: {type: counter}\nbackends: [{name: local}]\nduration: 1s\nrepeat: 1\n"
	s, err := Parse([]byte(base+"thresholds: [\"p95 < 200ms\", \"error_rate < 1%\"]\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := known
	k.Metrics = map[string]map[string]string{"counter": {"p95_ms": "ms", "ok": "count", "errors": "count"}}
	k.PriceLists = []string{"GCS", "S3"}
	if err := s.Validate(k); err != nil {
		t.Fatal(err)
	}
	if s.Thresholds[0].Value != 200 || s.Thresholds[1].Value != 0.01 {
		t.Errorf("thresholds %+v", s.Thresholds)
	}
	data, err := json.Marshal(s.Thresholds)
	if err != nil || string(data) != `["p95 \u003c 200ms","error_rate \u003c 1%"]` {
		t.Errorf("as written in results: %s, %v", data, err)
	}
	if err := s.Apply(Overrides{Thresholds: []string{"p99 < 1s"}}); err != nil || len(s.Thresholds) != 3 {
		t.Errorf("--threshold: %v, %+v", err, s.Thresholds)
	}
	if err := s.Validate(k); err == nil || !strings.Contains(err.Error(), "thresholds[2]") {
		t.Errorf("a metric the workload lacks: %v", err)
	}
	if err := s.Apply(Overrides{Thresholds: []string{"p99 < 1e999"}}); err == nil || !strings.Contains(err.Error(), "--threshold") || !strings.Contains(err.Error(), "finite") {
		t.Errorf("a malformed --threshold: %v", err)
	}
	for _, tc := range []struct{ threshold, want string }{
		{"usd_per_month[Azure] < 5", "GCS, S3"},
		{"error_rate < 1%", "counts its requests"},
	} {
		s, _ := Parse([]byte(base+"thresholds: [\""+tc.threshold+"\"]\n"), "t.yaml")
		k2 := k
		if tc.want == "counts its requests" {
			k2.Metrics = map[string]map[string]string{"counter": {"read_mib_s": "MiB/s"}}
		}
		if err := s.Validate(k2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want one naming %q", tc.threshold, err, tc.want)
		}
	}
	if _, err := Parse([]byte(base+"thresholds: {p95: 200}\n"), "t.yaml"); err == nil || !strings.Contains(err.Error(), "thresholds") {
		t.Errorf("a mapping: %v", err)
	}
}
