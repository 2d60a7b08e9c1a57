package bucket

import (
	"bufio"
	"crypto/md5"
	"encoding"
	"encoding/base64"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
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

// bucketExists is nil, or the emulator's answer to an upload into a bucket that does not exist.
func (st *store) bucketExists(bucket string) error {
	if _, err := st.emu.Backend().GetBucket(bucket); err != nil {
		return errNotFound
	}
	return nil
}

// bufioReaders give multipart parsing large reads of the connection (its own buffer is 4 KiB).
var bufioReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}
