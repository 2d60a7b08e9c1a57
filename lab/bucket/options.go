package bucket

import (
	"math"
	"strconv"
	"time"

	"persistlab/lab"
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

// modelSettings are the model options as ModelFromOptions reads them: the base, and each figure
// that overrides one of the base's where it is given.
type modelSettings struct {
	Base                 string         `param:"model"`
	ReadMedian           *time.Duration `param:"read_median"`
	ReadP99              *time.Duration `param:"read_p99"`
	WriteMedian          *time.Duration `param:"write_median"`
	WriteP99             *time.Duration `param:"write_p99"`
	ListMedian           *time.Duration `param:"list_median"`
	ListP99              *time.Duration `param:"list_p99"`
	StreamMiBs           *float64       `param:"stream_mib_s"`
	ObjectUpdateInterval *time.Duration `param:"object_update_interval"`
	ObjectUpdateBurst    *int           `param:"object_update_burst"`
	Seed                 *int64         `param:"seed"`
}

// ModelFromOptions builds a model from backend options: "model" picks the base ("gcs", the
// default, gcsfuse-bench-2024 (BenchModel), "no-delay", or "off": no delay and no limit, the lab's
// own ceiling) and each other option given overrides its single figure. A value its declaration
// refuses is a *param.FieldError for the option's name.
func ModelFromOptions(opts map[string]string) (Model, error) {
	var o modelSettings
	if err := param.Decode(ModelOptions, opts, &o); err != nil {
		return Model{}, err
	}
	var m Model
	switch o.Base {
	case BenchModelName:
		m = BenchModel()
	case "no-delay":
		m = NoDelayModel()
	case "off":
		m = Model{Seed: 1}
	default: // gcs
		m = DefaultModel()
	}
	override(&m.Read.Median, o.ReadMedian)
	override(&m.Read.P99, o.ReadP99)
	override(&m.Write.Median, o.WriteMedian)
	override(&m.Write.P99, o.WriteP99)
	override(&m.List.Median, o.ListMedian)
	override(&m.List.P99, o.ListP99)
	override(&m.ObjectUpdateInterval, o.ObjectUpdateInterval)
	override(&m.ObjectUpdateBurst, o.ObjectUpdateBurst)
	override(&m.Seed, o.Seed)
	if o.StreamMiBs != nil {
		m.StreamBytesPerSecond = *o.StreamMiBs * (1 << 20)
	}
	return m, nil
}

// override sets a figure to the option's value, where the option is given.
func override[T any](figure *T, option *T) {
	if option != nil {
		*figure = *option
	}
}

// Flatten gives the accounting as backend stats.
func (a Accounting) Flatten() map[string]float64 {
	return map[string]float64{
		lab.BucketClassA: float64(a.ClassA), lab.BucketClassB: float64(a.ClassB), lab.BucketFree: float64(a.Free),
		lab.BucketBytesIn: float64(a.BytesIn), lab.BucketBytesOut: float64(a.BytesOut),
		lab.BucketThrottled: float64(a.Throttled), lab.BucketErrors: float64(a.Errors),
		lab.BucketAnonymous: float64(a.Anonymous),
	}
}
