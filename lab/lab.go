// Package lab is the emulated cloud's vocabulary, which the lab's parts (bucket, volume), the
// backends built on them, the results and the report share: the counters the lab keeps (stats
// keys), what a volume's cloud model promises (VolumeModel, Job), and the lab's own throughput on
// this machine (Ceiling). It imports nothing of persistlab, so every other package may import it.
package lab

// The lab's keys of a backend's Stats: what the lab's bucket and volumes count, which the runner records
// per cell (results' backend_stats, and series "backend.KEY" when sampled) and the report reads.
const (
	// A bucket's requests by the provider's price class, and what crossed its API.
	BucketClassA    = "bucket_class_a"   // inserts, patches, composes, copies, listings
	BucketClassB    = "bucket_class_b"   // gets of object data and metadata
	BucketFree      = "bucket_free"      // deletes: free of charge
	BucketBytesIn   = "bucket_bytes_in"  // uploaded
	BucketBytesOut  = "bucket_bytes_out" // downloaded
	BucketThrottled = "bucket_throttled" // answered 429 by the per-object write limit
	BucketErrors    = "bucket_errors"    // answered with another error
	BucketAnonymous = "bucket_anonymous" // requests with no credentials (gcsfuse then ignores its transport flags)

	// A volume's I/Os as its block device saw them, and as the provider bills and limits them.
	VolumeReadOps    = "volume_read_ops"
	VolumeWriteOps   = "volume_write_ops"
	VolumeReadBytes  = "volume_read_bytes"
	VolumeWriteBytes = "volume_write_bytes"
	VolumeReadUnits  = "volume_read_units"  // billed I/O units (EBS: 256 KiB SSD, 1 MiB HDD)
	VolumeWriteUnits = "volume_write_units" // billed I/O units
	VolumeFlushes    = "volume_flushes"
	VolumeThrottledS = "volume_throttled_s" // time I/Os waited for the volume's limits
	VolumeMaxWaitS   = "volume_max_wait_s"  // the longest one I/O waited
	VolumeCreditIOs  = "volume_credit_ios"  // burst credits left (gp2's I/O credits)
	VolumeCreditMiB  = "volume_credit_mib"  // burst credits left (st1, sc1: MiB of throughput)
)

// StatsSeriesPrefix begins the name of a sampled counter's series in a cell's results.
const StatsSeriesPrefix = "backend."

// StatsSeries names a counter's series in a cell's results, when the backend samples it.
func StatsSeries(key string) string { return StatsSeriesPrefix + key }

// Ceiling is the lab's own throughput on this machine, with the cloud model off: bandwidth, and
// small-I/O operations per second where the prober measures them (0: not measured).
type Ceiling struct {
	ReadMiBs  float64 `json:"read_mib_s"`
	WriteMiBs float64 `json:"write_mib_s"`
	ReadIOPS  float64 `json:"read_iops,omitempty"`
	WriteIOPS float64 `json:"write_iops,omitempty"`
	Method    string  `json:"method"` // how it was measured, for the results file
	// The backend's own counters (Stats keys) of what its lab part moved: a row is compared with
	// the ceiling by these, not by what the workload saw (a cache may serve reads without the lab).
	ReadBytesStat  string `json:"read_bytes_stat,omitempty"`
	WriteBytesStat string `json:"write_bytes_stat,omitempty"`
	ReadOpsStat    string `json:"read_ops_stat,omitempty"`
	WriteOpsStat   string `json:"write_ops_stat,omitempty"`
}

// VolumeModel is what an emulated volume entry's cloud model says of it, for the report: what the
// volume is, the limits and price its provider publishes for it, and the rate those limits allow
// a steady job.
type VolumeModel struct {
	Type      string
	SizeBytes int64
	Limits    string // one line: IOPS, throughput, burst
	// The most the volume writes within its instance's caps, at its burst where it has one: IOPS
	// in the model's billing units, and MiB/s (what the lab's ceiling is held against).
	WriteIOPS, WriteMiBps float64
	// The burst buckets, full at creation (0 without one): gp2's I/O credits, st1's and sc1's MiB
	// of throughput credit; and the baselines that refill them, in the same units per second.
	CreditIOs, CreditMiB float64
	BaseIOPS, BaseMiBps  float64
	MonthlyUSD           float64
	PriceBasis           string // how the price is made up, with its sources
	// Expect is the I/O rate (I/Os per second) the limits allow job, from full credits.
	Expect func(job Job) float64
}

// Job is a steady I/O pattern: direction, randomness, block size, I/Os in flight, and how long it
// runs (0: unbounded), which sets how much burst credit it can spend.
type Job struct {
	Write, Random bool
	BS            int64
	Depth         int
	Seconds       float64
}
