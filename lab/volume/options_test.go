package volume

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Every number and duration option is finite and bounded: the error names the option, the value
// and the range. (credit_scale Inf once hung I/O and lost a run's results to JSON's +Inf; a
// latency of 10 s held a Ctrl-C for 46 s.)
func TestOptionsAreBoundedAndSayHow(t *testing.T) {
	base := map[string]string{"type": "gp3", "size": "100GiB"}
	for _, tc := range []struct {
		option, value string
		want          []string
	}{
		{"credit_scale", "Inf", []string{"0.000000001 to 1000"}},
		{"credit_scale", "+Inf", []string{"0.000000001 to 1000"}},
		{"credit_scale", "-Inf", nil},
		{"credit_scale", "NaN", nil},
		{"credit_scale", "1e308", []string{"0.000000001 to 1000"}},
		{"credit_scale", "1001", nil},
		{"credit_scale", "1e-12", nil},
		{"credit_scale", "0", nil},
		{"credit_scale", "-1", nil},
		{"iops", "Inf", []string{"1 to 64000"}},
		{"iops", "NaN", nil},
		{"iops", "1e308", nil},
		{"iops", "0", nil},
		{"throughput", "Inf", []string{"1 to 1000"}},
		{"throughput", "NaN", nil},
		{"latency", "10s", []string{"1ns to 1s"}},
		{"latency", "1000h", nil},
		{"latency", "1001ms", nil},
		{"latency", "0", nil},
		{"latency", "-1ms", nil},
		{"merge_window", "1000h", []string{"0s to 10s"}},
		{"merge_window", "11s", nil},
		{"merge_window", "-1ms", nil},
	} {
		opts := map[string]string{tc.option: tc.value}
		for k, v := range base {
			opts[k] = v
		}
		_, err := ConfigFromOptions(opts)
		for _, w := range append([]string{tc.option + ": ", `"` + tc.value + `"`}, tc.want...) {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s: %v, want it to say %q", tc.option, tc.value, err, w)
			}
		}
	}
	for _, opts := range []map[string]string{
		{"type": "gp2", "size": "100GiB", "credit_scale": "0.0000002"},
		{"type": "gp2", "size": "100GiB", "credit_scale": "1000"},
		{"type": "gp2", "size": "100GiB", "latency": "1s", "merge_window": "10s"},
		{"type": "st1", "size": "500GiB", "merge_window": "0"},
		{"type": "gp3", "size": "100GiB", "iops": "16000", "throughput": "1000"},
	} {
		if _, err := ConfigFromOptions(opts); err != nil {
			t.Errorf("%v: %v", opts, err)
		}
	}
}

// A spec made in code is held to the same bounds: NaN passes every comparison, Inf overflows.
func TestSpecsAreBounded(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Type: "io1", SizeBytes: 100 * gib, ProvisionedIOPS: math.NaN()}, "iops NaN"},
		{Spec{Type: "gp3", SizeBytes: 100 * gib, ProvisionedMiBps: math.Inf(1)}, "throughput +Inf"},
		{Spec{Type: "gp2", SizeBytes: 100 * gib, CreditScale: math.Inf(1)}, "credit_scale +Inf"},
		{Spec{Type: "gp2", SizeBytes: 100 * gib, CreditScale: 1e308}, "credit_scale 1e+308"},
		{Spec{Type: "gp2", SizeBytes: 100 * gib, ServiceTime: 2 * time.Second}, "latency 2s"},
		{Spec{Type: "gp2", SizeBytes: 100 * gib, MergeWindow: time.Hour}, "merge_window 1h0m0s"},
	} {
		if err := tc.spec.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want it to say %q", tc.spec, err, tc.want)
		}
		if _, err := New(tc.spec, time.Now); err == nil {
			t.Errorf("%+v: a model made", tc.spec)
		}
	}
}

// Option model is a switch, read as its declaration reads booleans: off and false alike.
func TestModelIsASwitch(t *testing.T) {
	for v, off := range map[string]bool{"on": false, "true": false, "off": true, "false": true, "0": true} {
		cfg, err := ConfigFromOptions(map[string]string{"type": "gp2", "size": "100GiB", "model": v})
		if err != nil || cfg.Off != off {
			t.Errorf("model %s: off %v, %v; want off %v", v, cfg.Off, err, off)
		}
	}
}
