package bucket

import (
	"math"
	"time"
)

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

// gcsfuse's own benchmark page as measured again in July 2024 (GoogleCloudPlatform/gcsfuse
// docs/benchmarks.md at commit 8637ce1, 2024-07-02): gcsfuse 2.2.0 on an n2-standard-96, fio with
// ioengine=sync, so one I/O in flight per job, direct I/O, 128 jobs. A measurement independent of
// seed 003's tables (the same page in April 2023), so what these figures set there is a prediction.
const (
	// Sequential Reads of 1 GB files in 1 MiB blocks: 7,911 MiB/s over 128 jobs.
	PublishedBenchSeqReadMiBps = 7911
	PublishedBenchJobs         = 128
	// Sequential Reads of 128 KB files in 128 KiB blocks: 18.54 ms average latency, each read a
	// whole file.
	PublishedBenchFileRead = 18540 * time.Microsecond
	PublishedBenchFileSize = 128 << 10
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
	// StreamBytesPerSecond caps each request's body in either direction. Published: gcsfuse's
	// benchmark page of July 2024 read 1 GB files at 61.8 MiB/s per job, one stream each
	// (PublishedBenchSeqReadMiBps over PublishedBenchJobs; provenance.go, `persistlab lab model
	// bucket`).
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
		StreamBytesPerSecond: float64(PublishedBenchSeqReadMiBps) / PublishedBenchJobs * (1 << 20),
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

// BenchModel is model gcsfuse-bench-2024 (seed 003's): the gcs model with its class B read latency
// set by gcsfuse's benchmark page. A 128 KB file took 18.54 ms to read there; its body at the
// stream bandwidth takes 2.0 ms, so a read waited 16.5 ms on average before its first byte. The
// read median is the one whose lognormal mean is that wait, the p99 staying the default's (an
// assumption: the page gives averages only).
func BenchModel() Model {
	m := DefaultModel()
	body := time.Duration(float64(PublishedBenchFileSize) / m.StreamBytesPerSecond * float64(time.Second))
	m.Read.Median = medianForMean(PublishedBenchFileRead-body, m.Read.P99).Round(time.Microsecond)
	return m
}

// medianForMean is the median of the lognormal with this mean and p99. With u = ln(p99/median),
// σ = u/z99 and mean = median·exp(σ²/2), so ln(p99/mean) = u - u²/(2·z99²), whose smaller root
// is u = z99²·(1 - sqrt(1 - 2·ln(p99/mean)/z99²)). A mean at or above the p99 is taken as the
// median (no spread).
func medianForMean(mean, p99 time.Duration) time.Duration {
	if mean <= 0 || mean >= p99 {
		return mean
	}
	z2 := z99 * z99
	u := z2 * (1 - math.Sqrt(1-2*math.Log(float64(p99)/float64(mean))/z2))
	return time.Duration(float64(p99) * math.Exp(-u))
}
