package bucket

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// logStage appends a line per request to out: Common Log Format (as the emulator's own log was)
// followed by the seconds the bucket took to answer, model included.
func logStage(out io.Writer) Stage {
	var mu sync.Mutex
	return func(next http.Handler) http.Handler {
		if out == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			took := time.Since(start)
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				host = r.RemoteAddr
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			line := fmt.Sprintf("%s - - [%s] \"%s %s %s\" %d %d %.6f\n", host, start.Format("02/Jan/2006:15:04:05 -0700"),
				r.Method, r.URL.RequestURI(), r.Proto, status, sw.bytes, took.Seconds())
			mu.Lock()
			io.WriteString(out, line)
			mu.Unlock()
		})
	}
}
