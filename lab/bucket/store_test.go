package bucket

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// pattern is a deterministic, incompressible stream: byte i is base[i % len(base)], with a period
// (a prime) that no chunk or buffer size divides, so a misplaced chunk shows.
type pattern struct{ base []byte }

func newPattern(seed byte) pattern {
	base := make([]byte, 1_000_003)
	x := uint32(seed) + 1
	for i := range base {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		base[i] = byte(x)
	}
	return pattern{base: base}
}

// reader streams bytes [off, off+n) of the pattern, without buffering them.
func (p pattern) reader(off, n int64) io.Reader { return &patternReader{p: p, off: off, end: off + n} }

type patternReader struct {
	p        pattern
	off, end int64
}

func (r *patternReader) Read(b []byte) (int, error) {
	if r.off >= r.end {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), r.end-r.off)]
	n := 0
	for n < len(b) {
		i := int((r.off + int64(n)) % int64(len(r.p.base)))
		n += copy(b[n:], r.p.base[i:])
	}
	r.off += int64(n)
	return n, nil
}

// sums are the crc32c and md5 of bytes [0, n) of the pattern.
func (p pattern) sums(n int64) (uint32, []byte) {
	c, m := crc32.New(crc32.MakeTable(crc32.Castagnoli)), md5.New()
	io.Copy(io.MultiWriter(c, m), p.reader(0, n))
	return c.Sum32(), m.Sum(nil)
}

// mustMatch reads r to its end and fails unless it holds exactly bytes [off, off+n) of p.
func (p pattern) mustMatch(t *testing.T, what string, r io.Reader, off, n int64) {
	t.Helper()
	want := p.reader(off, n)
	got, exp := make([]byte, 256<<10), make([]byte, 256<<10)
	var pos int64
	for {
		k, err := io.ReadFull(r, got)
		if k > 0 {
			if _, e := io.ReadFull(want, exp[:k]); e != nil {
				t.Fatalf("%s: more than the %d bytes expected", what, n)
			}
			if !bytes.Equal(got[:k], exp[:k]) {
				t.Fatalf("%s: bytes differ within [%d, %d)", what, off+pos, off+pos+int64(k))
			}
			pos += int64(k)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: after %d bytes: %v", what, pos, err)
		}
	}
	if pos != n {
		t.Fatalf("%s: %d bytes, want %d", what, pos, n)
	}
}

func startLab(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Buckets == nil {
		cfg.Buckets = []string{"bk"}
	}
	if cfg.StorageRoot == "" {
		cfg.StorageRoot = t.TempDir()
	}
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func clientOf(t *testing.T, srv *Server) *storage.Client {
	t.Helper()
	c, err := storage.NewClient(context.Background(), option.WithEndpoint(srv.JSONEndpoint()), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A 64 MiB object goes up as one multipart request and as a resumable upload of many chunks (the
// last one short), through the official client; it comes back byte for byte, whole (the client
// checks the crc32c) and in ranges, through the XML and the JSON API, with the right checksums.
func TestLargeObjectsRoundTrip(t *testing.T) {
	srv := startLab(t, Config{})
	ctx := context.Background()
	bkt := clientOf(t, srv).Bucket("bk")
	const size = 64<<20 + 12345
	p := newPattern(1)
	wantCRC, wantMD5 := p.sums(size)
	for _, tc := range []struct {
		name  string
		chunk int
	}{{"multipart.bin", 0}, {"dir/resumable.bin", 8 << 20}} {
		w := bkt.Object(tc.name).NewWriter(ctx)
		w.ChunkSize = tc.chunk
		w.ContentType = "application/x-test"
		w.Metadata = map[string]string{"gcsfuse_mtime": "2026-01-01T00:00:00Z"}
		if _, err := io.Copy(w, p.reader(0, size)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		a, err := bkt.Object(tc.name).Attrs(ctx) // the emulator's own view of the object
		if err != nil {
			t.Fatal(err)
		}
		if a.Size != size || a.CRC32C != wantCRC || !bytes.Equal(a.MD5, wantMD5) || a.Generation != w.Attrs().Generation ||
			a.ContentType != "application/x-test" || a.Metadata["gcsfuse_mtime"] == "" || a.Metageneration != 1 {
			t.Errorf("%s: attrs %+v", tc.name, a)
		}
		r, err := bkt.Object(tc.name).NewReader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.mustMatch(t, tc.name+" whole", r, 0, size)
		r.Close()
		for _, rg := range [][2]int64{{0, 1}, {5 << 20, 3<<20 + 7}, {size - 100, 100}, {size - 10, -1}, {1234567, -1}} {
			r, err := bkt.Object(tc.name).NewRangeReader(ctx, rg[0], rg[1])
			if err != nil {
				t.Fatal(err)
			}
			n := rg[1]
			if n < 0 {
				n = size - rg[0]
			}
			p.mustMatch(t, fmt.Sprintf("%s range %v", tc.name, rg), r, rg[0], n)
			r.Close()
		}
	}

	// The JSON API's media download, with a suffix range, and HEAD.
	base := "http://" + srv.Host()
	req, _ := http.NewRequest("GET", base+"/storage/v1/b/bk/o/dir%2Fresumable.bin?alt=media", nil)
	req.Header.Set("Range", "bytes=-1000")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusPartialContent || resp.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", size-1000, size-1, size) {
		t.Errorf("suffix range: %d %q", resp.StatusCode, resp.Header.Get("Content-Range"))
	}
	p.mustMatch(t, "suffix range", resp.Body, size-1000, 1000)
	resp.Body.Close()
	resp, err = http.Head(base + "/download/storage/v1/b/bk/o/multipart.bin?alt=media")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ContentLength != size || resp.Header.Get("X-Goog-Generation") == "" || !strings.Contains(resp.Header.Get("X-Goog-Hash"), "crc32c=") {
		t.Errorf("HEAD: %d bytes, headers %v", resp.ContentLength, resp.Header)
	}
	req, _ = http.NewRequest("GET", base+"/download/storage/v1/b/bk/o/multipart.bin?alt=media", nil)
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-", size))
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("range past the end: %d", resp.StatusCode)
	}
	for _, target := range []string{"/download/storage/v1/b/bk/o/nope?alt=media", "/bk/multipart.bin?generation=1"} {
		if resp, err = http.Get(base + target); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", target, resp.StatusCode)
		}
	}
	checkFiles(t, srv)
}

// checkFiles fails unless the store's directory holds exactly one body file per object it holds:
// no upload left behind, no body of a replaced or deleted object.
func checkFiles(t *testing.T, srv *Server) {
	t.Helper()
	entries, err := os.ReadDir(srv.store.dir)
	if err != nil {
		t.Fatal(err)
	}
	srv.store.mu.RLock()
	held := len(srv.store.held)
	srv.store.mu.RUnlock()
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(entries) != held {
		t.Errorf("the store's directory holds %v, for %d objects", names, held)
	}
}

// heapPeak samples the heap in use until stop is closed and returns its peak.
func heapPeak(stop chan struct{}) chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// Bodies are streamed: moving a 256 MiB object up (media upload, and a resumable upload in four
// requests) and down grows the heap by a small fraction of its size (the old in-memory lab held
// several copies of it).
func TestHeapStaysSmallWhileLargeObjectsMove(t *testing.T) {
	srv := startLab(t, Config{})
	const size = 256 << 20
	const bound = 32 << 20 // an eighth of the object; the store needs about a MiB per body in flight
	p := newPattern(2)
	base := "http://" + srv.Host()
	do := func(method, target string, body io.Reader, n int64, header map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, target, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = n
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	measure := func(what string, move func()) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		stop := make(chan struct{})
		peak := heapPeak(stop)
		move()
		close(stop)
		if grew := int64(<-peak) - int64(ms.HeapInuse); grew > bound {
			t.Errorf("%s of %d MiB: heap grew by %d MiB (bound %d MiB)", what, size>>20, grew>>20, bound>>20)
		} else {
			t.Logf("%s of %d MiB: heap grew by %.1f MiB", what, size>>20, float64(grew)/(1<<20))
		}
	}
	measure("media upload", func() {
		resp := do("POST", base+"/upload/storage/v1/b/bk/o?uploadType=media&name=big", p.reader(0, size), size, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("media upload: %d", resp.StatusCode)
		}
	})
	measure("resumable upload", func() {
		resp := do("POST", base+"/upload/storage/v1/b/bk/o?uploadType=resumable&name=big2", strings.NewReader(`{}`), 2, map[string]string{"Content-Type": "application/json"})
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		const chunk = size / 4
		for off := int64(0); off < size; off += chunk {
			total := "*"
			if off+chunk == size {
				total = strconv.Itoa(size)
			}
			resp := do("PUT", loc, p.reader(off, chunk), chunk, map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/%s", off, off+chunk-1, total)})
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if want := map[bool]int{true: 200, false: 308}[total != "*"]; resp.StatusCode != want {
				t.Fatalf("chunk at %d: %d, want %d", off, resp.StatusCode, want)
			}
		}
	})
	measure("download", func() {
		resp := do("GET", base+"/download/storage/v1/b/bk/o/big2?alt=media", nil, 0, nil)
		defer resp.Body.Close()
		p.mustMatch(t, "download", resp.Body, 0, size)
	})
}

// startResumable begins a resumable upload of bk/name over raw HTTP and returns its session URI.
func startResumable(t *testing.T, srv *Server, name, query string) (string, int) {
	t.Helper()
	resp, err := http.Post("http://"+srv.Host()+"/upload/storage/v1/b/bk/o?uploadType=resumable"+query, "application/json",
		strings.NewReader(`{"name":"`+name+`","contentType":"text/plain"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("Location"), resp.StatusCode
}

func put(t *testing.T, uri, contentRange string, body []byte) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("PUT", uri, bytes.NewReader(body))
	if contentRange != "" {
		req.Header.Set("Content-Range", contentRange)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// The resumable protocol as GCS answers it: a chunk sent again is taken once, a status query
// tells what was received, a gap is refused, the end may come as "bytes */TOTAL", preconditions
// are checked when the upload starts and when it ends, and a cancelled upload leaves nothing.
func TestResumableUploadProtocol(t *testing.T) {
	srv := startLab(t, Config{Model: NoDelayModel()})
	uri, status := startResumable(t, srv, "r.txt", "&ifGenerationMatch=0")
	if status != 200 || !strings.Contains(uri, "upload_id=") {
		t.Fatalf("start: %d %q", status, uri)
	}
	data := []byte("0123456789abcdefghij")
	if resp := put(t, uri, "bytes 0-9/*", data[:10]); resp.StatusCode != 308 || resp.Header.Get("Range") != "bytes=0-9" {
		t.Fatalf("first chunk: %d %q", resp.StatusCode, resp.Header.Get("Range"))
	}
	if resp := put(t, uri, "bytes 0-9/*", data[:10]); resp.StatusCode != 308 || resp.Header.Get("Range") != "bytes=0-9" {
		t.Fatalf("the same chunk again: %d %q", resp.StatusCode, resp.Header.Get("Range"))
	}
	if resp := put(t, uri, "bytes 5-14/*", data[5:15]); resp.StatusCode != 308 || resp.Header.Get("Range") != "bytes=0-14" {
		t.Fatalf("an overlapping chunk: %d %q", resp.StatusCode, resp.Header.Get("Range"))
	}
	if resp := put(t, uri, "bytes 17-19/*", data[17:]); resp.StatusCode != 400 {
		t.Fatalf("a gap: %d", resp.StatusCode)
	}
	if resp := put(t, uri, "bytes */*", nil); resp.StatusCode != 308 || resp.Header.Get("Range") != "bytes=0-14" {
		t.Fatalf("status query: %d %q", resp.StatusCode, resp.Header.Get("Range"))
	}
	if resp := put(t, uri, "bytes 15-19/*", data[15:]); resp.StatusCode != 308 {
		t.Fatalf("last bytes: %d", resp.StatusCode)
	}
	if resp := put(t, uri, "bytes */20", nil); resp.StatusCode != 200 {
		t.Fatalf("finish: %d", resp.StatusCode)
	}
	ctx := context.Background()
	obj := clientOf(t, srv).Bucket("bk").Object("r.txt")
	r, err := obj.NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(got, data) || r.Attrs.ContentType != "text/plain" {
		t.Fatalf("read back %q (%s)", got, r.Attrs.ContentType)
	}
	a := srv.Accounting()
	if a.ClassA != 1 || a.Throttled != 0 || a.ByMethod["storage.objects.insert"] != 1 {
		t.Errorf("a resumable upload is one class A write, its data requests none: %+v", a)
	}
	if name, _ := srv.LastWriteUnder("bk", "r.txt"); name != "bk/r.txt" {
		t.Errorf("last write %q", name)
	}

	// ifGenerationMatch=0 on an existing object fails when the upload starts ...
	time.Sleep(PublishedObjectUpdateInterval)
	if _, status := startResumable(t, srv, "r.txt", "&ifGenerationMatch=0"); status != http.StatusPreconditionFailed {
		t.Errorf("start against an existing object: %d", status)
	}
	// ... and a generation that changed while the upload ran fails it at the end.
	attrs, _ := obj.Attrs(ctx)
	uri, _ = startResumable(t, srv, "r.txt", "&ifGenerationMatch="+strconv.FormatInt(attrs.Generation, 10))
	put(t, uri, "bytes 0-2/*", []byte("new"))
	time.Sleep(PublishedObjectUpdateInterval)
	w := obj.NewWriter(ctx)
	w.Write([]byte("someone else"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if resp := put(t, uri, "bytes */3", nil); resp.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("finish after the object changed: %d", resp.StatusCode)
	}
	// A cancelled upload: 499, and nothing left behind.
	uri, _ = startResumable(t, srv, "cancelled.txt", "")
	put(t, uri, "bytes 0-2/*", []byte("abc"))
	req, _ := http.NewRequest("DELETE", uri, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 499 {
		t.Errorf("cancel: %d", resp.StatusCode)
	}
	if resp := put(t, uri, "bytes 3-5/6", []byte("def")); resp.StatusCode != 404 {
		t.Errorf("data after cancel: %d", resp.StatusCode)
	}
	checkFiles(t, srv)
	names, _ := srv.ObjectNames("bk")
	if len(names) != 1 || names[0] != "r.txt" {
		t.Errorf("bucket holds %v", names)
	}
}

// A checksum the client sends is verified, as GCS does.
func TestUploadChecksumsAreVerified(t *testing.T) {
	srv := startLab(t, Config{})
	w := clientOf(t, srv).Bucket("bk").Object("sum").NewWriter(context.Background())
	w.ChunkSize = 0
	w.SendCRC32C = true
	w.CRC32C = 12345 // not the data's
	w.Write([]byte("data"))
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "CRC32C") {
		t.Errorf("a wrong crc32c: %v", err)
	}
	if names, _ := srv.ObjectNames("bk"); len(names) != 0 {
		t.Errorf("bucket holds %v", names)
	}
}

// A download that started before the object was replaced ends with the bytes of the generation it
// started with.
func TestDownloadKeepsItsGenerationAcrossAReplace(t *testing.T) {
	srv := startLab(t, Config{})
	ctx := context.Background()
	obj := clientOf(t, srv).Bucket("bk").Object("db")
	const size = 8 << 20
	p, q := newPattern(3), newPattern(4)
	for i, src := range []pattern{p, q} {
		if i == 1 {
			resp, err := http.Get("http://" + srv.Host() + "/bk/db")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			first := io.LimitReader(resp.Body, 1<<20)
			p.mustMatch(t, "before the replace", first, 0, 1<<20)
			defer p.mustMatch(t, "after the replace", resp.Body, 1<<20, size-(1<<20))
		}
		w := obj.NewWriter(ctx)
		io.Copy(w, src.reader(0, size))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	r, err := obj.NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q.mustMatch(t, "the new generation", r, 0, size)
	r.Close()
}

// The emulator's own views of an object the store wrote (metadata, listing) carry its size and
// checksums; its metadata changes (patch, ACL) leave the body and the sums alone; delete frees the
// body's file; names need not be file names.
func TestEmulatorKeepsTheStoresMetadata(t *testing.T) {
	srv := startLab(t, Config{Model: Model{}})
	ctx := context.Background()
	bkt := clientOf(t, srv).Bucket("bk")
	base := "http://" + srv.Host()
	resp, err := http.Post(base+"/upload/storage/v1/b/bk/o?uploadType=media&name=a%2Fb&predefinedAcl=publicRead", "text/csv", strings.NewReader("1,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	var created map[string]any
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	it := bkt.Objects(ctx, &storage.Query{Prefix: "a/"})
	a, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	crc, sum := crc32.Checksum([]byte("1,2\n"), crc32.MakeTable(crc32.Castagnoli)), md5.Sum([]byte("1,2\n"))
	if a.Name != "a/b" || a.Size != 4 || a.CRC32C != crc || !bytes.Equal(a.MD5, sum[:]) || a.ContentType != "text/csv" ||
		fmt.Sprint(created["generation"]) != strconv.FormatInt(a.Generation, 10) || len(a.ACL) != 1 || a.ACL[0].Entity != storage.AllUsers {
		t.Errorf("listed %+v; upload answered %v", a, created)
	}
	if _, err := it.Next(); !errors.Is(err, iterator.Done) {
		t.Errorf("a second object under a/: %v", err)
	}
	obj := bkt.Object("a/b")
	if _, err := obj.Update(ctx, storage.ObjectAttrsToUpdate{Metadata: map[string]string{"k": "v"}, ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	if err := obj.ACL().Set(ctx, storage.AllAuthenticatedUsers, storage.RoleReader); err != nil {
		t.Fatal(err)
	}
	r, err := obj.NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r) // the client checks the crc32c
	r.Close()
	if b, err := obj.Attrs(ctx); err != nil || string(got) != "1,2\n" || b.Size != 4 || b.CRC32C != crc || b.Generation != a.Generation ||
		b.Metadata["k"] != "v" || b.ContentType != "text/plain" {
		t.Errorf("after patch and ACL change: read %q, attrs %+v (%v)", got, b, err)
	}
	// Names that are no file names, and a directory placeholder beside an object of the same stem.
	for _, name := range []string{"a", "a//b", "../up", "dir/", "dir/x", " spaced & odd?"} {
		w := bkt.Object(name).NewWriter(ctx)
		w.Write([]byte(name))
		if err := w.Close(); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		r, err := bkt.Object(name).NewReader(ctx)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		got, _ := io.ReadAll(r)
		r.Close()
		if string(got) != name {
			t.Errorf("%q reads %q", name, got)
		}
	}
	checkFiles(t, srv)
	if err := obj.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	checkFiles(t, srv)
	names, _ := srv.ObjectNames("bk")
	if len(names) != 6 {
		t.Errorf("bucket holds %q", names)
	}
}

// Compose concatenates the sources' bodies (one of them the destination itself, as appends do);
// copy and rewrite copy a body, with the metadata rules of the emulator.
func TestComposeAndCopy(t *testing.T) {
	srv := startLab(t, Config{Model: Model{}})
	ctx := context.Background()
	bkt := clientOf(t, srv).Bucket("bk")
	p := newPattern(5)
	const part = 3<<20 + 1
	for i, name := range []string{"log", "tail"} {
		w := bkt.Object(name).NewWriter(ctx)
		w.ContentType = "application/x-log"
		io.Copy(w, p.reader(int64(i)*part, part))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	log := bkt.Object("log")
	a, err := log.ComposerFrom(log, bkt.Object("tail")).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantCRC, _ := p.sums(2 * part)
	if a.Size != 2*part || a.CRC32C != wantCRC {
		t.Errorf("composed %+v", a)
	}
	r, err := log.NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.mustMatch(t, "composed", r, 0, 2*part)
	r.Close()
	if _, err := bkt.Object("copy").If(storage.Conditions{DoesNotExist: true}).CopierFrom(log).Run(ctx); err != nil {
		t.Fatal(err)
	}
	c := bkt.Object("copy2").CopierFrom(log)
	c.ContentType = "text/plain"
	b, err := c.Run(ctx) // a rewrite
	if err != nil {
		t.Fatal(err)
	}
	if b.Size != 2*part || b.CRC32C != wantCRC || b.ContentType != "text/plain" {
		t.Errorf("rewritten %+v", b)
	}
	for _, name := range []string{"copy", "copy2"} {
		r, err := bkt.Object(name).NewReader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.mustMatch(t, name, r, 0, 2*part)
		r.Close()
	}
	if _, err := bkt.Object("copy").If(storage.Conditions{DoesNotExist: true}).CopierFrom(log).Run(ctx); err == nil || !strings.Contains(err.Error(), "412") {
		t.Errorf("copy onto an existing object with ifGenerationMatch=0: %v", err)
	}
	checkFiles(t, srv)
}

// Snapshot copies objects server-side; later writes to the source leave the copy alone.
func TestSnapshotCopiesObjects(t *testing.T) {
	srv := startLab(t, Config{Model: Model{}})
	ctx := context.Background()
	bkt := clientOf(t, srv).Bucket("bk")
	write := func(name, data string) {
		w := bkt.Object(name).NewWriter(ctx)
		w.Write([]byte(data))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("db/0001.ltx", "one")
	write("db/0002.ltx", "two")
	write("other", "not copied")
	if n, err := srv.Snapshot("bk", "pos", "db/"); err != nil || n != 2 {
		t.Fatalf("snapshot: %d, %v", n, err)
	}
	write("db/0001.ltx", "changed")
	names, _ := srv.ObjectNames("pos")
	if strings.Join(names, ",") != "db/0001.ltx,db/0002.ltx" {
		t.Errorf("snapshot holds %v", names)
	}
	r, err := clientOf(t, srv).Bucket("pos").Object("db/0001.ltx").NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "one" {
		t.Errorf("snapshot's copy reads %q", got)
	}
}

// Bodies live under StorageRoot, in a directory of the server's own that Close removes.
func TestStorageRoot(t *testing.T) {
	root := t.TempDir()
	srv, err := Start(Config{Buckets: []string{"bk"}, StorageRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	w := clientOf(t, srv).Bucket("bk").Object("kept").NewWriter(context.Background())
	w.Write([]byte("on disk"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(srv.store.dir) != root {
		t.Errorf("bodies in %s, not under %s", srv.store.dir, root)
	}
	checkFiles(t, srv)
	srv.Close()
	if left, _ := os.ReadDir(root); len(left) != 0 {
		t.Errorf("Close left %d entries in %s", len(left), root)
	}
}

// Concurrent uploads of distinct objects all land.
func TestConcurrentUploads(t *testing.T) {
	srv := startLab(t, Config{Model: Model{}})
	ctx := context.Background()
	bkt := clientOf(t, srv).Bucket("bk")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := bkt.Object("dir/f" + strconv.Itoa(i)).NewWriter(ctx)
			w.ChunkSize = 256 << 10
			io.Copy(w, newPattern(byte(i)).reader(0, 1<<20+int64(i)))
			errs <- w.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		r, err := bkt.Object("dir/f" + strconv.Itoa(i)).NewReader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		newPattern(byte(i)).mustMatch(t, "dir/f"+strconv.Itoa(i), r, 0, 1<<20+int64(i))
		r.Close()
	}
	checkFiles(t, srv)
}

// The model still shapes the bodies the store streams: at 16 MiB/s per stream, 8 MiB take half
// a second each way.
func TestBandwidthStagePacesStreamedBodies(t *testing.T) {
	srv := startLab(t, Config{Model: Model{StreamBytesPerSecond: 16 << 20}})
	const size = 8 << 20
	p := newPattern(6)
	t0 := time.Now()
	req, _ := http.NewRequest("POST", "http://"+srv.Host()+"/upload/storage/v1/b/bk/o?uploadType=media&name=paced", p.reader(0, size))
	req.ContentLength = size
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if d := time.Since(t0); resp.StatusCode != 200 || d < 450*time.Millisecond {
		t.Errorf("upload: %d after %v, want 200 after 0.5 s", resp.StatusCode, d)
	}
	t0 = time.Now()
	if resp, err = http.Get("http://" + srv.Host() + "/download/storage/v1/b/bk/o/paced?alt=media"); err != nil {
		t.Fatal(err)
	}
	p.mustMatch(t, "paced download", resp.Body, 0, size)
	resp.Body.Close()
	if d := time.Since(t0); d < 450*time.Millisecond {
		t.Errorf("download took %v, want 0.5 s", d)
	}
}

// A form upload (the XML API's POST of an HTML form) streams into the store: a 64 MiB file grows
// the heap by a small fraction of its size, puts nothing in the temporary directory while it
// arrives, and reads back byte for byte with the form's metadata.
func TestFormUploadStreams(t *testing.T) {
	tmp := t.TempDir()
	srv := startLab(t, Config{})
	t.Setenv("TMPDIR", tmp)
	const size = 64 << 20
	const bound = size / 4 // the store holds about 2 MiB per body in flight
	p := newPattern(5)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	mostSent, resume := make(chan struct{}), make(chan struct{})
	go func() {
		for _, kv := range [][2]string{{"key", "dir/form.bin"}, {"Content-Type", "application/x-test"}, {"x-goog-meta-origin", "form"}, {"success_action_status", "201"}} {
			mw.WriteField(kv[0], kv[1])
		}
		fw, _ := mw.CreateFormFile("file", "form.bin")
		io.Copy(fw, p.reader(0, size*3/4))
		close(mostSent)
		<-resume
		io.Copy(fw, p.reader(size*3/4, size/4))
		pw.CloseWithError(mw.Close())
	}()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	stop := make(chan struct{})
	peak := heapPeak(stop)
	type answer struct {
		status int
		body   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post("http://"+srv.Host()+"/bk", mw.FormDataContentType(), pr)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- answer{status: resp.StatusCode, body: string(body)}
	}()
	<-mostSent
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("with %d of %d MiB sent, the temporary directory holds %s", size*3/4>>20, size>>20, left[0].Name())
	}
	close(resume)
	a := <-answered
	close(stop)
	if grew := int64(<-peak) - int64(ms.HeapInuse); grew > bound {
		t.Errorf("form upload of %d MiB: heap grew by %d MiB (bound %d MiB)", size>>20, grew>>20, bound>>20)
	}
	if a.err != nil || a.status != http.StatusCreated || !strings.Contains(a.body, "<Key>dir/form.bin</Key>") {
		t.Fatalf("form upload: HTTP %d %v\n%s", a.status, a.err, a.body)
	}
	attrs, err := clientOf(t, srv).Bucket("bk").Object("dir/form.bin").Attrs(context.Background())
	crc, _ := p.sums(size)
	if err != nil || attrs.Size != size || attrs.CRC32C != crc || attrs.ContentType != "application/x-test" || attrs.Metadata["origin"] != "form" {
		t.Fatalf("attributes %+v, %v", attrs, err)
	}
	resp, err := http.Get("http://" + srv.Host() + "/download/storage/v1/b/bk/o/dir%2Fform.bin?alt=media")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p.mustMatch(t, "read back", resp.Body, 0, size)
	checkFiles(t, srv)
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("after the upload, the temporary directory holds %s", left[0].Name())
	}
}

// A form the store cannot take is refused with an XML error naming what is wrong, and leaves no
// file behind.
func TestFormUploadRefusals(t *testing.T) {
	srv := startLab(t, Config{})
	post := func(fields [][2]string, file string) (int, string) {
		t.Helper()
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for _, kv := range fields {
			mw.WriteField(kv[0], kv[1])
		}
		if file != "" {
			fw, _ := mw.CreateFormFile("file", "f")
			fw.Write([]byte(file))
		}
		mw.Close()
		resp, err := http.Post("http://"+srv.Host()+"/bk", mw.FormDataContentType(), &buf)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var e struct{ Message string }
		if xml.Unmarshal(body, &e) == nil {
			return resp.StatusCode, e.Message
		}
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct {
		fields [][2]string
		file   string
		want   string
	}{
		{nil, "bytes", `no field "key"`},
		{[][2]string{{"key", "k"}}, "", `no field "file"`},
		{[][2]string{{"key", "k"}, {"success_action_status", "302"}}, "bytes", "want 200, 201 or 204"},
		{[][2]string{{"key", "k"}, {"x-goog-meta-big", strings.Repeat("x", maxMetadata)}}, "bytes", "the most the lab reads"},
	} {
		if status, msg := post(tc.fields, tc.file); status != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("fields %.60q: HTTP %d %q, want 400 saying %q", tc.fields, status, msg, tc.want)
		}
	}
	if status, body := post([][2]string{{"key", "k"}}, "bytes"); status != http.StatusNoContent || body != "" {
		t.Errorf("a valid form: HTTP %d %q, want 204 and no body", status, body)
	}
	checkFiles(t, srv)
}
