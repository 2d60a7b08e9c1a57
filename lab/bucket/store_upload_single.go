package bucket

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
)

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
