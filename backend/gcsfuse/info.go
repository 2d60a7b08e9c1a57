package gcsfuse

import (
	"math"
	"slices"
	"time"

	"persistlab/backend"
	"persistlab/lab/bucket"
	"persistlab/param"
)

// What the backend says of itself (its Info and options) and what its entries' options say to
// the report and the plan, without a mount.

func init() {
	backend.RegisterInfo(backend.Info{Name: Name, Description: "a real gcsfuse mount of the lab's emulated GCS bucket (or of the bucket at option endpoint), as Cloud Run's volume mounts",
		Options: append(slices.Clone(Options), bucket.ModelOptions...), New: New,
		CloudModel: "bucket", NoModel: noModel, Transfer: transfer, FileCache: fileCache,
		Programs: []backend.Program{{Name: "gcsfuse", VersionArgs: []string{"--version"}}, {Name: "gcsfuse-" + OldestVersion, VersionArgs: []string{"--version"}}}})
}

// noModel says why an entry has no lab model in its way: a real bucket.
func noModel(options map[string]string) string {
	if options["endpoint"] != "" {
		return "no lab model: an external bucket (option endpoint)"
	}
	return ""
}

// fileCache says whether an entry mounts with the file cache, and which gcsfuse it runs with
// which defaults, read by those three options' declarations alone: an entry of an older file whose
// other options today's declarations refuse keeps its answer. One of the three refused: none.
func fileCache(options map[string]string) backend.FileCache {
	var decl []param.Param
	for _, name := range []string{"file_cache", "version", "defaults"} {
		p, _ := param.Find(Options, name)
		decl = append(decl, p)
	}
	var s struct {
		On       bool   `param:"file_cache"`
		Version  string `param:"version"`
		Defaults string `param:"defaults"`
	}
	if err := param.Decode(decl, options, &s); err != nil {
		return backend.FileCache{}
	}
	return backend.FileCache{On: s.On, Software: s.Version + "/" + s.Defaults}
}

// transfer is what the bucket model allows an entry's files: its bandwidth per request and its
// per-object write limit. gcsfuse uploads a written file whole at each close and reads it back
// before a later write (both eras: seed 002's random writes through 16 jobs moved the file 16
// times in and 15 out). No bandwidth with an endpoint of the user's (no lab model); none at all
// with options the backend refuses when it is made.
func transfer(options map[string]string) (backend.Transfer, bool) {
	if options["endpoint"] != "" {
		return backend.Transfer{WriteBack: true}, true
	}
	m, err := bucket.ModelFromOptions(options)
	if err != nil {
		return backend.Transfer{}, false
	}
	return backend.Transfer{WriteMiBps: m.StreamBytesPerSecond / (1 << 20), Source: "the bucket model's stream_mib_s", WriteBack: true,
		ObjectWriteInterval: m.ObjectUpdateInterval, ObjectWriteBurst: m.ObjectUpdateBurst}, true
}

// Options are the backend's own options; the bucket model's (bucket.ModelOptions) follow them.
var Options = []param.Param{
	{Name: "file_cache", Kind: param.KindBool, Default: "off", Help: "gcsfuse's file cache, as seed 002 configured it: on the instance's disk, unlimited in size"},
	{Name: "file_cache_for_range_read", Kind: param.KindBool, Default: "false", Help: "with file_cache on: a read that does not start at offset 0 downloads the whole file into the cache (false, gcsfuse's default and seed 002's: it goes to the bucket and caches nothing)"},
	metadataCacheOptions[0].param(),
	metadataCacheOptions[1].param(),
	{Name: "version", Kind: param.KindString,
		Help: OldestVersion + " (the oldest v3 the Go module proxy serves, built by scripts/setup as gcsfuse-" + OldestVersion + ") or the installed gcsfuse's own version; unset: the installed gcsfuse"},
	{Name: "defaults", Kind: param.KindEnum, Default: "current", Allowed: []string{"current", EraV24},
		Help: "current: the gcsfuse's own defaults; " + EraV24 + ": flags that give v2.4.0's behaviour where later releases changed a default (staged writes, no parallel downloads, the old reader; docs/backends.md lists them)"},
	{Name: "flags", Kind: param.KindString, Help: "further gcsfuse flags, split at spaces, e.g. \"--kernel-list-cache-ttl-secs=60\"; not --custom-endpoint, --token-url, --key-file or --anonymous-access, which the backend sets"},
	{Name: "endpoint", Kind: param.KindString, Help: "a GCS JSON API endpoint to mount from instead of the lab bucket (no lab model, no bucket accounting, no ceiling probe)"},
	{Name: "bucket", Kind: param.KindString, Default: bucket.LabBucket, Help: "the bucket to mount"},
	{Name: "ceiling_probe", Kind: param.KindSize, Default: param.FormatSize(DefaultCeilingProbe), Unit: "bytes",
		Help: "bytes written and read back through a mount of a lab bucket with the model off before the first cell of a workload that moves bulk data: the lab's own ceiling here (0: no probe)"},
}

// The metadata cache options: each sets the gcsfuse flag of its name, within the bounds gcsfuse
// itself accepts (its cfg/validate.go); unset, gcsfuse's default holds (3.11: 34 MiB, 60 s).
var metadataCacheOptions = []metadataCacheOption{
	{"stat_cache_max_size_mb", "--stat-cache-max-size-mb", -1, 1<<44 - 1, "MiB", "MiB, -1 for no limit, 0 for no stat cache", "34"},
	{"metadata_cache_ttl_secs", "--metadata-cache-ttl-secs", -1, math.MaxInt64 / int64(time.Second), "s", "seconds, -1 for no expiry, 0 for no metadata cache", "60"},
}

type metadataCacheOption struct {
	option, flag string
	lo, hi       int64
	unit, want   string
	gcsfuse      string // gcsfuse 3.11's default
}

func (o metadataCacheOption) param() param.Param {
	return param.Param{Name: o.option, Kind: param.KindInt, Min: float64(o.lo), Max: float64(o.hi), Unit: o.unit,
		Help: "gcsfuse's " + o.flag + ": " + o.want + " (unset: gcsfuse's own, " + o.gcsfuse + " in 3.11)"}
}

// settings are the backend's own options, read.
type settings struct {
	FileCache bool  `param:"file_cache"`
	RangeRead *bool `param:"file_cache_for_range_read"` // nil: not given (then the cache must be on)
	// The metadata cache options, nil where gcsfuse's own default holds.
	StatCacheMiB *int64 `param:"stat_cache_max_size_mb"`
	MetadataTTL  *int64 `param:"metadata_cache_ttl_secs"`
	Version      string `param:"version"`
	Defaults     string `param:"defaults"`
	Flags        string `param:"flags"`
	Endpoint     string `param:"endpoint"`
	Bucket       string `param:"bucket"`
	CeilingProbe int64  `param:"ceiling_probe"`
}

// metadataCache is each metadata cache option's value, by option name.
func (s settings) metadataCache() map[string]*int64 {
	return map[string]*int64{"stat_cache_max_size_mb": s.StatCacheMiB, "metadata_cache_ttl_secs": s.MetadataTTL}
}
