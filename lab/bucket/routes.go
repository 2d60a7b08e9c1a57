package bucket

import (
	"net/http"
	"strings"
)

// served says whether the lab answers r: the GCS routes its clients use (gcsfuse, Litestream, the
// Google Cloud client libraries). They are the JSON API, its upload and download paths, and on the
// emulator's host the XML API's reads and form upload. The embedded emulator answers more, which the
// lab refuses: its /_internal/ endpoints (delete_all empties every bucket for any local client),
// batch requests and the XML API's other writes (it holds their bodies in memory whole).
func served(r *http.Request, public string) bool {
	path := r.URL.EscapedPath()
	switch {
	case strings.HasPrefix(path, "/storage/v1/"):
		return true
	case strings.HasPrefix(path, "/upload/storage/v1/b/"):
		return r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodDelete
	case strings.HasPrefix(path, "/download/storage/v1/b/"):
		return r.Method == http.MethodGet || r.Method == http.MethodHead
	}
	if r.Host != public || reservedRoot[segments(path)[0]] {
		return false
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead { // /BUCKET lists, /BUCKET/OBJECT reads
		return true
	}
	_, form := formBucket(r, public)
	return form
}

// routeStage answers 404 to every request the lab does not serve, before the model sees it: it is
// no GCS operation, and is neither counted nor delayed.
func routeStage(public string) Stage {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !served(r, public) {
				writeError(w, failWith(http.StatusNotFound, "the lab bucket does not serve %s %s: it answers the GCS JSON API (/storage/v1/, /upload/storage/v1/, /download/storage/v1/) and, as host %s, the XML API's reads and form uploads",
					r.Method, r.URL.EscapedPath(), public))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
