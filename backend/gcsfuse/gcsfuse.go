// Package gcsfuse keeps the data on a Cloud Storage FUSE mount: the real gcsfuse mounts a bucket,
// the lab's emulated one unless an endpoint is given, as Cloud Run's volume mounts do.
package gcsfuse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"persistlab/backend"
	"persistlab/internal/mounts"
	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/internal/tools"
	"persistlab/lab"
	"persistlab/lab/bucket"
	"persistlab/param"
)

// Name is the backend's name in scenarios.
const Name = "gcsfuse"

// The optional capabilities the runner finds by type assertion, checked at compile time.
var (
	_ backend.Crasher       = (*Backend)(nil)
	_ backend.MultiInstance = (*Backend)(nil)
	_ backend.CeilingProber = (*Backend)(nil)
	_ backend.ProbeSpacer   = (*Backend)(nil)
	_ backend.LocalCopier   = (*Backend)(nil)
	_ backend.Timeline      = (*Backend)(nil)
)

// ownFlags are the gcsfuse flags the backend sets, which option flags may not replace.
var ownFlags = []string{"--custom-endpoint", "--token-url", "--key-file", "--anonymous-access"}

// Backend is a gcsfuse mount of a bucket.
type Backend struct {
	env       backend.Env
	bin       string
	model     bucket.Model
	fileCache bool
	rangeRead bool     // --file-cache-cache-file-for-range-read (option file_cache_for_range_read)
	cacheArgs []string // the metadata cache options' flags, in metadataCacheOptions' order
	flags     []string
	eraArgs   []string // the flags of option defaults: v2.4, for the version in use
	endpoint  string   // an external JSON API endpoint; "" to serve the lab bucket in-process
	bucket    string

	endpointInUse string
	auth          []string // --token-url, or --anonymous-access for a bucket that hands out no token
	probeSize     int64    // bytes ProbeCeiling moves each way

	lab       *bucket.Server
	instances []*instance // every gcsfuse this backend started; the last is the current one
	version   string
}

// instance is one gcsfuse process: a Cloud Run instance's mount of the bucket.
type instance struct {
	mount   string // mount point
	staging string // --temp-dir: writes staged on the instance's disk before upload
	cache   string // file cache, when on
	child   *proc.Child
}

// New reads the options, checks what depends on several of them, and finds the gcsfuse binary.
func New(env backend.Env) (backend.Backend, error) {
	var s settings
	if err := param.Decode(Options, env.Options, &s); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	g := &Backend{env: env, fileCache: s.FileCache, endpoint: s.Endpoint, bucket: s.Bucket, probeSize: s.CeilingProbe}
	if g.bucket == "" {
		g.bucket = bucket.LabBucket
	}
	var err error
	program := "gcsfuse"
	if s.Version == OldestVersion {
		program += "-" + OldestVersion
	}
	if g.bin, err = tools.Find(program); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		return nil, fmt.Errorf("backend %q: fusermount3 not found (Debian package fuse3; run scripts/setup)", Name)
	}
	if g.model, err = bucket.ModelFromOptions(env.Options); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	// Whether a read that does not start at offset 0 downloads the whole file into the cache; off
	// (gcsfuse's default), such a read of an uncached file goes to the bucket and caches nothing.
	if s.RangeRead != nil {
		if !g.fileCache {
			return nil, fmt.Errorf("backend %q: option file_cache_for_range_read %q applies to the file cache, which is off: set file_cache: on as well, or drop it", Name, env.Options["file_cache_for_range_read"])
		}
		g.rangeRead = *s.RangeRead
	}
	given := s.metadataCache()
	for _, o := range metadataCacheOptions {
		if n := given[o.option]; n != nil {
			g.cacheArgs = append(g.cacheArgs, fmt.Sprintf("%s=%d", o.flag, *n))
		}
	}
	g.version = sysinfo.ProgramVersion(g.bin, "--version")
	if v := s.Version; v != "" && versionNumber(g.version) != v {
		return nil, fmt.Errorf("backend %q: option version %q: want %s (built as gcsfuse-%s by scripts/setup) or the installed gcsfuse's own %s, or leave it unset for that one",
			Name, v, OldestVersion, OldestVersion, versionNumber(g.version))
	}
	if s.Defaults == EraV24 {
		g.eraArgs = v24Flags(versionNumber(g.version), s)
	}
	g.flags = strings.Fields(s.Flags)
	for _, f := range g.flags {
		name, _, _ := strings.Cut(f, "=")
		if slices.Contains(ownFlags, name) {
			return nil, fmt.Errorf("backend %q: option flags %q: %s is set by persistlab (the bucket it mounts and how it authenticates); use option endpoint for another bucket", Name, s.Flags, name)
		}
		if slices.ContainsFunc(g.eraArgs, func(a string) bool { n, _, _ := strings.Cut(a, "="); return n == name }) {
			return nil, fmt.Errorf("backend %q: option flags %q: %s is set by option defaults %s; drop it from flags, or set defaults: current", Name, s.Flags, name, EraV24)
		}
	}
	return g, nil
}

// Name implements backend.Backend.
func (g *Backend) Name() string { return Name }

// Versions implements backend.Backend.
func (g *Backend) Versions() map[string]string { return map[string]string{"gcsfuse": g.version} }

// Start serves the lab bucket (unless an endpoint was given) and mounts it.
func (g *Backend) Start(ctx context.Context) (backend.Target, error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: /dev/fuse: %w", Name, err)
	}
	if first := filepath.Join(g.env.WorkDir, "mnt"); Mounted(first) {
		return backend.Target{}, fmt.Errorf("backend %q: mount point %s is busy: something is already mounted there", Name, first)
	}
	g.endpointInUse = g.endpoint
	if g.endpoint == "" {
		// Bodies in the cell's work directory: removed with it, kept with it (run --keep).
		lab, err := bucket.Start(bucket.Config{Buckets: []string{g.bucket}, Model: g.model, StorageRoot: g.env.WorkDir})
		if err != nil {
			return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
		}
		g.lab = lab
		g.endpointInUse = lab.JSONEndpoint()
	}
	g.auth = []string{"--anonymous-access"}
	tokenURL, labBucket := labToken(ctx, g.endpointInUse)
	if labBucket {
		g.auth = []string{"--token-url=" + tokenURL}
	}
	if err := reachable(ctx, g.endpointInUse, g.bucket, labBucket); err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: bucket %q at %s unreachable: %w", Name, g.bucket, g.endpointInUse, err)
	}
	return g.mountInstance(ctx, g.env.Wrap)
}

// current is the instance the workload uses, or nil before the first mount.
func (g *Backend) current() *instance {
	if len(g.instances) == 0 {
		return nil
	}
	return g.instances[len(g.instances)-1]
}

// mountInstance starts a new instance: its own mount point, staging and cache directories, and
// gcsfuse process (run behind wrap, the instance's CPU limit), mounting the same bucket. It waits
// until the mount is up.
func (g *Backend) mountInstance(ctx context.Context, wrap []string) (backend.Target, error) {
	dir := func(kind string) string {
		if len(g.instances) == 0 {
			return filepath.Join(g.env.WorkDir, kind)
		}
		return filepath.Join(g.env.WorkDir, fmt.Sprintf("%s-%d", kind, len(g.instances)))
	}
	in := &instance{mount: dir("mnt"), staging: dir("tmp")}
	for _, d := range []string{in.mount, in.staging} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return backend.Target{}, err
		}
	}
	// --temp-dir: where gcsfuse stages writes before uploading them; the instance's local disk.
	args := []string{g.bin, "--foreground", "--implicit-dirs", "--custom-endpoint=" + g.endpointInUse, "--temp-dir=" + in.staging}
	args = append(args, g.auth...)
	if g.fileCache {
		in.cache = dir("cache")
		if err := os.MkdirAll(in.cache, 0o755); err != nil {
			return backend.Target{}, err
		}
	}
	args = append(args, g.cacheFlags(in.cache)...)
	args = append(args, g.eraArgs...)
	args = append(args, g.flags...)
	args = append(args, g.bucket, in.mount)
	log := filepath.Join(g.env.WorkDir, "gcsfuse.log")
	child, err := proc.Start("gcsfuse", log, os.Environ(), append(slices.Clone(wrap), tools.Pinned(g.env.CPUs, args...)...)...)
	if err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
	}
	in.child = child
	g.instances = append(g.instances, in)
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !Mounted(in.mount) {
		select {
		case <-ctx.Done():
			return backend.Target{}, ctx.Err()
		case <-child.Done():
			return backend.Target{}, fmt.Errorf("backend %q: gcsfuse exited before mounting; see %s", Name, log)
		case <-deadline.C:
			return backend.Target{}, fmt.Errorf("backend %q: not mounted after 30 s; see %s", Name, log)
		case <-tick.C:
		}
	}
	return backend.Target{Dir: in.mount}, nil
}

// cacheFlags are the gcsfuse flags of the cache options, the file cache's in dir when it is on.
// The file cache is seed 002's: unlimited size (max-size-mb -1), and whole files cached on range
// reads only with option file_cache_for_range_read (the seed wrote false).
func (g *Backend) cacheFlags(dir string) []string {
	var args []string
	if g.fileCache {
		// Said either way, as the seed's configuration file says it, not left to gcsfuse's default.
		args = append(args, "--cache-dir="+dir, "--file-cache-max-size-mb=-1", "--file-cache-cache-file-for-range-read="+strconv.FormatBool(g.rangeRead))
	}
	return append(args, g.cacheArgs...)
}

// AddInstance mounts the same bucket from another instance, as a second Cloud Run instance of
// one service does.
func (g *Backend) AddInstance(ctx context.Context, wrap []string) (backend.Target, error) {
	return g.mountInstance(ctx, wrap)
}

// Crash kills the current instance's gcsfuse with SIGKILL, detaches its mount, and throws away
// the writes it had staged on the instance's disk but not yet uploaded: what a lost Cloud Run
// instance loses.
func (g *Backend) Crash() error {
	in := g.current()
	if in == nil {
		return nil
	}
	if err := in.child.Kill(); err != nil {
		return err
	}
	if Mounted(in.mount) {
		if err := mounts.Detach(in.mount); err != nil {
			return fmt.Errorf("backend %q: %w", Name, err)
		}
	}
	return errors.Join(os.RemoveAll(in.staging), os.RemoveAll(in.cache))
}

// Recover mounts the bucket again from a fresh instance: new mount point, empty staging and cache.
func (g *Backend) Recover(ctx context.Context) (backend.Target, error) {
	return g.mountInstance(ctx, g.env.Wrap)
}

// labToken is the token URL of a lab bucket (this process's, or a persistlab lab serve at
// endpoint), if endpoint's host answers one.
func labToken(ctx context.Context, endpoint string) (string, bool) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", false
	}
	tokenURL := u.Scheme + "://" + u.Host + bucket.TokenPath
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, tokenURL, nil)
	if err != nil {
		return "", false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"access_token"`)) {
		return "", false
	}
	return tokenURL, true
}

func reachable(ctx context.Context, endpoint, bucketName string, labBucket bool) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/b/"+bucketName, nil)
	if err != nil {
		return err
	}
	if labBucket {
		req.Header.Set("Authorization", "Bearer "+bucket.LabToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET bucket: HTTP %d", resp.StatusCode)
	}
	return nil
}

// Stats are the bucket's counters since Start and the CPU seconds of every gcsfuse it ran.
func (g *Backend) Stats() backend.Stats {
	var cpu []time.Duration
	for _, in := range g.instances {
		if t, err := proc.CPUTime(in.child.Pid()); err == nil {
			cpu = append(cpu, t)
		}
	}
	if g.lab == nil {
		return backend.StatsOf(nil, cpu...)
	}
	return backend.StatsOf(g.lab.Accounting(), cpu...)
}

// Stop unmounts every instance (waiting for gcsfuse to flush), stops each gcsfuse by its pid, and
// stops the bucket last, since an unmount may still upload to it.
func (g *Backend) Stop(ctx context.Context) error {
	var errs []error
	for _, in := range g.instances {
		errs = append(errs, in.stop(ctx))
	}
	g.instances = nil
	if g.env.Keep && g.lab != nil {
		if _, err := g.lab.Export(g.bucket, filepath.Join(g.env.WorkDir, "bucket")); err != nil {
			errs = append(errs, fmt.Errorf("backend %q: keep the bucket's objects: %w", Name, err))
		}
	}
	return errors.Join(append(errs, g.closeLab())...)
}

// DefaultCeilingProbe is how much ProbeCeiling moves each way: enough for gcsfuse's upload and
// download to reach their pace, little enough to cost a few seconds per run.
const DefaultCeilingProbe = 256 << 20

// WritesSince implements backend.Timeline: the lab bucket's object writes, named by object, with
// gcsfuse's temporary objects as one kind (it syncs a file that grew by uploading the new part
// under .gcsfuse_tmp/ and composing it onto the object). A bucket not in the lab has none.
func (g *Backend) WritesSince(t time.Time) []backend.Write {
	if g.lab == nil {
		return nil
	}
	var out []backend.Write
	for _, w := range g.lab.WritesSince(t) {
		what := strings.TrimPrefix(w.Object, g.bucket+"/")
		if strings.HasPrefix(what, tmpObjectPrefix) {
			what = tmpObjectPrefix + "*"
		}
		out = append(out, backend.Write{What: what, Started: w.Started, Done: w.Done, Bytes: w.Bytes})
	}
	return out
}

// tmpObjectPrefix is where gcsfuse uploads the part of a file to compose onto its object.
const tmpObjectPrefix = ".gcsfuse_tmp/"

// CeilingProbeBytes implements backend.ProbeSpacer: the probe's file staged by gcsfuse and kept
// as an object by the lab bucket, both in the work directory.
func (g *Backend) CeilingProbeBytes() int64 {
	if g.endpoint != "" {
		return 0
	}
	return 2 * g.probeSize
}

// LocalCopies implements backend.LocalCopier: a file being written is staged on the instance's
// disk, kept as an object by the lab bucket (in the work directory; a real bucket's are not), and
// held by the file cache when it is on.
func (g *Backend) LocalCopies() int {
	n := 1
	if g.endpoint == "" {
		n++
	}
	if g.fileCache {
		n++
	}
	return n
}

// ProbeCeiling writes probe bytes through a gcsfuse mount of a lab bucket whose model is off,
// then reads them back through a fresh mount: the most the lab and gcsfuse move on this machine,
// with gcsfuse on the same CPUs as in the cells. A real bucket (option endpoint) is not probed.
func (g *Backend) ProbeCeiling(ctx context.Context) (lab.Ceiling, bool, error) {
	if g.endpoint != "" || g.probeSize == 0 {
		return lab.Ceiling{}, false, nil
	}
	opts := map[string]string{"model": "off"}
	for k, v := range g.env.Options {
		if k == "flags" || k == "bucket" {
			opts[k] = v
		}
	}
	env := g.env
	env.Options, env.Keep = opts, false
	b, err := New(env)
	if err != nil {
		return lab.Ceiling{}, false, err
	}
	probe := b.(*Backend)
	defer probe.Stop(context.WithoutCancel(ctx))
	t, err := probe.Start(ctx)
	if err != nil {
		return lab.Ceiling{}, false, err
	}
	const name, chunk = "persistlab-ceiling.bin", 1 << 20
	buf := make([]byte, chunk)
	for i := range buf {
		buf[i] = byte(i*7 + i>>9)
	}
	t0 := time.Now()
	if err := writeProbe(filepath.Join(t.Dir, name), buf, g.probeSize); err != nil {
		return lab.Ceiling{}, false, fmt.Errorf("backend %q: ceiling probe: %w", Name, err)
	}
	write := time.Since(t0)
	if err := probe.Crash(); err != nil { // a fresh mount reads from the bucket, not a cache
		return lab.Ceiling{}, false, err
	}
	if t, err = probe.Recover(ctx); err != nil {
		return lab.Ceiling{}, false, err
	}
	t0 = time.Now()
	n, err := readProbe(filepath.Join(t.Dir, name), buf)
	if err == nil && n != g.probeSize {
		err = fmt.Errorf("read back %d bytes of %d", n, g.probeSize)
	}
	if err != nil {
		return lab.Ceiling{}, false, fmt.Errorf("backend %q: ceiling probe: %w", Name, err)
	}
	read := time.Since(t0)
	mib := float64(g.probeSize) / (1 << 20)
	return lab.Ceiling{ReadMiBs: mib / read.Seconds(), WriteMiBs: mib / write.Seconds(),
		ReadBytesStat: lab.BucketBytesOut, WriteBytesStat: lab.BucketBytesIn,
		Method: fmt.Sprintf("%s written (1 MiB calls, then close) and read back through a fresh mount, gcsfuse over a lab bucket with the model off",
			param.FormatSize(g.probeSize))}, true, nil
}

func writeProbe(path string, buf []byte, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for left := size; left > 0; left -= int64(len(buf)) {
		if _, err := f.Write(buf[:min(left, int64(len(buf)))]); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close() // gcsfuse uploads at close
}

func readProbe(path string, buf []byte) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
}

func (in *instance) stop(ctx context.Context) error {
	var errs []error
	if Mounted(in.mount) {
		busy, cancel := context.WithTimeout(ctx, 15*time.Second)
		if err := mounts.Unmount(busy, in.mount); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	if err := in.child.Stop(ctx); err != nil {
		errs = append(errs, err)
	}
	if Mounted(in.mount) { // gcsfuse is gone; detach what is left
		if err := mounts.Detach(in.mount); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (g *Backend) closeLab() error {
	if g.lab == nil {
		return nil
	}
	err := g.lab.Close()
	g.lab = nil
	return err
}

// Mounted reports whether dir is a mount point.
func Mounted(dir string) bool { return mounts.Mounted(dir) }
