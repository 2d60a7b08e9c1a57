package instance

import (
	"strings"
	"testing"
	"time"
)

// The quota is effective_cpus / cpu_factor per 5 ms, a longer period where the quota is too small
// for the kernel's 1 ms least quota in 5 ms; nothing for a target no slower than this machine; a
// quota the runner cannot give is refused, naming both figures.
func TestEmulationOf(t *testing.T) {
	for _, c := range []struct {
		factor, cpus string
		quota        float64
		period       time.Duration
		none         string
	}{
		{"4", "1", 0.25, 5 * time.Millisecond, ""},
		{"2", "0.5", 0.25, 5 * time.Millisecond, ""},
		{"3", "2", 0.6667, 5 * time.Millisecond, ""},
		{"1.5", "3", 2, 5 * time.Millisecond, ""},
		{"8", "1", 0.125, 8 * time.Millisecond, ""}, // 1 ms of quota holds in 8 ms
		{"40", "0.5", 0.0125, 80 * time.Millisecond, ""},
		{"1", "1", 0, 0, "as fast as this machine"},
		{"0.8", "2", 0, 0, "this machine is slower than the target (cpu_factor 0.8"},
	} {
		e, err := EmulationOf(map[string]string{CPUFactorOption: c.factor, EffectiveCPUsOption: c.cpus})
		if err != nil {
			t.Fatalf("factor %s cpus %s: %v", c.factor, c.cpus, err)
		}
		if e.Quota != c.quota || e.Period != c.period || !strings.Contains(e.None, c.none) || (c.none == "") != (e.None == "") {
			t.Errorf("factor %s cpus %s: %+v, want quota %g per %v, none %q", c.factor, c.cpus, e, c.quota, c.period, c.none)
		}
		if e.Quota > 0 && int64(e.Quota*float64(e.Period/time.Microsecond)) < int64(MinQuotaPerPeriod/time.Microsecond) {
			t.Errorf("factor %s cpus %s: %g CPUs per %v is under the kernel's least quota", c.factor, c.cpus, e.Quota, e.Period)
		}
	}
	for _, bad := range []map[string]string{
		{CPUFactorOption: "500", EffectiveCPUsOption: "1"},
		{CPUFactorOption: "NaN", EffectiveCPUsOption: "1"},
		{CPUFactorOption: "2"},
	} {
		if _, err := EmulationOf(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	_, err := EmulationOf(map[string]string{CPUFactorOption: "500", EffectiveCPUsOption: "1"})
	if err == nil || !strings.Contains(err.Error(), "effective_cpus 1 over cpu_factor 500") {
		t.Errorf("a quota too small: %v", err)
	}
	_, err = EmulationOf(map[string]string{CPUFactorOption: "1.5", EffectiveCPUsOption: "4096"})
	if err == nil || !strings.Contains(err.Error(), "effective_cpus 4096 over cpu_factor 1.5") || !strings.Contains(err.Error(), "1024 CPUs") {
		t.Errorf("a quota too large for cpu_quota: %v", err)
	}
}
