package bucket

import (
	"net/http"
	"sync"
	"time"
)

// objectLimiter enforces GCS's per-object write rate as a token bucket per object name: one token
// every interval, up to burst. A write without a token gets GCS's own 429 answer.
type objectLimiter struct {
	interval time.Duration
	burst    float64
	mu       sync.Mutex
	tokens   map[string]float64
	updated  map[string]time.Time
}

func newObjectLimiter(interval time.Duration, burst int) *objectLimiter {
	return &objectLimiter{interval: interval, burst: float64(max(burst, 1)), tokens: map[string]float64{}, updated: map[string]time.Time{}}
}

func (l *objectLimiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	tokens, seen := l.tokens[key]
	if !seen {
		tokens = l.burst
	} else {
		tokens = min(l.burst, tokens+float64(now.Sub(l.updated[key]))/float64(l.interval))
	}
	l.updated[key] = now
	if tokens < 1 {
		l.tokens[key] = tokens
		return false
	}
	l.tokens[key] = tokens - 1
	return true
}

// gcs429 is the body GCS answers when one object is written too often (documented at
// https://cloud.google.com/storage/docs/gcs429).
const gcs429 = `{"error":{"code":429,"message":"The object exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.","errors":[{"message":"The object exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.","domain":"usageLimits","reason":"rateLimitExceeded"}]}}`

func (l *objectLimiter) stage(next http.Handler) http.Handler {
	if l.interval <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := opOf(r)
		// A resumable upload is one write, limited when it starts; its data requests are not.
		if op.Mutation && op.Object != "" && op.Resumable != ResumableData && !l.allow(op.Bucket+"/"+op.Object, time.Now()) {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(gcs429))
			return
		}
		next.ServeHTTP(w, r)
	})
}
