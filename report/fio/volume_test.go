package fio

import "testing"

// A time-based job runs for its runtime however its switch is written.
func TestTimeBasedIsReadAsABoolean(t *testing.T) {
	for v, seconds := range map[string]float64{"true": 10, "on": 10, "1": 10, "false": 0, "off": 0, "": 0} {
		j, ok := fioJob(map[string]string{"rw": "randread", "bs": "4k", "runtime": "10s", "time_based": v})
		if !ok || j.Seconds != seconds {
			t.Errorf("time_based %q: %+v, %v; want %v s", v, j, ok, seconds)
		}
	}
}
