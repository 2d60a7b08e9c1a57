package gcsfuse

import (
	"strconv"
	"strings"
)

// OldestVersion is the oldest gcsfuse the Go module proxy serves that this machine's Go builds
// (v3.2.8, a patch of the v3.2 line first released on 2025-08-08, near seed 000's article); the
// proxy serves no v2 release. scripts/setup builds it beside the current one as gcsfuse-3.2.8.
const OldestVersion = "3.2.8"

// EraV24 names option defaults' value that gives gcsfuse v2.4.0's behaviour (seed 002's, August
// 2024) with a v3 binary.
const EraV24 = "v2.4"

// v24Flags are the flags that restore v2.4.0's default where a later release changed it, for the
// gcsfuse of version (OldestVersion or the current one), read from cfg/params.yaml at v2.4.0,
// v3.2.8 and v3.11.4 and the release notes between them. What flags cannot restore: v3.10's
// ESTALE on a file changed by another writer (v3.2.8 still has --precondition-errors), and code
// changes behind no flag.
func v24Flags(version string, s settings) []string {
	flags := []string{
		// v3.0.0 streams new files to the bucket and turns FUSE's writeback cache off; v2.4 staged
		// every write in --temp-dir and uploaded the whole file on fsync and close.
		"--enable-streaming-writes=false",
		// v2.12.0 downloads a file into the file cache in parallel chunks whenever the cache is on.
		"--file-cache-enable-parallel-downloads=false",
		// v3.2.0's reader goes random after one seek; v2.4's after two, reading 1-8 MiB ranges.
		"--enable-new-reader=false",
		// v3.1.0 retries a stalled read and closes a read stream idle for 10 s.
		"--enable-read-stall-retry=false", "--read-inactive-stream-timeout=0s",
		// v3.1.0/v3.2.0 rename a file with one MoveObject; v2.4 copied and deleted.
		"--enable-atomic-rename-object=false",
		// v2.5.0 asks for the bucket's layout (hierarchical namespace) at mount.
		"--enable-hns=false",
		// v2.7.0 abandons a chunk upload after 10 s and retries it.
		"--chunk-transfer-timeout-secs=0",
		// v3.0.0 sets defaults by the machine type it reads from GCE's metadata server.
		"--disable-autoconfig=true",
	}
	// v2.8.0 keeps "not found" 5 s; before, as long as the metadata cache's TTL (60 s by default).
	ttl := int64(60)
	if s.MetadataTTL != nil {
		ttl = *s.MetadataTTL
	}
	flags = append(flags, "--metadata-cache-negative-ttl-secs="+strconv.FormatInt(ttl, 10))
	// v3.1.0 works the stat cache's size out as 34 MiB; v2.4's was 32.
	if s.StatCacheMiB == nil {
		flags = append(flags, "--stat-cache-max-size-mb=32")
	}
	if version == OldestVersion {
		// v2.8.0 made a precondition failure (another writer changed the object) an ESTALE
		// error; v2.4 ignored it. The flag went in v3.10.0.
		return append(flags, "--precondition-errors=false")
	}
	// v3.8.0 folded the type cache into the stat cache, v3.10.0 lists a directory ahead on its
	// first open and caches DNS lookups: none of them in v3.2.8, which refuses these flags.
	return append(flags, "--enable-type-cache-deprecation=false", "--enable-metadata-prefetch=false", "--enable-http-dns-cache=false")
}

// versionNumber is the release number in gcsfuse's --version line ("gcsfuse version 3.11.4 (Go
// version go1.26.8)" gives 3.11.4), "" when the line has none.
func versionNumber(line string) string {
	rest, ok := strings.CutPrefix(line, "gcsfuse version ")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, " ")
	for _, part := range strings.Split(v, ".") {
		if _, err := strconv.Atoi(part); err != nil {
			return ""
		}
	}
	return v
}
