package bucket

import (
	"context"
	"net/http"
)

// A Stage is one part of the cloud model wrapped around the emulator, like a toxiproxy toxic.
// Stages read the request's Op from its context.
type Stage func(next http.Handler) http.Handler

type opKey struct{}

func opOf(r *http.Request) Op {
	op, _ := r.Context().Value(opKey{}).(Op)
	return op
}

// classifyStage attaches the Op to the request for the stages after it.
func classifyStage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), opKey{}, classify(r))))
	})
}

// chain wraps h in stages, the first outermost.
func chain(h http.Handler, stages ...Stage) http.Handler {
	for i := len(stages) - 1; i >= 0; i-- {
		h = stages[i](h)
	}
	return h
}

// statusWriter remembers the status code and counts the bytes written.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Unwrap gives http.ResponseController the writer underneath.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
