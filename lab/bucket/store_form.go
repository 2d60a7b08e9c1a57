package bucket

import (
	"bufio"
	"encoding/xml"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// formBucket is the bucket of an XML API form upload (POST /BUCKET on the emulator's host, with
// multipart/form-data, as an HTML form sends it); ok is false for every other request.
func formBucket(r *http.Request, public string) (bucket string, ok bool) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut || r.Host != public {
		return "", false
	}
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "multipart/form-data" {
		return "", false
	}
	seg := segments(r.URL.EscapedPath())
	if len(seg) != 1 || reservedRoot[seg[0]] {
		return "", false
	}
	return unescape(seg[0]), true
}

// serveForm answers the XML API's form uploads, streaming the file into the store as the JSON
// API's uploads are; it reports false for every other request. The emulator would parse the form
// whole (32 MiB in memory, the rest in a file of the system's temporary directory, left there
// if the process is killed) and then hold the object in memory.
func (st *store) serveForm(w http.ResponseWriter, r *http.Request) bool {
	bucket, ok := formBucket(r, st.public)
	if !ok {
		return false
	}
	st.formUpload(w, r, bucket)
	return true
}

// formFile is the name of a form upload's field that holds the object.
const formFile = "file"

// formUpload takes the form's fields (at most maxMetadata bytes of them in all, names included)
// and its one file field, in any order (GCS wants the file last), and commits the file as the
// object named by the field "key".
func (st *store) formUpload(w http.ResponseWriter, r *http.Request, bucket string) {
	if err := st.bucketExists(bucket); err != nil {
		writeXMLError(w, err)
		return
	}
	boundary, err := contentBoundary(r)
	if err != nil {
		writeXMLError(w, failWith(http.StatusBadRequest, "form upload: Content-Type %q: %v", r.Header.Get("Content-Type"), err))
		return
	}
	br := bufioReaders.Get().(*bufio.Reader)
	br.Reset(r.Body)
	defer func() { br.Reset(nil); bufioReaders.Put(br) }()
	mr := multipart.NewReader(br, boundary)
	fields := map[string]string{}
	budget := int64(maxMetadata)
	var p *pending // the file, received
	var fileType string
	h := newHasher()
	fail := func(err error) {
		if p != nil {
			st.discard(p)
		}
		writeXMLError(w, err)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			fail(failWith(http.StatusBadRequest, "form upload: %v", err))
			return
		}
		name := part.FormName()
		if name == formFile {
			if p != nil {
				fail(failWith(http.StatusBadRequest, "form upload: more than one field %q: want one file per upload", formFile))
				return
			}
			if p, err = st.receiveForm(part, h); err != nil {
				fail(err)
				return
			}
			fileType = part.Header.Get("Content-Type")
			continue
		}
		budget -= int64(len(name))
		value, err := io.ReadAll(io.LimitReader(part, max(budget, 0)+1))
		budget -= int64(len(value))
		switch {
		case err != nil:
			fail(failWith(http.StatusBadRequest, "form upload: field %q: %v", name, err))
			return
		case budget < 0:
			fail(failWith(http.StatusBadRequest, "form upload: the fields other than %q hold more than %d bytes in all, the most the lab reads", formFile, maxMetadata))
			return
		}
		if _, seen := fields[name]; !seen { // the first of a repeated field, as the emulator takes
			fields[name] = string(value)
		}
	}
	switch {
	case fields["key"] == "":
		fail(failWith(http.StatusBadRequest, "form upload: no field \"key\": want the object's name"))
		return
	case p == nil:
		fail(failWith(http.StatusBadRequest, "form upload: no field %q: want the object's bytes", formFile))
		return
	}
	status := http.StatusNoContent
	if v, given := fields["success_action_status"]; given {
		status, err = strconv.Atoi(v)
		if err != nil || status != http.StatusOK && status != http.StatusCreated && status != http.StatusNoContent {
			fail(failWith(http.StatusBadRequest, "form upload: success_action_status %q: want 200, 201 or 204", v))
			return
		}
	}
	p.bucket, p.name = bucket, fields["key"]
	p.meta = objectMeta{
		ContentType: fields["Content-Type"], ContentEncoding: fields["Content-Encoding"], CacheControl: fields["Cache-Control"],
		ContentDisposition: fields["Content-Disposition"], ContentLanguage: fields["Content-Language"],
		ACL: aclFor(fields["acl"]), Metadata: map[string]string{},
		Size: p.meta.Size, Crc32c: h.crc32c(), Md5Hash: h.md5sum(),
	}
	if p.meta.ContentType == "" {
		p.meta.ContentType = fileType
	}
	for k, v := range fields {
		lower := strings.ToLower(k)
		if meta := strings.TrimPrefix(lower, "x-goog-meta-"); meta != lower {
			p.meta.Metadata[meta] = v
		}
	}
	st.mu.Lock()
	_, err = st.commitLocked(p)
	st.mu.Unlock()
	if err != nil {
		writeXMLError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	if status != http.StatusCreated {
		w.WriteHeader(status)
		return
	}
	location := "http://" + r.Host + (&url.URL{Path: "/" + bucket + "/" + p.name}).EscapedPath()
	body, _ := xml.Marshal(postResponse{Bucket: bucket, Etag: p.meta.Md5Hash, Key: p.name, Location: location})
	w.WriteHeader(status)
	w.Write(append([]byte(xml.Header), body...))
}

// receiveForm streams a form's file field into a file of the store, hashing it on the way.
func (st *store) receiveForm(part io.Reader, h hasher) (*pending, error) {
	f, err := st.tempFile()
	if err != nil {
		return nil, err
	}
	p := &pending{path: f.Name()}
	n, err := receive(f, 0, part, h)
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(p.path)
		return nil, failWith(http.StatusBadRequest, "form upload: field %q: %v", formFile, err)
	}
	p.meta.Size = n
	return p, nil
}

// postResponse is what a form upload answers with success_action_status 201, as the emulator does.
type postResponse struct {
	XMLName  xml.Name `xml:"PostResponse"`
	Bucket   string
	Etag     string
	Key      string
	Location string
}

// writeXMLError answers as the XML API does: an Error document.
func writeXMLError(w http.ResponseWriter, err error) {
	status, msg := http.StatusInternalServerError, err.Error()
	var es *errStatus
	if errors.As(err, &es) {
		status = es.status
	}
	body, _ := xml.Marshal(struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}{Code: strings.ReplaceAll(http.StatusText(status), " ", ""), Message: msg})
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	w.Write(append([]byte(xml.Header), body...))
}
