package bucket

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/storage"
)

// maxMetadata bounds the JSON metadata of an upload (a multipart upload's first part, a resumable
// upload's start): the only part of an upload read whole.
const maxMetadata = 1 << 20

// uploadMeta is an upload's JSON metadata, as the emulator reads it (its multipartMetadata and
// resumableUploadBody), plus the checksums a client may send for the server to verify.
type uploadMeta struct {
	Bucket             string            `json:"bucket"`
	Name               string            `json:"name"`
	ContentType        string            `json:"contentType"`
	ContentEncoding    string            `json:"contentEncoding"`
	ContentDisposition string            `json:"contentDisposition"`
	ContentLanguage    string            `json:"contentLanguage"`
	CacheControl       string            `json:"cacheControl"`
	CustomTime         string            `json:"customTime"`
	StorageClass       string            `json:"storageClass"`
	Metadata           map[string]string `json:"metadata"`
	Retention          *struct {
		Mode        string    `json:"mode"`
		RetainUntil time.Time `json:"retainUntilTime"`
	} `json:"retention"`
	Crc32c  string `json:"crc32c"`
	Md5Hash string `json:"md5Hash"`
}

func (u *uploadMeta) objectMeta(q url.Values) objectMeta {
	m := objectMeta{
		StorageClass: u.StorageClass, ContentType: u.ContentType, ContentEncoding: u.ContentEncoding,
		ContentDisposition: u.ContentDisposition, ContentLanguage: u.ContentLanguage, CacheControl: u.CacheControl,
		ACL: aclFor(q.Get("predefinedAcl")), Metadata: u.Metadata, CustomTime: formatCustomTime(u.CustomTime, time.RFC3339Nano),
	}
	if ce := q.Get("contentEncoding"); ce != "" {
		m.ContentEncoding = ce
	}
	if u.Retention != nil {
		m.RetentionMode = u.Retention.Mode
		if !u.Retention.RetainUntil.IsZero() {
			m.RetentionRetainUntil = u.Retention.RetainUntil.Format(timestampFormat)
		}
	}
	return m
}

func formatCustomTime(s, layout string) string {
	t, _ := time.Parse(layout, s)
	return t.Format(timestampFormat)
}

// aclFor is the emulator's ACL of a new object.
func aclFor(predefined string) []storage.ACLRule {
	if predefined == "publicRead" {
		return []storage.ACLRule{{Entity: storage.AllUsers, Role: storage.RoleReader}}
	}
	return []storage.ACLRule{{Entity: "projectOwner-test-project", Role: storage.RoleOwner}}
}

// hasher computes an object's crc32c and md5 as its bytes stream by.
type hasher struct {
	crc hash.Hash32
	md5 hash.Hash
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newHasher() hasher { return hasher{crc: crc32.New(castagnoli), md5: md5.New()} }

func (h hasher) write(b []byte) {
	h.crc.Write(b)
	h.md5.Write(b)
}

func (h hasher) crc32c() string { return base64.StdEncoding.EncodeToString(h.crc.Sum(nil)) }
func (h hasher) md5sum() string { return base64.StdEncoding.EncodeToString(h.md5.Sum(nil)) }

func (h hasher) state() [2][]byte {
	a, _ := h.crc.(encoding.BinaryMarshaler).MarshalBinary()
	b, _ := h.md5.(encoding.BinaryMarshaler).MarshalBinary()
	return [2][]byte{a, b}
}

func (h hasher) restore(s [2][]byte) {
	_ = h.crc.(encoding.BinaryUnmarshaler).UnmarshalBinary(s[0])
	_ = h.md5.(encoding.BinaryUnmarshaler).UnmarshalBinary(s[1])
}

// verify checks the checksums a client sent (X-Goog-Hash, or the metadata's crc32c and md5Hash)
// against the received bytes, as GCS does.
func (h hasher) verify(header http.Header, crc, md5sum string) error {
	for _, v := range header.Values("X-Goog-Hash") {
		for _, kv := range strings.Split(v, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
			switch k {
			case "crc32c":
				crc = val
			case "md5":
				md5sum = val
			}
		}
	}
	if crc != "" && crc != h.crc32c() {
		return failWith(http.StatusBadRequest, "Provided CRC32C %q doesn't match calculated CRC32C %q.", crc, h.crc32c())
	}
	if md5sum != "" && md5sum != h.md5sum() {
		return failWith(http.StatusBadRequest, "Provided MD5 hash %q doesn't match calculated MD5 hash %q.", md5sum, h.md5sum())
	}
	return nil
}

// receive copies body into f from offset off, hashing it, and returns how many bytes it wrote.
// Past the first buffer it pipelines: this goroutine reads the connection while one worker
// hashes and another writes the file, each buffer going back to the reader once both are done
// with it; so the three costs (socket copy, md5, page cache copy) overlap instead of adding up.
// It returns only when the workers are done with every byte it read.
func receive(f *os.File, off int64, body io.Reader, h hasher) (int64, error) {
	set := pipeBuffers.Get().(*[pipeDepth][]byte)
	defer pipeBuffers.Put(set)
	k, err := io.ReadFull(body, set[0])
	if err != nil { // all of it fit in one buffer (or reading failed): no pipeline
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil
		}
		h.write(set[0][:k])
		if _, werr := f.WriteAt(set[0][:k], off); werr != nil && err == nil {
			err = werr
		}
		return int64(k), err
	}
	type chunk struct {
		i   int // which buffer
		n   int
		off int64
	}
	free := make(chan int, pipeDepth)
	toHash, toWrite := make(chan chunk, pipeDepth), make(chan chunk, pipeDepth)
	var pending [pipeDepth]atomic.Int32 // workers still on each buffer
	release := func(i int) {
		if pending[i].Add(-1) == 0 {
			free <- i
		}
	}
	var wg sync.WaitGroup
	var writeErr error
	var writeFailed atomic.Bool // stop reading the connection: nowhere to put the bytes
	wg.Add(2)
	go func() {
		defer wg.Done()
		for c := range toHash {
			h.write(set[c.i][:c.n])
			release(c.i)
		}
	}()
	go func() {
		defer wg.Done()
		for c := range toWrite {
			if writeErr == nil {
				if _, writeErr = f.WriteAt(set[c.i][:c.n], c.off); writeErr != nil {
					writeFailed.Store(true)
				}
			}
			release(c.i)
		}
	}()
	for i := 1; i < pipeDepth; i++ {
		free <- i
	}
	var n int64
	dispatch := func(c chunk) {
		pending[c.i].Store(2)
		toHash <- c
		toWrite <- c
		n += int64(c.n)
	}
	dispatch(chunk{i: 0, n: k, off: off})
	for err == nil && !writeFailed.Load() {
		i := <-free
		k, err = io.ReadFull(body, set[i])
		if k > 0 {
			dispatch(chunk{i: i, n: k, off: off + n})
		} else {
			free <- i
		}
	}
	close(toHash)
	close(toWrite)
	wg.Wait()
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	if writeErr != nil {
		return n, writeErr
	}
	return n, err
}

// pipeDepth buffers of pipeBuffer bytes each carry an upload through receive: 2 MiB per body in
// flight, from a pool.
const (
	pipeDepth  = 4
	pipeBuffer = 512 << 10
)

var pipeBuffers = sync.Pool{New: func() any {
	var set [pipeDepth][]byte
	for i := range set {
		set[i] = make([]byte, pipeBuffer)
	}
	return &set
}}

// serveUpload answers the JSON API's uploads, or reports false to leave the request to the
// emulator (upload sessions the store did not start).
func (st *store) serveUpload(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, "/upload/storage/v1/b/") {
		return false
	}
	seg := segments(path)
	if !(len(seg) == 6 || len(seg) == 7 && seg[6] == "") || seg[5] != "o" {
		return false
	}
	bucket := unescape(seg[4])
	q := r.URL.Query()
	if id := q.Get("upload_id"); id != "" {
		st.sessionsMu.Lock()
		s := st.sessions[id]
		st.sessionsMu.Unlock()
		switch {
		case s == nil:
			return false
		case r.Method == http.MethodPut || r.Method == http.MethodPost:
			st.resumableData(w, r, s)
		case r.Method == http.MethodDelete:
			st.cancel(w, s)
		default:
			return false
		}
		return true
	}
	if r.Method != http.MethodPost {
		return false
	}
	uploadType := q.Get("uploadType")
	if uploadType == "" && r.Header.Get("X-Goog-Upload-Protocol") == "resumable" {
		uploadType = "resumable"
	}
	switch uploadType {
	case "media":
		st.mediaUpload(w, r, bucket, q.Get("name"))
	case "multipart":
		if _, err := contentBoundary(r); err != nil {
			return false // the emulator's parser copes with gsutil's quirks
		}
		st.multipartUpload(w, r, bucket)
	case "resumable":
		st.resumableStart(w, r, bucket)
	default:
		return false
	}
	return true
}

func contentBoundary(r *http.Request) (string, error) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && params["boundary"] == "" {
		err = errors.New("no boundary")
	}
	return params["boundary"], err
}

// mediaUpload is uploadType=media: the body is the object; its metadata is in the query and headers.
func (st *store) mediaUpload(w http.ResponseWriter, r *http.Request, bucket, name string) {
	q := r.URL.Query()
	if name == "" {
		writeError(w, failWith(http.StatusBadRequest, "name is required for simple uploads"))
		return
	}
	cond, err := parseConditions(q)
	if err == nil {
		err = st.bucketExists(bucket)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	meta := objectMeta{
		ContentType: r.Header.Get("Content-Type"), CacheControl: r.Header.Get("Cache-Control"), ContentEncoding: q.Get("contentEncoding"),
		ContentDisposition: r.Header.Get("Content-Disposition"), ContentLanguage: r.Header.Get("Content-Language"),
		CustomTime: formatCustomTime(q.Get("customTime"), timestampFormat), ACL: aclFor(q.Get("predefinedAcl")), Metadata: map[string]string{},
	}
	for key := range r.Header {
		lower := strings.ToLower(key)
		if k := strings.TrimPrefix(lower, "x-goog-meta-"); k != lower {
			meta.Metadata[k] = r.Header.Get(key)
		}
	}
	f, err := st.tempFile()
	if err != nil {
		writeError(w, err)
		return
	}
	p := &pending{bucket: bucket, name: name, meta: meta, cond: cond, path: f.Name()}
	h := newHasher()
	n, err := receive(f, 0, r.Body, h)
	if err != nil {
		err = failWith(http.StatusBadRequest, "reading the upload: %v", err)
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = h.verify(r.Header, "", "")
	}
	if err != nil {
		st.discard(p)
		writeError(w, err)
		return
	}
	p.meta.Size, p.meta.Crc32c, p.meta.Md5Hash = n, h.crc32c(), h.md5sum()
	st.commit(w, r, p, nil)
}

// bucketExists is nil, or the emulator's answer to an upload into a bucket that does not exist.
func (st *store) bucketExists(bucket string) error {
	if _, err := st.emu.Backend().GetBucket(bucket); err != nil {
		return errNotFound
	}
	return nil
}

// bufioReaders give multipart parsing large reads of the connection (its own buffer is 4 KiB).
var bufioReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

// multipartUpload is uploadType=multipart: a JSON metadata part, then the body (parts after the
// first are the object, in order, as the emulator reads them).
func (st *store) multipartUpload(w http.ResponseWriter, r *http.Request, bucket string) {
	q := r.URL.Query()
	cond, err := parseConditions(q)
	if err == nil {
		err = st.bucketExists(bucket)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	boundary, _ := contentBoundary(r)
	br := bufioReaders.Get().(*bufio.Reader)
	br.Reset(r.Body)
	defer func() { br.Reset(nil); bufioReaders.Put(br) }()
	mr := multipart.NewReader(br, boundary)
	part, err := mr.NextPart()
	if err != nil {
		writeError(w, failWith(http.StatusBadRequest, "multipart upload: %v", err))
		return
	}
	var um uploadMeta
	if err := json.NewDecoder(io.LimitReader(part, maxMetadata)).Decode(&um); err != nil {
		writeError(w, failWith(http.StatusBadRequest, "multipart upload metadata: %v", err))
		return
	}
	meta := um.objectMeta(q)
	name := q.Get("name")
	if name == "" {
		name = um.Name
	}
	if name == "" {
		writeError(w, failWith(http.StatusBadRequest, "multipart upload: no object name"))
		return
	}
	f, err := st.tempFile()
	if err != nil {
		writeError(w, err)
		return
	}
	p := &pending{bucket: bucket, name: name, meta: meta, cond: cond, path: f.Name()}
	h := newHasher()
	var size int64
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err == nil {
			p.meta.ContentType = part.Header.Get("Content-Type")
			var n int64
			n, err = receive(f, size, part, h)
			size += n
		}
		if err != nil {
			f.Close()
			st.discard(p)
			writeError(w, failWith(http.StatusBadRequest, "multipart upload: %v", err))
			return
		}
	}
	err = f.Close()
	if err == nil {
		err = h.verify(r.Header, um.Crc32c, um.Md5Hash)
	}
	if err != nil {
		st.discard(p)
		writeError(w, err)
		return
	}
	p.meta.Size, p.meta.Crc32c, p.meta.Md5Hash = size, h.crc32c(), h.md5sum()
	st.commit(w, r, p, nil)
}

// session is a resumable upload the store started.
type session struct {
	id   string
	mu   sync.Mutex // one request of a session at a time
	p    pending
	file *os.File // p.path, open while bytes arrive; nil once the upload ended
	size int64    // bytes received so far
	h    hasher
}

func (s *session) discard() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.p.path)
		s.file = nil
	}
}

// resumableStart begins a resumable upload: the metadata now, the bytes in later requests to the
// session URI it answers in Location.
func (st *store) resumableStart(w http.ResponseWriter, r *http.Request, bucket string) {
	q := r.URL.Query()
	var um uploadMeta
	if r.Body != nil && r.Body != http.NoBody {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxMetadata))
		if err != nil {
			writeError(w, failWith(http.StatusBadRequest, "reading the upload's metadata: %v", err))
			return
		}
		if len(bytes.TrimSpace(body)) > 0 && json.Unmarshal(body, &um) != nil && strings.Contains(r.Header.Get("Content-Type"), "json") {
			writeError(w, failWith(http.StatusBadRequest, "invalid upload metadata"))
			return
		}
	}
	if um.Bucket != "" {
		bucket = um.Bucket
	}
	name := q.Get("name")
	if name == "" {
		name = um.Name
	}
	cond, err := parseConditions(q)
	if err == nil {
		err = st.bucketExists(bucket)
	}
	if err == nil && name == "" {
		err = failWith(http.StatusBadRequest, "resumable upload: no object name")
	}
	if err == nil { // GCS checks preconditions when an upload starts, and again when it ends
		st.mu.RLock()
		var gen int64
		if m, body, lerr := st.lookupLocked(bucket, name, 0); lerr == nil {
			gen = m.Generation
			body.Close()
		}
		st.mu.RUnlock()
		if !cond.met(gen) {
			err = failWith(http.StatusPreconditionFailed, "Precondition failed")
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	f, err := st.tempFile()
	if err != nil {
		writeError(w, err)
		return
	}
	var raw [16]byte
	rand.Read(raw[:])
	s := &session{id: hex.EncodeToString(raw[:]), p: pending{bucket: bucket, name: name, meta: um.objectMeta(q), cond: cond, path: f.Name()}, file: f, h: newHasher()}
	st.sessionsMu.Lock()
	st.sessions[s.id] = s
	st.sessionsMu.Unlock()
	location := fmt.Sprintf("http://%s/upload/storage/v1/b/%s/o?uploadType=resumable&name=%s&upload_id=%s",
		r.Host, url.PathEscape(bucket), url.QueryEscape(name), s.id)
	w.Header().Set("Location", location)
	if r.Header.Get("X-Goog-Upload-Command") == "start" {
		w.Header().Set("X-Goog-Upload-URL", location)
		w.Header().Set("X-Goog-Upload-Status", "active")
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// contentRange is a resumable request's Content-Range: "bytes FIRST-LAST/TOTAL", "bytes */TOTAL",
// with "*" for a total not known yet.
type contentRange struct {
	hasRange    bool
	first, last int64
	total       int64 // -1: not known
}

func parseContentRange(v string) (contentRange, error) {
	c := contentRange{total: -1}
	spec, ok := strings.CutPrefix(v, "bytes ")
	rng, total, ok2 := strings.Cut(spec, "/")
	if !ok || !ok2 {
		return c, fmt.Errorf("invalid Content-Range %q", v)
	}
	var err error
	if total != "*" {
		if c.total, err = strconv.ParseInt(total, 10, 64); err != nil {
			return c, fmt.Errorf("invalid Content-Range %q", v)
		}
	}
	if rng != "*" {
		a, b, ok := strings.Cut(rng, "-")
		if !ok {
			return c, fmt.Errorf("invalid Content-Range %q", v)
		}
		c.hasRange = true
		if c.first, err = strconv.ParseInt(a, 10, 64); err != nil {
			return c, fmt.Errorf("invalid Content-Range %q", v)
		}
		c.last = -1 // "FIRST-*": as much as the body holds
		if b != "*" {
			if c.last, err = strconv.ParseInt(b, 10, 64); err != nil || c.last < c.first-1 {
				return c, fmt.Errorf("invalid Content-Range %q", v)
			}
		}
	}
	return c, nil
}

// resumableData takes one request of a resumable upload: bytes at an offset, a status query
// ("bytes */*"), or the end ("bytes */TOTAL", or a range reaching TOTAL). A chunk is appended whole
// or not at all; bytes sent again (a retry after a lost answer) are skipped.
func (st *store) resumableData(w http.ResponseWriter, r *http.Request, s *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil { // finished or cancelled while this request waited
		writeError(w, failWith(http.StatusNotFound, "Not Found"))
		return
	}
	cr := contentRange{total: -1, hasRange: true, first: s.size, last: -1}
	final := true // no Content-Range: the whole (rest of the) object in this request
	if v := r.Header.Get("Content-Range"); v != "" {
		var err error
		if cr, err = parseContentRange(v); err != nil {
			writeError(w, failWith(http.StatusBadRequest, "%v", err))
			return
		}
		final = cr.total >= 0
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		s.p.meta.ContentType = ct
	} else if s.p.meta.ContentType == "" {
		s.p.meta.ContentType = "application/octet-stream"
	}
	if cr.hasRange {
		if cr.first > s.size {
			writeError(w, failWith(http.StatusBadRequest, "Content-Range starts at %d, but only %d bytes were received", cr.first, s.size))
			return
		}
		if cr.last >= 0 && cr.last < s.size { // all of it received before: a retry after a lost answer
			io.Copy(io.Discard, r.Body)
			cr.first, cr.last = s.size, s.size-1
		}
		saved := s.h.state()
		if _, err := io.CopyN(io.Discard, r.Body, s.size-cr.first); err != nil { // bytes already received
			writeError(w, failWith(http.StatusBadRequest, "reading the upload: %v", err))
			return
		}
		n, err := receive(s.file, s.size, r.Body, s.h)
		if err == nil && cr.last >= 0 && s.size+n != cr.last+1 {
			err = fmt.Errorf("Content-Range says %d bytes, the body held %d", cr.last+1-cr.first, s.size+n-cr.first)
		}
		if err != nil { // keep what was there before this request
			s.h.restore(saved)
			s.file.Truncate(s.size)
			writeError(w, failWith(http.StatusBadRequest, "reading the upload: %v", err))
			return
		}
		s.size += n
	}
	if final && cr.total >= 0 && s.size > cr.total {
		writeError(w, failWith(http.StatusBadRequest, "received %d bytes, more than the total %d", s.size, cr.total))
		return
	}
	if !final || cr.total >= 0 && s.size < cr.total { // more to come
		if s.size > 0 {
			w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", s.size-1))
		}
		w.Header().Set("Content-Length", "0")
		if _, no308 := r.Header["X-Guploader-No-308"]; no308 {
			w.Header().Set("X-Http-Status-Code-Override", "308")
			w.WriteHeader(http.StatusOK)
		} else {
			w.WriteHeader(http.StatusPermanentRedirect)
		}
		return
	}
	st.sessionsMu.Lock()
	delete(st.sessions, s.id)
	st.sessionsMu.Unlock()
	p := s.p
	err := s.file.Close()
	s.file = nil // commit disposes of p.path
	if err == nil {
		err = s.h.verify(r.Header, "", "")
	}
	if err != nil {
		st.discard(&p)
		writeError(w, err)
		return
	}
	p.meta.Size, p.meta.Crc32c, p.meta.Md5Hash = s.size, s.h.crc32c(), s.h.md5sum()
	var header http.Header
	if r.Header.Get("X-Goog-Upload-Command") == "upload, finalize" {
		header = http.Header{"X-Goog-Upload-Status": {"final"}}
	}
	st.commit(w, r, &p, header)
}

// cancel ends a resumable upload without an object, answering 499 as GCS and the emulator do.
func (st *store) cancel(w http.ResponseWriter, s *session) {
	st.sessionsMu.Lock()
	delete(st.sessions, s.id)
	st.sessionsMu.Unlock()
	s.mu.Lock()
	s.discard()
	s.mu.Unlock()
	writeError(w, failWith(499, "upload cancelled"))
}
