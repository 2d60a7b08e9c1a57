package bucket

import (
	"fmt"
	"strconv"
	"time"
)

// ModelOptions are the backend options that reshape the model, for CheckOptions.
var ModelOptions = []string{"model", "read_median", "read_p99", "write_median", "write_p99", "list_median", "list_p99",
	"stream_mib_s", "object_update_interval", "object_update_burst", "seed"}

// ModelFromOptions builds a model from backend options: "model" picks the base ("gcs", the
// default, "no-delay", or "off": no delay and no limit, the lab's own ceiling) and the other keys
// override single fields.
func ModelFromOptions(opts map[string]string) (Model, error) {
	var m Model
	switch base := opts["model"]; base {
	case "", "gcs":
		m = DefaultModel()
	case "no-delay":
		m = NoDelayModel()
	case "off":
		m = Model{Seed: 1}
	default:
		return m, fmt.Errorf("option model %q: want gcs (published limits, assumed latencies), no-delay (published limits only) or off (neither)", base)
	}
	durations := map[string]*time.Duration{
		"read_median": &m.Read.Median, "read_p99": &m.Read.P99, "write_median": &m.Write.Median, "write_p99": &m.Write.P99,
		"list_median": &m.List.Median, "list_p99": &m.List.P99, "object_update_interval": &m.ObjectUpdateInterval,
	}
	for key, into := range durations {
		if v, ok := opts[key]; ok {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return m, fmt.Errorf("option %s %q: want a duration like 12ms", key, v)
			}
			*into = d
		}
	}
	if v, ok := opts["stream_mib_s"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return m, fmt.Errorf("option stream_mib_s %q: want MiB/s, 0 for no limit", v)
		}
		m.StreamBytesPerSecond = f * (1 << 20)
	}
	for key, into := range map[string]*int{"object_update_burst": &m.ObjectUpdateBurst} {
		if v, ok := opts[key]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return m, fmt.Errorf("option %s %q: want an integer of at least 1", key, v)
			}
			*into = n
		}
	}
	if v, ok := opts["seed"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return m, fmt.Errorf("option seed %q: want an integer", v)
		}
		m.Seed = n
	}
	return m, nil
}

// Flatten gives the accounting as backend stats.
func (a Accounting) Flatten() map[string]float64 {
	return map[string]float64{
		"bucket_class_a": float64(a.ClassA), "bucket_class_b": float64(a.ClassB), "bucket_free": float64(a.Free),
		"bucket_bytes_in": float64(a.BytesIn), "bucket_bytes_out": float64(a.BytesOut),
		"bucket_throttled": float64(a.Throttled), "bucket_errors": float64(a.Errors),
	}
}
