package bucket

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"persistlab/backend"
	"persistlab/param"
)

// ModelOptions are the backend options that reshape the model (gcsfuse's and Litestream's, read
// by ModelFromOptions): model picks the base, the others override single figures. Their defaults
// are model gcs's (DefaultModel).
var ModelOptions = modelOptions()

func modelOptions() []param.Param {
	d, inf := DefaultModel(), math.Inf(1)
	latency := func(name, what string, def time.Duration) param.Param {
		return param.Param{Name: name, Kind: param.KindDuration, Default: def.String(), Min: 0, Max: inf,
			Help: what + " (lognormal; an assumption, GCS publishes none; no-delay and off: 0)"}
	}
	return []param.Param{
		{Name: "model", Kind: param.KindEnum, Default: "gcs", Allowed: []string{"gcs", BenchModelName, "no-delay", "off"},
			Help: "the bucket's cloud model: gcs (published limits, assumed latencies), " + BenchModelName + " (gcs with the read latency gcsfuse's benchmark page of July 2024 gives: its 128 KB file in 18.54 ms), no-delay (the published per-object write limit only), off (neither: the lab's own ceiling)"},
		latency("read_median", "median latency of a class B request (reads, metadata)", d.Read.Median),
		latency("read_p99", "99th percentile latency of a class B request", d.Read.P99),
		latency("write_median", "median latency of a class A mutation (upload, compose, copy, patch)", d.Write.Median),
		latency("write_p99", "99th percentile latency of a class A mutation", d.Write.P99),
		latency("list_median", "median latency of a class A listing", d.List.Median),
		latency("list_p99", "99th percentile latency of a class A listing", d.List.P99),
		{Name: "stream_mib_s", Kind: param.KindFloat, Default: param.PlainNumber(d.StreamBytesPerSecond / (1 << 20)), Min: 0, Max: inf, Unit: "MiB/s",
			Help: "bandwidth of each request's body, each way (published: gcsfuse's benchmark page of July 2024, per job; 0: no limit; no-delay and off: 0)"},
		{Name: "object_update_interval", Kind: param.KindDuration, Default: d.ObjectUpdateInterval.String(), Min: 0, Max: inf,
			Help: "GCS's published write limit: one write per object per this interval, above it 429 (0: no limit; off: 0)"},
		{Name: "object_update_burst", Kind: param.KindInt, Default: strconv.Itoa(d.ObjectUpdateBurst), Min: 1, Max: inf, Unit: "writes",
			Help: "writes to one object allowed at once before the limit applies (an assumption)"},
		{Name: "seed", Kind: param.KindInt, Default: strconv.FormatInt(d.Seed, 10), Help: "seed of the latency draws"},
	}
}

// BenchModelName is the option value for BenchModel, named for its source and year.
const BenchModelName = "gcsfuse-bench-2024"

// ModelFromOptions builds a model from backend options: "model" picks the base ("gcs", the
// default, gcsfuse-bench-2024 (BenchModel), "no-delay", or "off": no delay and no limit, the lab's
// own ceiling) and the other keys override single fields.
func ModelFromOptions(opts map[string]string) (Model, error) {
	var m Model
	switch base := opts["model"]; base {
	case "", "gcs":
		m = DefaultModel()
	case BenchModelName:
		m = BenchModel()
	case "no-delay":
		m = NoDelayModel()
	case "off":
		m = Model{Seed: 1}
	default:
		return m, fmt.Errorf("option model %q: want gcs (published limits, assumed latencies), %s (gcs with the read latency of gcsfuse's benchmark page, July 2024), no-delay (published limits only) or off (neither)", base, BenchModelName)
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
		backend.BucketClassA: float64(a.ClassA), backend.BucketClassB: float64(a.ClassB), backend.BucketFree: float64(a.Free),
		backend.BucketBytesIn: float64(a.BytesIn), backend.BucketBytesOut: float64(a.BytesOut),
		backend.BucketThrottled: float64(a.Throttled), backend.BucketErrors: float64(a.Errors),
		backend.BucketAnonymous: float64(a.Anonymous),
	}
}
