package bucket

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// Pricing classes of Cloud Storage operations (https://cloud.google.com/storage/pricing,
// "Operations by class", JSON API column).
const (
	ClassA    = "A"    // storage.*.insert, patch, update, objects.list, compose, copy, rewrite, buckets.list
	ClassB    = "B"    // storage.*.get (object data and metadata, bucket metadata)
	ClassFree = "free" // storage.objects.delete, storage.buckets.delete
	ClassNone = ""     // not a storage operation (the emulator's own endpoints)
)

// Op is one request as the cloud model sees it.
type Op struct {
	Name     string // the JSON API method, e.g. storage.objects.insert
	Class    string
	Bucket   string
	Object   string // the object written, for per-object limits; "" when unknown or not a write
	Mutation bool
	List     bool
	// Resumable is the part the request plays in a resumable upload: ResumableStart, the insert
	// (counted and limited as the one write it is), or ResumableData, a later request carrying
	// bytes (neither an operation of its own nor limited; the write completes with the last one).
	// "" for every other request.
	Resumable string
}

// Parts of a resumable upload (Op.Resumable).
const (
	ResumableStart = "start"
	ResumableData  = "data"
)

// classify maps a request to its JSON API method. An upload's metadata is read to find the object
// name (multipart uploads carry it in their first part), then put back for the emulator; the object's
// bytes are not read.
func classify(r *http.Request) Op {
	path := r.URL.EscapedPath()
	seg := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case strings.HasPrefix(path, "/upload/storage/v1/b/") && len(seg) >= 5:
		op := Op{Name: "storage.objects.insert", Class: ClassA, Bucket: unescape(seg[4]), Mutation: true}
		if r.Method == http.MethodDelete {
			return Op{Name: "storage.objects.insert (cancel)", Class: ClassFree, Bucket: op.Bucket}
		}
		q := r.URL.Query()
		if q.Get("upload_id") != "" {
			// A later request of a resumable upload (its session URI): the insert was counted
			// when the upload began, a resumable upload being one Class A operation however many
			// requests carry its bytes (as the /upload/resumable/ case below already held).
			return Op{Name: "storage.objects.insert (resumable data)", Class: ClassNone, Bucket: op.Bucket,
				Object: q.Get("name"), Mutation: true, Resumable: ResumableData}
		}
		if q.Get("uploadType") == "resumable" || q.Get("uploadType") == "" && r.Header.Get("X-Goog-Upload-Protocol") == "resumable" {
			op.Resumable = ResumableStart
		}
		op.Object = uploadObjectName(r)
		return op
	case strings.HasPrefix(path, "/upload/resumable/"):
		// Later requests of a resumable upload; the insert was counted when the upload began.
		return Op{Name: "storage.objects.insert (resumable data)", Class: ClassNone, Mutation: true, Resumable: ResumableData}
	case strings.HasPrefix(path, "/download/storage/v1/b/") && len(seg) >= 7:
		return Op{Name: "storage.objects.get", Class: ClassB, Bucket: unescape(seg[4]), Object: unescape(strings.Join(seg[6:], "/"))}
	case !strings.HasPrefix(path, "/storage/v1/"):
		if strings.HasPrefix(path, "/_internal/") || path == "/" {
			return Op{Name: "internal", Class: ClassNone}
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead { // XML-style /bucket/object download
			return Op{Name: "storage.objects.get", Class: ClassB}
		}
		return Op{Name: "storage.objects.insert", Class: ClassA, Mutation: true}
	}
	// /storage/v1/b[/{bucket}[/o[/{object}[/...]]]]
	rest := seg[2:]
	switch {
	case len(rest) == 1: // /b
		if r.Method == http.MethodPost {
			return Op{Name: "storage.buckets.insert", Class: ClassA}
		}
		return Op{Name: "storage.buckets.list", Class: ClassA, List: true}
	case len(rest) == 2: // /b/{bucket}
		b := unescape(rest[1])
		switch r.Method {
		case http.MethodDelete:
			return Op{Name: "storage.buckets.delete", Class: ClassFree, Bucket: b}
		case http.MethodGet:
			return Op{Name: "storage.buckets.get", Class: ClassB, Bucket: b}
		}
		return Op{Name: "storage.buckets.patch", Class: ClassA, Bucket: b}
	case len(rest) == 3: // /b/{bucket}/o
		return Op{Name: "storage.objects.list", Class: ClassA, Bucket: unescape(rest[1]), List: true}
	}
	b := unescape(rest[1])
	objPath := rest[3:]
	for i, s := range objPath {
		switch s {
		case "compose":
			return Op{Name: "storage.objects.compose", Class: ClassA, Bucket: b, Object: unescape(strings.Join(objPath[:i], "/")), Mutation: true}
		case "rewriteTo", "copyTo":
			name := "storage.objects.rewrite"
			if s == "copyTo" {
				name = "storage.objects.copy"
			}
			dst := objPath[i+1:]
			obj := ""
			if len(dst) >= 4 {
				obj = unescape(strings.Join(dst[3:], "/"))
			}
			return Op{Name: name, Class: ClassA, Bucket: b, Object: obj, Mutation: true}
		}
	}
	obj := unescape(strings.Join(objPath, "/"))
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return Op{Name: "storage.objects.get", Class: ClassB, Bucket: b, Object: obj}
	case http.MethodDelete:
		return Op{Name: "storage.objects.delete", Class: ClassFree, Bucket: b, Object: obj}
	}
	return Op{Name: "storage.objects.patch", Class: ClassA, Bucket: b, Object: obj, Mutation: true}
}

// uploadObjectName finds the name of the object an upload creates: the `name` query parameter,
// or the "name" field of a multipart upload's metadata part or of a resumable upload's start. Only
// that metadata is read (at most maxMetadata bytes and what the multipart reader buffers past it),
// and put back in front of the rest of the body.
func uploadObjectName(r *http.Request) string {
	if n := r.URL.Query().Get("name"); n != "" {
		return n
	}
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || r.Body == nil || r.Body == http.NoBody {
		return ""
	}
	var meta struct {
		Name string `json:"name"`
	}
	switch {
	case strings.HasPrefix(mediaType, "multipart/"):
		c := &capture{r: r.Body}
		if part, err := multipart.NewReader(c, params["boundary"]).NextPart(); err == nil {
			_ = json.NewDecoder(part).Decode(&meta)
		}
		putBack(r, c.buf.Bytes())
	case mediaType == "application/json": // resumable upload start: metadata is the body
		head, _ := io.ReadAll(io.LimitReader(r.Body, maxMetadata))
		_ = json.Unmarshal(head, &meta)
		putBack(r, head)
	}
	return meta.Name
}

// capture keeps what is read through it, up to maxMetadata bytes.
type capture struct {
	r   io.Reader
	buf bytes.Buffer
}

var errMetadataTooLarge = errors.New("upload metadata larger than the lab reads")

func (c *capture) Read(p []byte) (int, error) {
	room := maxMetadata - c.buf.Len()
	if room <= 0 {
		return 0, errMetadataTooLarge
	}
	n, err := c.r.Read(p[:min(len(p), room)])
	c.buf.Write(p[:n])
	return n, err
}

// putBack puts the bytes read from r's body back in front of the rest of it.
func putBack(r *http.Request, head []byte) {
	body := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), body), body}
}
