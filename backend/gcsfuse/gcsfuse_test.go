package gcsfuse

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/backend/conformance"
	"persistlab/lab/bucket"
)

func TestConformance(t *testing.T) {
	for _, opts := range []map[string]string{
		{"model": "no-delay"},
		{"file_cache": "on"}, // the GCS model's latencies and the file cache of seed 002
	} {
		conformance.Run(t, func(work string) (backend.Backend, error) {
			return backend.New(Name, backend.Env{WorkDir: work, Options: opts})
		}, conformance.KeepsFilesAcrossCrash)
	}
}

// What is written through the mount lands in the bucket as an object, and the bucket counts it.
func TestWritesReachTheBucket(t *testing.T) {
	b, err := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"model": "no-delay"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop(context.Background())
	target, err := b.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := os.WriteFile(filepath.Join(target.Dir, "x.txt"), []byte("persisted"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The write is on the backend's timeline, named by its object, after it began.
	writes := b.(backend.Timeline).WritesSince(before)
	if len(writes) == 0 || writes[len(writes)-1].What != "x.txt" || writes[len(writes)-1].Done.Before(writes[len(writes)-1].Started) ||
		writes[len(writes)-1].Bytes < int64(len("persisted")) {
		t.Errorf("writes since the file was written: %+v", writes)
	}
	if later := b.(backend.Timeline).WritesSince(time.Now()); len(later) != 0 {
		t.Errorf("writes in the future: %+v", later)
	}
	names, err := b.(*Backend).lab.ObjectNames(bucket.LabBucket)
	if err != nil || len(names) != 1 || names[0] != "x.txt" {
		t.Errorf("bucket holds %v (%v), want [x.txt]", names, err)
	}
	st := b.Stats()
	if st["bucket_class_a"] < 1 || st["bucket_bytes_in"] < float64(len("persisted")) {
		t.Errorf("bucket did not count the upload: %v", st)
	}
	// gcsfuse authenticated with the lab's token: it used its own transport, which honours
	// --client-protocol and --max-conns-per-host.
	if n, ok := st["bucket_anonymous"]; !ok || n != 0 {
		t.Errorf("bucket_anonymous %v (recorded %v), want 0: gcsfuse sent a request without the lab's token", n, ok)
	}
}

// The flags option cannot point gcsfuse at another bucket or change how it authenticates.
func TestFlagsCannotReplaceTheBackendsOwn(t *testing.T) {
	for _, f := range []string{"--anonymous-access", "--custom-endpoint=http://10.0.0.1/storage/v1/", "--token-url=http://x", "--key-file=/k.json"} {
		_, err := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"flags": "--implicit-dirs " + f}})
		name, _, _ := strings.Cut(f, "=")
		if err == nil || !strings.Contains(err.Error(), "option flags") || !strings.Contains(err.Error(), name) {
			t.Errorf("flags %q: %v, want an error naming option flags and %s", f, err, name)
		}
	}
	if _, err := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"flags": "--client-protocol=http1 --max-conns-per-host=100"}}); err != nil {
		t.Errorf("transport flags refused: %v", err)
	}
}

// --keep leaves the bucket's objects as files in the work directory; without it nothing of the
// bucket stays there.
func TestKeepExportsTheBucket(t *testing.T) {
	for _, keep := range []bool{true, false} {
		work := t.TempDir()
		b, err := New(backend.Env{WorkDir: work, Options: map[string]string{"model": "no-delay"}, Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
		target, err := b.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(target.Dir, "d"), 0o755)
		if err := os.WriteFile(filepath.Join(target.Dir, "d", "x.txt"), []byte("persisted"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(work, "bucket", "d", "x.txt"))
		if keep && (err != nil || string(got) != "persisted") {
			t.Errorf("keep: bucket/d/x.txt holds %q (%v)", got, err)
		}
		if !keep && !os.IsNotExist(err) {
			t.Errorf("no keep: bucket/d/x.txt exists (%v)", err)
		}
		if bodies, _ := filepath.Glob(filepath.Join(work, "persistlab-bucket-*")); len(bodies) != 0 {
			t.Errorf("the lab's body directory outlived it: %v", bodies)
		}
	}
}

// The ceiling probe moves what it says through the mounts, leaves nothing mounted or running, and
// is skipped for a real bucket.
func TestCeilingProbe(t *testing.T) {
	work := t.TempDir()
	before := conformance.Snapshot(t, filepath.Dir(work))
	b, err := New(backend.Env{WorkDir: work, Options: map[string]string{"ceiling_probe": "32MiB", "file_cache": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := b.(backend.CeilingProber).ProbeCeiling(context.Background())
	if err != nil || !ok || c.ReadMiBs <= 0 || c.WriteMiBs <= 0 || !strings.Contains(c.Method, "32MiB") {
		t.Fatalf("probe: %+v %v %v", c, ok, err)
	}
	conformance.Snapshot(t, filepath.Dir(work)).MustEqual(t, before)
	real, err := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"endpoint": "http://127.0.0.1:1/storage/v1/"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := real.(backend.CeilingProber).ProbeCeiling(context.Background()); ok || err != nil {
		t.Errorf("a real bucket was probed: %v %v", ok, err)
	}
	if _, err := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"ceiling_probe": "lots"}}); err == nil || !strings.Contains(err.Error(), "ceiling_probe") {
		t.Errorf("bad ceiling_probe: %v", err)
	}
}

// The cache options become gcsfuse flags: the file cache's range-read setting said either way
// when the cache is on and never when it is off, the metadata cache's only when set.
func TestCacheOptionsMakeFlags(t *testing.T) {
	const rangeRead = "--file-cache-cache-file-for-range-read"
	for _, c := range []struct {
		opts      map[string]string
		want, not []string
	}{
		{map[string]string{}, nil, []string{"--cache-dir", rangeRead, "--stat-cache-max-size-mb", "--metadata-cache-ttl-secs"}},
		{map[string]string{"file_cache": "on"}, []string{"--cache-dir=/c", "--file-cache-max-size-mb=-1", rangeRead + "=false"}, []string{rangeRead + "=true"}},
		{map[string]string{"file_cache": "on", "file_cache_for_range_read": "false"}, []string{rangeRead + "=false"}, []string{rangeRead + "=true"}},
		{map[string]string{"file_cache": "on", "file_cache_for_range_read": "true"}, []string{rangeRead + "=true"}, []string{rangeRead + "=false"}},
		{map[string]string{"file_cache": "on", "stat_cache_max_size_mb": "32", "metadata_cache_ttl_secs": "3600"},
			[]string{"--stat-cache-max-size-mb=32", "--metadata-cache-ttl-secs=3600", rangeRead + "=false"}, nil},
		{map[string]string{"stat_cache_max_size_mb": "-1", "metadata_cache_ttl_secs": "0"},
			[]string{"--stat-cache-max-size-mb=-1", "--metadata-cache-ttl-secs=0"}, []string{"--cache-dir", rangeRead}},
	} {
		b, err := New(backend.Env{WorkDir: t.TempDir(), Options: c.opts})
		if err != nil {
			t.Errorf("%v: %v", c.opts, err)
			continue
		}
		args := strings.Join(b.(*Backend).cacheFlags("/c"), " ") + " "
		for _, w := range c.want {
			if !strings.Contains(args, w+" ") {
				t.Errorf("%v: flags %q lack %s", c.opts, args, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(args, n) {
				t.Errorf("%v: flags %q have %s", c.opts, args, n)
			}
		}
	}
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"file_cache_for_range_read": "true"}, `file_cache_for_range_read "true" applies to the file cache, which is off`},
		{map[string]string{"file_cache": "off", "file_cache_for_range_read": "false"}, `file_cache_for_range_read "false" applies to the file cache`},
		{map[string]string{"file_cache": "on", "file_cache_for_range_read": "yes please"}, `file_cache_for_range_read: "yes please" is not allowed: want true or false`},
		{map[string]string{"stat_cache_max_size_mb": "-2"}, `stat_cache_max_size_mb: "-2" is not allowed`},
		{map[string]string{"stat_cache_max_size_mb": "32MiB"}, `stat_cache_max_size_mb: "32MiB" is not allowed`},
		{map[string]string{"metadata_cache_ttl_secs": "9223372037"}, `metadata_cache_ttl_secs: "9223372037" is not allowed: want a whole number from -1 to 9223372036 (s)`},
	} {
		if _, err := New(backend.Env{WorkDir: t.TempDir(), Options: c.opts}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.opts, err, c.want)
		}
	}
	// Names and values are checked by the declarations first, through the registry.
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"type_cache_max_size_mb": "4"}, `options.type_cache_max_size_mb: "4" is not allowed: want one of backend gcsfuse's options: file_cache,`},
		{map[string]string{"file_cache": "on", "file_cache_for_range_read": "yes please"}, `options.file_cache_for_range_read: "yes please" is not allowed: want true or false`},
		{map[string]string{"metadata_cache_ttl_secs": "9223372037"}, `options.metadata_cache_ttl_secs: "9223372037" is not allowed: want a whole number from -1 to 9223372036 (s)`},
		{map[string]string{"stream_mib_s": "-1"}, `options.stream_mib_s: "-1" is not allowed: want a number of at least 0 (MiB/s)`},
	} {
		if _, err := backend.New(Name, backend.Env{WorkDir: t.TempDir(), Options: c.opts}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.opts, err, c.want)
		}
	}
}

// The real gcsfuse takes the cache flags: seed 002's cache settings with range reads cached, as
// gcsfuse logs the configuration it mounted with.
func TestCacheOptionsReachGcsfuse(t *testing.T) {
	work := t.TempDir()
	b, err := New(backend.Env{WorkDir: work, Options: map[string]string{"model": "no-delay", "file_cache": "on",
		"file_cache_for_range_read": "true", "stat_cache_max_size_mb": "32", "metadata_cache_ttl_secs": "3600"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop(context.Background())
	if _, err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(work, "gcsfuse.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"CacheFileForRangeRead":true`, `"MaxSizeMb":-1`, `"StatCacheMaxSizeMb":32`, `"TtlSecs":3600`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("gcsfuse's configuration lacks %s:\n%s", want, log)
		}
	}
}

func TestBadInputLeavesNothingMounted(t *testing.T) {
	work := t.TempDir()
	before := conformance.Snapshot(t, filepath.Dir(work))
	// A busy mount point: something already mounted where the backend mounts.
	first, err := New(backend.Env{WorkDir: work, Options: map[string]string{"model": "no-delay"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	second, _ := New(backend.Env{WorkDir: work, Options: map[string]string{"model": "no-delay"}})
	if _, err := second.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Errorf("second mount on one point: %v", err)
	}
	second.Stop(context.Background())
	if !Mounted(filepath.Join(work, "mnt")) {
		t.Error("the refused backend's Stop unmounted the other backend's mount")
	}
	first.Stop(context.Background())

	// An unreachable bucket.
	b, _ := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"endpoint": "http://localhost:1/storage/v1/"}})
	if _, err := b.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("unreachable bucket: %v", err)
	}
	b.Stop(context.Background())

	// Options and binaries.
	if _, err := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"file_cache": "maybe"}}); err == nil || !strings.Contains(err.Error(), "file_cache") {
		t.Errorf("bad file_cache: %v", err)
	}
	t.Setenv("PERSISTLAB_GCSFUSE", "/no/such/gcsfuse")
	if _, err := New(backend.Env{WorkDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "PERSISTLAB_GCSFUSE") {
		t.Errorf("missing binary: %v", err)
	}
	conformance.Snapshot(t, filepath.Dir(work)).MustEqual(t, before)
}

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("fusermount3"); err != nil {
		os.Stderr.WriteString("fusermount3 missing: run scripts/setup\n")
		os.Exit(1)
	}
	os.Exit(m.Run())
}
