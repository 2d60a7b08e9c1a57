package backend

// The keys of Stats: what the lab's bucket and volumes count, which the runner records per cell
// (results' backend_stats, and series "backend.KEY" when sampled) and the report reads.
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
