package bucket

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// serveDownload answers media downloads (the JSON API's /download/... and ?alt=media, the XML API's
// GET /BUCKET/OBJECT on the emulator's host, and HEAD of either) from the object's body, with the
// headers the emulator sends; it reports false for every other request.
func (st *store) serveDownload(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	path := r.URL.EscapedPath()
	seg := segments(path)
	var bucket, object string
	switch {
	case strings.HasPrefix(path, "/download/storage/v1/b/") && len(seg) >= 7 && seg[5] == "o":
		bucket, object = seg[4], strings.Join(seg[6:], "/")
	case strings.HasPrefix(path, "/storage/v1/b/") && len(seg) >= 6 && seg[4] == "o" &&
		(r.Method == http.MethodHead || r.URL.Query().Get("alt") == "media"):
		obj := seg[5:]
		if n := len(obj); n >= 2 && obj[n-1] == "acl" || n >= 3 && obj[n-2] == "acl" {
			return false // the emulator's ACL routes
		}
		bucket, object = seg[3], strings.Join(obj, "/")
	case r.Host == st.public && len(seg) >= 2 && !reservedRoot[seg[0]]:
		bucket, object = seg[0], strings.Join(seg[1:], "/")
	default:
		return false
	}
	bucket, object = unescape(bucket), unescape(object)
	if object == "" {
		return false // "/BUCKET/" lists, in the XML API
	}
	var gen int64
	if g := r.URL.Query().Get("generation"); g != "" {
		var err error
		if gen, err = strconv.ParseInt(g, 10, 64); err != nil {
			http.Error(w, "invalid generation ID", http.StatusBadRequest)
			return true
		}
	}
	// Find and open under the read lock: a commit of a new generation meanwhile cannot mix two
	// generations in one answer, and the open body outlives its replacement.
	st.mu.RLock()
	meta, body, err := st.lookupLocked(bucket, object, gen)
	st.mu.RUnlock()
	if err != nil {
		http.Error(w, http.StatusText(http.StatusNotFound), http.StatusNotFound)
		return true
	}
	defer body.Close()
	if meta.ContentEncoding == "gzip" && !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		if zr, err := gzip.NewReader(body); err == nil {
			// GCS decompresses for a client that does not accept gzip (decompressive
			// transcoding), ignoring Range; the emulator does too, in memory.
			h := w.Header()
			setObjectHeaders(h, meta)
			h.Set("X-Goog-Stored-Content-Encoding", "gzip")
			w.WriteHeader(http.StatusOK)
			if r.Method == http.MethodGet {
				bp := buffers.Get().(*[]byte)
				io.CopyBuffer(w, zr, *bp)
				buffers.Put(bp)
			}
			return true
		}
		body.Seek(0, io.SeekStart) // not gzip after all: served as stored, as the emulator does
	}
	size := meta.Size
	start, last, ranged, satisfiable := byteRange(r.Header.Get("Range"), size)
	h := w.Header()
	status := http.StatusOK
	if ranged && satisfiable {
		status = http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, last, size))
	}
	h.Set("Content-Length", strconv.FormatInt(last-start+1, 10))
	if ranged && !satisfiable {
		status = http.StatusRequestedRangeNotSatisfiable
		h.Set("Accept-Ranges", "bytes")
		h.Set("X-Goog-Generation", strconv.FormatInt(meta.Generation, 10))
		h.Set("Content-Type", "application/xml; charset=UTF-8")
	} else {
		setObjectHeaders(h, meta)
		if meta.ContentEncoding != "" {
			h.Set("Content-Encoding", meta.ContentEncoding)
		}
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead || status == http.StatusRequestedRangeNotSatisfiable {
		return true
	}
	if start > 0 {
		if _, err := body.Seek(start, io.SeekStart); err != nil {
			return true
		}
	}
	// One copy, from the page cache into the connection: the body file mapped and written in
	// pieces (which the bandwidth stage can pace). Reading the file into a buffer first costs a
	// copy more, and sendfile(2) measured slower still on loopback.
	if f, ok := body.(*os.File); ok && size > 0 {
		if m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED); err == nil {
			defer unix.Munmap(m)
			_ = unix.Madvise(m, unix.MADV_SEQUENTIAL)
			writeMapped(w, m, start, last+1)
			return true
		}
	}
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	io.CopyBuffer(w, &io.LimitedReader{R: body, N: last - start + 1}, *bp)
	return true
}

// writeMapped writes m[from:to], a body file mapped into memory, a MiB at a time, dropping each
// piece from the mapping once written (the pages stay in the page cache; the process's resident
// set stays small). Bodies never change once committed, so the mapping stays valid; should the
// file shrink all the same, the fault ends this response instead of the server.
func writeMapped(w io.Writer, m []byte, from, to int64) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(runtime.Error); !ok || !strings.Contains(err.Error(), "fault") {
				panic(r)
			}
		}
	}()
	const piece = 1 << 20
	page := int64(os.Getpagesize())
	for off := from; off < to; {
		end := min(to, (off/piece+1)*piece)
		if _, err := w.Write(m[off:end]); err != nil {
			return
		}
		if done := end / page * page; done > off/page*page {
			_ = unix.Madvise(m[off/page*page:done], unix.MADV_DONTNEED)
		}
		off = end
	}
}

// setObjectHeaders sets the headers the emulator sends with an object's bytes (Content-Encoding
// aside, which transcoding drops).
func setObjectHeaders(h http.Header, meta objectMeta) {
	h.Set("Accept-Ranges", "bytes")
	h.Set("X-Goog-Generation", strconv.FormatInt(meta.Generation, 10))
	h.Set("X-Goog-Metageneration", "1")
	h.Set("X-Goog-Hash", fmt.Sprintf("crc32c=%s,md5=%s", meta.Crc32c, meta.Md5Hash))
	if t, err := time.Parse(timestampFormat, meta.Updated); err == nil {
		h.Set("Last-Modified", t.UTC().Format(http.TimeFormat))
	}
	h.Set("ETag", strconv.Quote(meta.Etag))
	for k, v := range meta.Metadata {
		h.Set("X-Goog-Meta-"+k, v)
	}
	h.Set("Access-Control-Allow-Origin", "*")
	for k, v := range map[string]string{"Content-Type": meta.ContentType, "Cache-Control": meta.CacheControl,
		"Content-Disposition": meta.ContentDisposition, "Content-Language": meta.ContentLanguage} {
		if v != "" {
			h.Set(k, v)
		}
	}
	stored := "identity"
	if meta.ContentEncoding != "" {
		stored = meta.ContentEncoding
	}
	h.Set("X-Goog-Stored-Content-Encoding", stored)
}

// reservedRoot are the first path segments that are not an XML API bucket.
var reservedRoot = map[string]bool{"storage": true, "upload": true, "download": true, "batch": true, "_internal": true, "": true}

// byteRange applies a Range header to an object of size bytes as the emulator does (its handleRange):
// an invalid range means the whole object, a start beyond the end is unsatisfiable (416), ends are
// clamped. last is inclusive; last < start for an empty answer.
func byteRange(header string, size int64) (start, last int64, ranged, satisfiable bool) {
	start, end, err := parseRange(header, size)
	switch {
	case err != nil:
		return 0, size - 1, false, false
	case start >= size:
		return 0, -1, true, false
	case end < start:
		return 0, size - 1, false, false
	}
	return max(start, 0), min(end, size-1), true, true
}

// parseRange reads "bytes=FIRST-LAST", "bytes=FIRST-" and "bytes=-SUFFIX" (the emulator's parseRange).
func parseRange(v string, size int64) (start, end int64, err error) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok || spec == "" {
		return 0, 0, errors.New("not a byte range")
	}
	if spec[0] == '-' {
		n, err := strconv.ParseInt(spec, 10, 64)
		if err != nil {
			return 0, 0, err
		}
		return size + n, size - 1, nil
	}
	a, b, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, 0, errors.New("one range only")
	}
	if start, err = strconv.ParseInt(a, 10, 64); err != nil {
		return 0, 0, err
	}
	if b == "" {
		return start, size - 1, nil
	}
	end, err = strconv.ParseInt(b, 10, 64)
	return start, end, err
}
