package bucket

import (
	"io"
	"net/http"
	"time"
)

// pacer holds a stream to a byte rate: after each chunk it sleeps until the stream's bytes so far
// could have moved at that rate.
type pacer struct {
	rate  float64 // bytes per second
	start time.Time
	moved int64
}

func (p *pacer) pace(n int) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	p.moved += int64(n)
	due := p.start.Add(time.Duration(float64(p.moved) / p.rate * float64(time.Second)))
	if wait := time.Until(due); wait > 0 {
		time.Sleep(wait)
	}
}

type pacedReader struct {
	io.ReadCloser
	p pacer
}

func (r *pacedReader) Read(b []byte) (int, error) {
	n, err := r.ReadCloser.Read(b)
	r.p.pace(n)
	return n, err
}

type pacedWriter struct {
	http.ResponseWriter
	p pacer
}

// paceStep is the most a paced writer sends before it waits: the pace sleeps after the bytes go,
// so a body runs ahead of the rate by at most one step.
const paceStep = 64 << 10

func (w *pacedWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		n, err := w.ResponseWriter.Write(b[:min(len(b), paceStep)])
		written += n
		w.p.pace(n)
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

func (w *pacedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// bandwidthStage caps every request's upload and download at rate bytes per second.
func bandwidthStage(rate float64) Stage {
	return func(next http.Handler) http.Handler {
		if rate <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body != nil {
				r.Body = &pacedReader{ReadCloser: r.Body, p: pacer{rate: rate}}
			}
			next.ServeHTTP(&pacedWriter{ResponseWriter: w, p: pacer{rate: rate}}, r)
		})
	}
}
