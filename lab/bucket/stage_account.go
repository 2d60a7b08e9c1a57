package bucket

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"persistlab/cost"
)

// Accounting is what the bucket counted: operations by pricing class and by method, bytes moved,
// and requests the model refused.
type Accounting struct {
	ClassA    int64            `json:"class_a"`
	ClassB    int64            `json:"class_b"`
	Free      int64            `json:"free"`
	BytesIn   int64            `json:"bytes_in"`  // request bodies (uploads)
	BytesOut  int64            `json:"bytes_out"` // response bodies (downloads, listings)
	Throttled int64            `json:"throttled"` // answered 429 by the per-object limit
	Errors    int64            `json:"errors"`    // other answers of 400 and above (e.g. precondition failures)
	Anonymous int64            `json:"anonymous"` // requests without an Authorization header
	ByMethod  map[string]int64 `json:"by_method"`
}

// CostUSD prices the operations at GCS's list prices (package cost; network egress not included).
func (a Accounting) CostUSD() float64 {
	return cost.GCSUSD(a.ClassA, a.ClassB)
}

type accountant struct {
	mu        sync.Mutex
	acc       Accounting
	lastWrite map[string]time.Time // object -> when its latest successful write completed
	writes    []Write              // every completed write, up to maxWrites
}

// Write is one completed write of an object (an upload, a compose, a copy), and when it ran.
type Write struct {
	Object        string // "bucket/name"
	Started, Done time.Time
	Bytes         int64 // the request's body
}

// maxWrites bounds the writes kept (a few MiB; a counter run makes a few per second).
const maxWrites = 1 << 16

func newAccountant() *accountant {
	return &accountant{acc: Accounting{ByMethod: map[string]int64{}}, lastWrite: map[string]time.Time{}}
}

type countingReader struct {
	io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	return n, err
}

func (a *accountant) stage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := opOf(r)
		started := time.Now()
		body := &countingReader{ReadCloser: r.Body}
		if r.Body != nil {
			r.Body = body
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		done := time.Now()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.acc.BytesIn += body.n
		if r.Header.Get("Authorization") == "" {
			a.acc.Anonymous++
		}
		a.acc.BytesOut += sw.bytes
		switch {
		case sw.status == http.StatusTooManyRequests:
			a.acc.Throttled++
			return
		case sw.status >= 400:
			a.acc.Errors++
		}
		if completesWrite(op, sw) {
			a.lastWrite[op.Bucket+"/"+op.Object] = done
			if len(a.writes) < maxWrites {
				a.writes = append(a.writes, Write{Object: op.Bucket + "/" + op.Object, Started: started, Done: done, Bytes: body.n})
			}
		}
		if op.Class == ClassNone {
			return
		}
		a.acc.ByMethod[op.Name]++
		switch op.Class {
		case ClassA:
			a.acc.ClassA++
		case ClassB:
			a.acc.ClassB++
		case ClassFree:
			a.acc.Free++
		}
	})
}

// completesWrite reports whether a request that succeeded completed a write of op.Object: every
// mutation does, except the start of a resumable upload and its data requests before the last
// (answered 308, or 200 with X-Http-Status-Code-Override: 308 for clients that ask so).
func completesWrite(op Op, sw *statusWriter) bool {
	switch {
	case !op.Mutation || op.Object == "" || sw.status >= 300 || op.Resumable == ResumableStart:
		return false
	case op.Resumable == ResumableData:
		return sw.Header().Get("X-Http-Status-Code-Override") != "308"
	}
	return true
}

func (a *accountant) snapshot() Accounting {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.acc
	out.ByMethod = make(map[string]int64, len(a.acc.ByMethod))
	for k, v := range a.acc.ByMethod {
		out.ByMethod[k] = v
	}
	return out
}

// writesSince lists the writes completed at or after t, in the order they completed.
func (a *accountant) writesSince(t time.Time) []Write {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := sort.Search(len(a.writes), func(i int) bool { return !a.writes[i].Done.Before(t) })
	return append([]Write(nil), a.writes[i:]...)
}

// LastWriteUnder is when the latest write to an object whose "bucket/name" starts with prefix
// completed, and which object it was.
func (a *accountant) lastWriteUnder(prefix string) (string, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var name string
	var last time.Time
	for k, t := range a.lastWrite {
		if strings.HasPrefix(k, prefix) && t.After(last) {
			name, last = k, t
		}
	}
	return name, last
}

// Methods lists the counted methods in a stable order, for printing.
func (a Accounting) Methods() []string {
	names := make([]string, 0, len(a.ByMethod))
	for k := range a.ByMethod {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
