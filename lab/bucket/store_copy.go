package bucket

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// flexInt64 is an int64 the JSON API sends as a string ("123") or, from some clients, a number.
type flexInt64 int64

func (n *flexInt64) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	*n = flexInt64(v)
	return err
}

// serveCopy answers compose and copy/rewrite, whose bodies the emulator would read from its own
// memory (the store keeps them in files); it reports false for every other request.
func (st *store) serveCopy(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.EscapedPath()
	if r.Method != http.MethodPost || !strings.HasPrefix(path, "/storage/v1/b/") {
		return false
	}
	seg := segments(path)
	if len(seg) < 7 || seg[4] != "o" {
		return false
	}
	obj := seg[5:]
	if obj[len(obj)-1] == "compose" {
		st.compose(w, r, unescape(seg[3]), unescape(strings.Join(obj[:len(obj)-1], "/")))
		return true
	}
	for i := len(obj) - 5; i >= 1; i-- { // the emulator's pattern takes the last such split
		if (obj[i] == "rewriteTo" || obj[i] == "copyTo") && obj[i+1] == "b" && obj[i+3] == "o" {
			st.rewrite(w, r, unescape(seg[3]), unescape(strings.Join(obj[:i], "/")),
				unescape(obj[i+2]), unescape(strings.Join(obj[i+4:], "/")), obj[i] == "rewriteTo")
			return true
		}
	}
	return false
}

// compose concatenates up to 32 objects of a bucket into one.
func (st *store) compose(w http.ResponseWriter, r *http.Request, bucket, dest string) {
	var req struct {
		SourceObjects []struct {
			Name                string    `json:"name"`
			Generation          flexInt64 `json:"generation"`
			ObjectPreconditions *struct {
				IfGenerationMatch *flexInt64 `json:"ifGenerationMatch"`
			} `json:"objectPreconditions"`
		} `json:"sourceObjects"`
		Destination uploadMeta `json:"destination"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxMetadata)).Decode(&req); err != nil {
		writeError(w, failWith(http.StatusBadRequest, "Error parsing request body"))
		return
	}
	if n := len(req.SourceObjects); n == 0 || n > 32 {
		writeError(w, failWith(http.StatusBadRequest, "The number of source components provided (%d) must be between 1 and 32", n))
		return
	}
	cond, err := parseConditions(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	// Open every source at once, so that the concatenation reads one generation of each.
	var bodies []io.ReadCloser
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
	}()
	st.mu.RLock()
	for _, src := range req.SourceObjects {
		m, body, err := st.lookupLocked(bucket, src.Name, int64(src.Generation))
		if err == nil {
			bodies = append(bodies, body)
			if pc := src.ObjectPreconditions; pc != nil && pc.IfGenerationMatch != nil && int64(*pc.IfGenerationMatch) != m.Generation {
				err = failWith(http.StatusPreconditionFailed, "Precondition failed")
			}
		}
		if err != nil {
			st.mu.RUnlock()
			writeError(w, err)
			return
		}
	}
	st.mu.RUnlock()
	f, err := st.tempFile()
	if err != nil {
		writeError(w, err)
		return
	}
	h := newHasher()
	var size int64
	for _, b := range bodies {
		n, rerr := receive(f, size, b, h)
		size += n
		if err = rerr; err != nil {
			break
		}
	}
	if err = errors.Join(err, f.Close()); err != nil {
		writeError(w, err)
		return
	}
	p := &pending{bucket: bucket, name: dest, cond: cond, path: f.Name(), meta: req.Destination.objectMeta(r.URL.Query())}
	p.meta.Size, p.meta.Crc32c, p.meta.Md5Hash = size, h.crc32c(), h.md5sum()
	st.commit(w, r, p, nil)
}

// rewrite copies an object (copyTo answers the new object, rewriteTo a rewrite response, done in
// one call). The new object's body is a hard link to the source's file.
func (st *store) rewrite(w http.ResponseWriter, r *http.Request, srcBucket, srcName, dstBucket, dstName string, rewriteResponse bool) {
	q := r.URL.Query()
	var srcGen int64
	if g := q.Get("sourceGeneration"); g != "" {
		var err error
		if srcGen, err = strconv.ParseInt(g, 10, 64); err != nil {
			writeError(w, failWith(http.StatusBadRequest, "invalid generation ID"))
			return
		}
	}
	var over uploadMeta // the destination's metadata, optional: what it gives replaces the source's
	if err := json.NewDecoder(io.LimitReader(r.Body, maxMetadata)).Decode(&over); err != nil && err != io.EOF {
		writeError(w, failWith(http.StatusBadRequest, "Invalid metadata"))
		return
	}
	cond, err := parseConditions(q)
	if err == nil {
		err = st.bucketExists(dstBucket)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	m, body, err := st.lookupLocked(srcBucket, srcName, srcGen)
	if err != nil {
		writeError(w, err)
		return
	}
	path, err := st.copyBodyLocked(body)
	body.Close()
	if err != nil {
		writeError(w, err)
		return
	}
	if len(over.Metadata) > 0 {
		m.Metadata = over.Metadata
	}
	for into, v := range map[*string]string{&m.ContentType: over.ContentType, &m.ContentEncoding: over.ContentEncoding,
		&m.ContentDisposition: over.ContentDisposition, &m.ContentLanguage: over.ContentLanguage, &m.CacheControl: over.CacheControl} {
		if v != "" {
			*into = v
		}
	}
	gen, err := st.commitLocked(&pending{bucket: dstBucket, name: dstName, meta: m, cond: cond, path: path})
	if err != nil {
		writeError(w, err)
		return
	}
	if !rewriteResponse {
		st.renderObject(w, r, dstBucket, dstName, gen, nil)
		return
	}
	rec := st.objectJSON(r, dstBucket, dstName, gen)
	if rec.status != http.StatusOK {
		writeError(w, fmt.Errorf("rendering %s/%s: HTTP %d", dstBucket, dstName, rec.status))
		return
	}
	out, err := json.Marshal(map[string]any{"kind": "storage#rewriteResponse", "totalBytesRewritten": strconv.FormatInt(m.Size, 10),
		"objectSize": strconv.FormatInt(m.Size, 10), "done": true, "rewriteToken": "", "resource": json.RawMessage(rec.body.Bytes())})
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}
