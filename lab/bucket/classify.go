package bucket

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
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
}

// classify maps a request to its JSON API method. Upload bodies are read to find the object name
// (multipart uploads carry it in their metadata part), then put back for the emulator.
func classify(r *http.Request) Op {
	path := r.URL.EscapedPath()
	seg := strings.Split(strings.Trim(path, "/"), "/")
	unescape := func(s string) string {
		v, err := url.PathUnescape(s)
		if err != nil {
			return s
		}
		return v
	}
	switch {
	case strings.HasPrefix(path, "/upload/storage/v1/b/") && len(seg) >= 5:
		op := Op{Name: "storage.objects.insert", Class: ClassA, Bucket: unescape(seg[4]), Mutation: true}
		if r.Method == http.MethodDelete {
			return Op{Name: "storage.objects.insert (cancel)", Class: ClassFree, Bucket: op.Bucket}
		}
		op.Object = uploadObjectName(r)
		return op
	case strings.HasPrefix(path, "/upload/resumable/"):
		// Later requests of a resumable upload; the insert was counted when the upload began.
		return Op{Name: "storage.objects.insert (resumable data)", Class: ClassNone, Mutation: true}
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
// or the "name" field of a multipart upload's metadata part.
func uploadObjectName(r *http.Request) string {
	if n := r.URL.Query().Get("name"); n != "" {
		return n
	}
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || r.Body == nil {
		return ""
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	var meta struct {
		Name string `json:"name"`
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		part, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).NextPart()
		if err != nil {
			return ""
		}
		_ = json.NewDecoder(part).Decode(&meta)
	} else if mediaType == "application/json" { // resumable upload start: metadata is the body
		_ = json.Unmarshal(body, &meta)
	}
	return meta.Name
}
