package bucket

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
)

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
