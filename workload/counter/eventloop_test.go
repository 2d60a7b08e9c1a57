package counter

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Every framing the blocking connection reads, the event loops read too, whole, through a run.
func TestEventLoopsReadEveryFraming(t *testing.T) {
	big := strings.Repeat("x", 3*readBufferSize) // a body that takes several reads and outgrows maxBody's share
	for name, handler := range map[string]http.HandlerFunc{
		"content-length": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"count":41}`)) },
		"chunked": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"count":`))
			w.(http.Flusher).Flush()
			w.Write([]byte(`41}`))
		},
		"close": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			w.Write([]byte(`{"count":41}`))
		},
		"large": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"count":41,"pad":"%s"}`, big)
		},
		"large chunked": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"count":41,"pad":"`)
			for i := 0; i < 3; i++ {
				w.Write([]byte(big[:readBufferSize]))
				w.(http.Flusher).Flush()
			}
			w.Write([]byte(`"}`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			var served atomic.Int64
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if served.Add(1) >= endAfter {
					cancel()
				}
				handler(w, r)
			}))
			defer srv.Close()
			res, err := Run(ctx, Config{URL: srv.URL + "/count_up", Mode: ModeClosed, VUs: 3, Duration: time.Hour, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors() != 0 || res.OK != served.Load() || res.MaxAcked != 41 {
				t.Errorf("%d OK, %d errors %q, max acked %d; server served %d", res.OK, res.Errors(), res.ErrorSamples, res.MaxAcked, served.Load())
			}
		})
	}
}

// A request larger than the socket's buffer is sent in parts as the server reads it.
func TestEventLoopsSendLargeRequests(t *testing.T) {
	body := make([]byte, 8<<20)
	var served atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if served.Add(1) >= 4 {
			cancel()
		}
		fmt.Fprintf(w, `{"count":%d}`, n)
	}))
	defer srv.Close()
	res, err := Run(ctx, Config{URL: srv.URL, Mode: ModeClosed, VUs: 2, Duration: time.Hour, Timeout: 30 * time.Second,
		Requests: []Request{{Method: "PUT", Path: "/blob", Body: body, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors() != 0 || res.OK != served.Load() || res.MaxAcked != int64(len(body)) {
		t.Errorf("%d OK, %d errors %q, server received %d bytes at most (sent %d); served %d", res.OK, res.Errors(), res.ErrorSamples, res.MaxAcked, len(body), served.Load())
	}
}

// A server that never answers fails each request at its timeout, and the users go on.
func TestEventLoopsTimeOutSilentServers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer c.Close() // held open, unanswered, until the listener closes
		}
	}()
	const timeout = 100 * time.Millisecond
	t0 := time.Now()
	res, err := Run(context.Background(), Config{URL: "http://" + ln.Addr().String() + "/", Mode: ModeClosed, VUs: 2,
		Duration: 10 * timeout, GracefulStop: time.Hour, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	// Every request failed at its timeout, not before: each user's requests, one after the other,
	// each lasted at least the timeout, so the run holds no more of them than that allows.
	took := time.Since(t0)
	if res.OK != 0 || res.TransportErrors < 2 || res.TransportErrors > accepted.Load() || res.TransportErrors > 2*int64(took/timeout) {
		t.Fatalf("%d OK, %d transport errors in %v, %d connections accepted", res.OK, res.TransportErrors, took, accepted.Load())
	}
	if !strings.Contains(res.ErrorSamples[0], "timeout") {
		t.Errorf("error samples %q should say the request timed out", res.ErrorSamples)
	}
}

// A refused connection is counted as a transport error and retried, not spun on forever past
// the run's end.
func TestEventLoopsCountRefusedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	res, err := Run(context.Background(), Config{URL: "http://" + addr + "/", Mode: ModeClosed, VUs: 2, Duration: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 0 || res.TransportErrors < 2 || !strings.Contains(res.ErrorSamples[0], "refused") {
		t.Errorf("%d OK, %d transport errors %q", res.OK, res.TransportErrors, res.ErrorSamples)
	}
}

// The event loops' requests allocate nothing: a long run allocates no more than a short one,
// whatever the many more requests it sent (rawServer allocates nothing per request either).
func TestEventLoopsDoNotAllocatePerRequest(t *testing.T) {
	addr := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"count\":7}")
	run := func(d time.Duration) (mallocs uint64, ok int64) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := Run(context.Background(), Config{URL: "http://" + addr + "/count_up", Mode: ModeClosed, VUs: 2, Duration: d, Timeout: 10 * time.Second})
		runtime.ReadMemStats(&after)
		if err != nil || res.Errors() != 0 {
			t.Fatalf("%v, errors %v", err, res.ErrorSamples)
		}
		return after.Mallocs - before.Mallocs, res.OK
	}
	shortMallocs, shortOK := run(100 * time.Millisecond)
	longMallocs, longOK := run(500 * time.Millisecond)
	if longOK <= shortOK {
		t.Fatalf("%d requests in 500 ms, %d in 100 ms", longOK, shortOK)
	}
	perRequest := (float64(longMallocs) - float64(shortMallocs)) / float64(longOK-shortOK)
	if perRequest > 0.01 {
		t.Errorf("%.3f allocations per request (%d mallocs for %d requests, %d for %d)", perRequest, longMallocs, longOK, shortMallocs, shortOK)
	}
}
