package bucket

import "time"

// Published figures (Cloud Storage "Quotas & limits", https://cloud.google.com/storage/quotas):
const (
	// "Maximum rate of writes to the same object name: one write per second"; the same figure for
	// object metadata updates. Above it GCS may answer 429 rateLimitExceeded.
	PublishedObjectUpdateInterval = time.Second
	// "Buckets initially support roughly 1,000 writes per second and then scale as needed".
	PublishedBucketWritesPerSecond = 1000
	// "... roughly 5,000 object reads per second" to start.
	PublishedBucketReadsPerSecond = 5000
)

// Model is the cloud behaviour the bucket adds on top of a correct GCS API. Every field can be
// changed by a flag of `persistlab lab serve` and by backend options.
type Model struct {
	// Latency before a request is served, lognormal by class. GCS publishes no latency figure; these
	// defaults are assumptions: seed 000 puts a GCS write about 2 ms above a local one at best
	// (its min latencies, 8.12 vs 6.37 ms), and tails of tens of ms are the common experience.
	Read  Latency // class B: object and bucket reads, metadata
	Write Latency // class A mutations: uploads, compose, copy, patch
	List  Latency // class A listings
	// StreamBytesPerSecond caps each request's body in either direction. Fitted from seed 003 (not
	// published): gcsfuse read 7,714 MiB/s over 128 threads of one VM, about 60 MiB/s per stream.
	// So seed 003's bandwidths are calibration, not matches; for the other seeds it is a
	// prediction (provenance.go, `persistlab lab model bucket`).
	StreamBytesPerSecond float64
	// ObjectUpdateInterval is the per-object write limit (published: 1 s); ObjectUpdateBurst how
	// many writes may come at once before it applies (assumption: GCS tolerates short bursts).
	ObjectUpdateInterval time.Duration
	ObjectUpdateBurst    int
	// Seed makes the latency draws repeatable.
	Seed int64
}

// Latency is a lognormal distribution given by its median and its 99th percentile.
type Latency struct {
	Median time.Duration
	P99    time.Duration
}

// DefaultModel is GCS as persistlab assumes it from one region's compute (see Model's fields).
func DefaultModel() Model {
	return Model{
		Read:                 Latency{Median: 4 * time.Millisecond, P99: 30 * time.Millisecond},
		Write:                Latency{Median: 12 * time.Millisecond, P99: 80 * time.Millisecond},
		List:                 Latency{Median: 8 * time.Millisecond, P99: 50 * time.Millisecond},
		StreamBytesPerSecond: 60 << 20,
		ObjectUpdateInterval: PublishedObjectUpdateInterval,
		ObjectUpdateBurst:    3,
		Seed:                 1,
	}
}

// NoDelayModel serves at loopback speed with the published per-object limit still enforced: the
// reference for what the model itself adds.
func NoDelayModel() Model {
	return Model{ObjectUpdateInterval: PublishedObjectUpdateInterval, ObjectUpdateBurst: 3, Seed: 1}
}
