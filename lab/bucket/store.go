package bucket

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// store keeps object bodies in files and moves them without whole-object copies. It sits in front
// of the emulator, whose in-memory backend keeps every object's metadata (so listings, metadata
// reads, patches, deletes, preconditions and generations stay the emulator's) but, for the objects
// the store wrote, no body: their size, crc32c and md5 are given to it with empty content, which
// it keeps. The store answers the requests that carry bodies: uploads (media, multipart,
// resumable, the XML API's form upload), media downloads, compose and copy/rewrite. The emulator alone would read every
// upload into memory, re-append and re-hash the whole object on each chunk of a resumable upload
// (quadratic), and keep every body in the heap.
//
// An upload streams into a file (one pooled buffer, hashed on the way), then commit renames it
// to the object's body and stores the metadata in the emulator's backend under the write lock,
// with the upload's preconditions checked atomically by the backend. A download looks the object
// up and opens its body under the read lock, so it serves one generation whatever is committed
// after. Objects the emulator itself wrote (a multipart upload whose Content-Type the store cannot
// parse, which it leaves to it) keep their body in the emulator, and are served from there. The
// lab serves none of the emulator's other routes (routes.go).
type store struct {
	emu     *fakestorage.Server
	emuHTTP http.Handler
	public  string // "localhost:PORT", the host the emulator answers as
	dir     string // bodies, and uploads still arriving; one file system, for rename

	// mu orders commits against everything else: a commit, and every request the emulator
	// answers that may change an object, take it for writing; emulator reads and the opening of
	// a download take it for reading. Bodies stream outside it (copies under it are hard links).
	mu      sync.RWMutex
	held    map[objectKey]heldBody // the objects whose body is a file of the store
	lastGen int64                  // the latest generation given out; generations increase strictly
	seq     uint64                 // names body files

	sessionsMu sync.Mutex
	sessions   map[string]*session // resumable uploads in progress, by upload_id
}

type objectKey struct{ bucket, name string }

// heldBody is the body file of an object's current generation, and the sums the store computed.
type heldBody struct {
	gen            int64
	file           string
	size           int64
	crc32c, md5sum string
}

func newStore(emu *fakestorage.Server, public, dir string) *store {
	return &store{emu: emu, emuHTTP: emu.HTTPHandler(), public: public, dir: dir, held: map[objectKey]heldBody{}, sessions: map[string]*session{}}
}

// close abandons the resumable uploads in progress.
func (st *store) close() {
	st.sessionsMu.Lock()
	defer st.sessionsMu.Unlock()
	for id, s := range st.sessions {
		s.mu.Lock()
		s.discard()
		s.mu.Unlock()
		delete(st.sessions, id)
	}
}

// objectMeta is an object's metadata as the store reads and writes it in the emulator's backend.
type objectMeta struct {
	Size                 int64
	StorageClass         string
	ContentType          string
	ContentEncoding      string
	ContentDisposition   string
	ContentLanguage      string
	CacheControl         string
	Crc32c               string
	Md5Hash              string
	Etag                 string
	ACL                  []storage.ACLRule
	Metadata             map[string]string
	Created              string
	Updated              string
	CustomTime           string
	Generation           int64
	RetentionMode        string
	RetentionRetainUntil string
}

const timestampFormat = "2006-01-02T15:04:05.999999Z07:00" // the emulator's

var errNotFound = failWith(http.StatusNotFound, "Not Found")

// lookupLocked finds bucket/name (at generation gen, if not 0): its metadata and its body, a file
// of the store or the emulator's bytes. Call with mu held.
func (st *store) lookupLocked(bucket, name string, gen int64) (objectMeta, io.ReadSeekCloser, error) {
	obj, err := st.emu.Backend().GetObjectWithGeneration(bucket, name, gen) // 0: the current one
	if err != nil {
		return objectMeta{}, nil, errNotFound
	}
	m := objectMeta{
		Size: obj.Size, StorageClass: obj.StorageClass, ContentType: obj.ContentType, ContentEncoding: obj.ContentEncoding,
		ContentDisposition: obj.ContentDisposition, ContentLanguage: obj.ContentLanguage, CacheControl: obj.CacheControl,
		Crc32c: obj.Crc32c, Md5Hash: obj.Md5Hash, Etag: obj.Etag, ACL: obj.ACL, Metadata: obj.Metadata, Created: obj.Created,
		Updated: obj.Updated, CustomTime: obj.CustomTime, Generation: obj.Generation,
		RetentionMode: obj.RetentionMode, RetentionRetainUntil: obj.RetentionRetainUntil,
	}
	if h, ok := st.held[objectKey{bucket, name}]; ok && h.gen == obj.Generation {
		obj.Content.Close()
		f, err := os.Open(h.file)
		return m, f, err
	}
	return m, obj.Content, nil
}

// putMetaLocked stores m as the metadata of bucket/name in the emulator's backend, with an empty
// body there, if cond holds for the object's current generation (checked by the backend, under its
// own lock). The backend keeps a size and sums it is given, and computes them only when they are
// missing. Call with mu held.
func (st *store) putMetaLocked(bucket, name string, m objectMeta, cond conditions) error {
	// A value of the backend's object type (its package is internal: the type has no name here),
	// every field of which is set below.
	obj, _ := st.emu.Backend().GetObject("", "")
	obj.BucketName, obj.Name, obj.Size, obj.Generation = bucket, name, m.Size, m.Generation
	obj.StorageClass, obj.ContentType, obj.ContentEncoding = m.StorageClass, m.ContentType, m.ContentEncoding
	obj.ContentDisposition, obj.ContentLanguage, obj.CacheControl = m.ContentDisposition, m.ContentLanguage, m.CacheControl
	obj.Crc32c, obj.Md5Hash, obj.Etag, obj.ACL, obj.Metadata = m.Crc32c, m.Md5Hash, m.Etag, m.ACL, m.Metadata
	obj.Created, obj.Updated, obj.CustomTime = m.Created, m.Updated, m.CustomTime
	obj.Deleted = time.Time{}.Format(timestampFormat) // as the emulator stores "not deleted"
	obj.RetentionMode, obj.RetentionRetainUntil = m.RetentionMode, m.RetentionRetainUntil
	obj.Content = emptyBody{}
	created, err := st.emu.Backend().CreateObject(obj, cond)
	if err != nil {
		if err.Error() == "Precondition failed" { // the backend's PreConditionFailed
			return failWith(http.StatusPreconditionFailed, "Precondition failed")
		}
		return err
	}
	return created.Close()
}

type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error)           { return 0, io.EOF }
func (emptyBody) Seek(int64, int) (int64, error)     { return 0, nil }
func (emptyBody) Close() error                       { return nil }
func (c conditions) ConditionsMet(active int64) bool { return c.met(active) }

// nextGeneration is a new generation, like the emulator's (microseconds since 1970) but strictly
// increasing, so two writes within a microsecond still differ. Call with mu held.
func (st *store) nextGeneration() int64 {
	g := time.Now().UnixMicro()
	if g <= st.lastGen {
		g = st.lastGen + 1
	}
	st.lastGen = g
	return g
}

// conditions are a write's preconditions (ifGenerationMatch and friends). The emulator honours
// them on multipart uploads only; GCS on every write, and so does the store.
type conditions struct {
	genMatch, genNotMatch, metaMatch, metaNotMatch *int64
}

func parseConditions(q url.Values) (conditions, error) {
	var c conditions
	for key, into := range map[string]**int64{"ifGenerationMatch": &c.genMatch, "ifGenerationNotMatch": &c.genNotMatch,
		"ifMetagenerationMatch": &c.metaMatch, "ifMetagenerationNotMatch": &c.metaNotMatch} {
		if v := q.Get(key); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return c, failWith(http.StatusBadRequest, "invalid %s %q", key, v)
			}
			*into = &n
		}
	}
	return c, nil
}

// met reports whether the conditions hold for an object of generation gen (0: none). The emulator
// keeps no metageneration: every object it holds has metageneration 1.
func (c conditions) met(gen int64) bool {
	meta := int64(0)
	if gen != 0 {
		meta = 1
	}
	switch {
	case c.genMatch != nil && *c.genMatch != gen, c.genNotMatch != nil && *c.genNotMatch == gen:
		return false
	case c.metaMatch != nil && (gen == 0 || *c.metaMatch != meta), c.metaNotMatch != nil && gen != 0 && *c.metaNotMatch == meta:
		return false
	}
	return true
}

// pending is a received body on its way into the bucket.
type pending struct {
	bucket, name string
	meta         objectMeta // Size and the sums set; the rest as the upload gave it
	cond         conditions
	path         string // a closed file under dir; commit takes it over
}

func (st *store) discard(p *pending) { os.Remove(p.path) }

// errStatus is an error with the HTTP status the client gets for it.
type errStatus struct {
	status int
	msg    string
}

func (e *errStatus) Error() string { return e.msg }

func failWith(status int, format string, args ...any) error {
	return &errStatus{status: status, msg: fmt.Sprintf(format, args...)}
}

// commit makes p the current generation of its object, if its preconditions hold, and answers with
// the emulator's own rendering of the new object (as its uploads do). It always disposes of p.path.
func (st *store) commit(w http.ResponseWriter, r *http.Request, p *pending, header http.Header) {
	st.mu.Lock()
	defer st.mu.Unlock()
	gen, err := st.commitLocked(p)
	if err != nil {
		writeError(w, err)
		return
	}
	st.renderObject(w, r, p.bucket, p.name, gen, header)
}

func (st *store) commitLocked(p *pending) (int64, error) {
	defer os.Remove(p.path) // gone already if renamed
	if _, err := st.emu.Backend().GetBucket(p.bucket); err != nil {
		return 0, errNotFound
	}
	st.seq++
	body := filepath.Join(st.dir, "o"+strconv.FormatUint(st.seq, 10))
	if err := os.Rename(p.path, body); err != nil {
		return 0, err
	}
	now := time.Now().Format(timestampFormat)
	m := p.meta
	m.Generation, m.Created, m.Updated = st.nextGeneration(), now, now
	if m.StorageClass == "" {
		m.StorageClass = "STANDARD"
	}
	if m.Etag == "" {
		m.Etag = m.Md5Hash
	}
	if m.CustomTime == "" {
		m.CustomTime = time.Time{}.Format(timestampFormat)
	}
	if err := st.putMetaLocked(p.bucket, p.name, m, p.cond); err != nil {
		os.Remove(body)
		return 0, err
	}
	key := objectKey{p.bucket, p.name}
	if old, ok := st.held[key]; ok {
		os.Remove(old.file) // open downloads keep reading it
	}
	st.held[key] = heldBody{gen: m.Generation, file: body, size: m.Size, crc32c: m.Crc32c, md5sum: m.Md5Hash}
	return m.Generation, nil
}

// reconcileLocked brings the store's bodies in line with what the emulator holds for bucket/name
// after the emulator changed it: a body whose object is gone or was replaced by one the emulator
// keeps is removed; sums the emulator recomputed from the empty body it holds (ACL changes do)
// are put back. name "" reconciles every object. Call with mu held.
func (st *store) reconcileLocked(bucket, name string) {
	for key, h := range st.held {
		if name != "" && key != (objectKey{bucket, name}) {
			continue
		}
		obj, err := st.emu.Backend().GetObject(key.bucket, key.name)
		switch {
		case err != nil || obj.Generation != h.gen:
			os.Remove(h.file)
			delete(st.held, key)
		case obj.Size != h.size || obj.Crc32c != h.crc32c || obj.Md5Hash != h.md5sum:
			if m, body, err := st.lookupLocked(key.bucket, key.name, 0); err == nil {
				body.Close()
				m.Size, m.Crc32c, m.Md5Hash, m.Etag = h.size, h.crc32c, h.md5sum, h.md5sum
				_ = st.putMetaLocked(key.bucket, key.name, m, conditions{})
			}
		}
		if err == nil {
			obj.Close()
		}
	}
}

// renderObject answers with the emulator's JSON resource of bucket/name at generation gen (as the
// emulator's uploads answer), adding header. Call with mu held.
func (st *store) renderObject(w http.ResponseWriter, r *http.Request, bucket, name string, gen int64, header http.Header) {
	rec := st.objectJSON(r, bucket, name, gen)
	for k, v := range header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(rec.body.Len()))
	w.WriteHeader(rec.status)
	w.Write(rec.body.Bytes())
}

func (st *store) objectJSON(r *http.Request, bucket, name string, gen int64) *recorder {
	target := "/storage/v1/b/" + url.PathEscape(bucket) + "/o/" + url.PathEscape(name) + "?projection=full&generation=" + strconv.FormatInt(gen, 10)
	rec := &recorder{header: http.Header{}}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, target, nil)
	if err != nil {
		rec.WriteHeader(http.StatusInternalServerError)
		return rec
	}
	req.Host = st.public
	st.emuHTTP.ServeHTTP(rec, req)
	return rec
}

// recorder keeps a small in-process response of the emulator.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// writeError answers as the emulator does: a JSON API error.
func writeError(w http.ResponseWriter, err error) {
	status, msg := http.StatusInternalServerError, err.Error()
	var es *errStatus
	if errors.As(err, &es) {
		status = es.status
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg,
		"errors": []map[string]string{{"domain": "global", "reason": http.StatusText(status), "message": msg}}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// ServeHTTP answers body-carrying requests itself and hands every other request to the emulator.
func (st *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if st.serveUpload(w, r) || st.serveForm(w, r) || st.serveDownload(w, r) || st.serveCopy(w, r) {
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		st.mu.RLock()
		defer st.mu.RUnlock()
		st.emuHTTP.ServeHTTP(w, r)
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.emuHTTP.ServeHTTP(w, r)
	op := opOf(r)
	if op.Object == "" || op.Bucket == "" {
		st.reconcileLocked("", "") // not known which object (a bucket's deletion): all of them
		return
	}
	st.reconcileLocked(op.Bucket, op.Object)
	if i := strings.LastIndex(op.Object, "/acl"); i > 0 { // .../o/NAME/acl[/ENTITY] changes NAME
		st.reconcileLocked(op.Bucket, op.Object[:i])
	}
}

// segments splits an escaped path into its segments; a trailing "/" leaves an empty last one.
func segments(escapedPath string) []string {
	return strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
}

func unescape(s string) string {
	v, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return v
}

// buffers are the store's copy buffers: one per body in flight.
var buffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

func (st *store) tempFile() (*os.File, error) { return os.CreateTemp(st.dir, "upload-") }

// copyBodyLocked makes a new file holding body (from lookupLocked): a hard link when it is a
// file of the store (bodies never change once written), else a copy. Call with mu held.
func (st *store) copyBodyLocked(body io.ReadSeekCloser) (string, error) {
	f, err := st.tempFile()
	if err != nil {
		return "", err
	}
	if src, ok := body.(*os.File); ok {
		f.Close()
		os.Remove(f.Name())
		if err := os.Link(src.Name(), f.Name()); err == nil {
			return f.Name(), nil
		}
		if f, err = os.Create(f.Name()); err != nil {
			return "", err
		}
	}
	_, err = io.Copy(f, body) // copy_file_range(2) between files
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// snapshotLocked copies every object of src whose name starts with prefix into dst (see
// Server.Snapshot). Call with mu held.
func (st *store) snapshotLocked(s *Server, src, dst, prefix string) (int, error) {
	s.emulator.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: dst})
	old, err := s.objectsUnder(dst, prefix)
	if err != nil {
		return 0, err
	}
	for _, o := range old {
		if err := st.emu.Backend().DeleteObject(dst, o.Name); err != nil {
			return 0, err
		}
		st.reconcileLocked(dst, o.Name)
	}
	objs, err := s.objectsUnder(src, prefix)
	if err != nil {
		return 0, err
	}
	for _, attrs := range objs {
		m, body, err := st.lookupLocked(src, attrs.Name, 0)
		if err != nil {
			return 0, err
		}
		path, err := st.copyBodyLocked(body)
		body.Close()
		if err != nil {
			return 0, err
		}
		if _, err := st.commitLocked(&pending{bucket: dst, name: attrs.Name, meta: m, path: path}); err != nil {
			return 0, err
		}
	}
	return len(objs), nil
}

// Export writes every object of bucket into dir as a file of the same name (a name's slashes make
// directories), so a user can look at what a run left in the bucket after the lab is gone.
func (s *Server) Export(bucket, dir string) (int, error) {
	s.store.mu.RLock()
	defer s.store.mu.RUnlock()
	objs, err := s.objectsUnder(bucket, "")
	if err != nil {
		return 0, err
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	for i, attrs := range objs {
		path := filepath.Join(root, filepath.FromSlash(attrs.Name))
		if !strings.HasPrefix(path, root+string(filepath.Separator)) || strings.HasSuffix(attrs.Name, "/") {
			continue // "../x" or a directory placeholder: no file of its own
		}
		_, body, err := s.store.lookupLocked(bucket, attrs.Name, 0)
		if err != nil {
			return i, err
		}
		err = writeFile(path, body)
		body.Close()
		if err != nil {
			return i, fmt.Errorf("export %s: %w", attrs.Name, err)
		}
	}
	return len(objs), nil
}

func writeFile(path string, body io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
