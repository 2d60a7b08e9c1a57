package httpload

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
	handlers := framings()
	for name, handler := range map[string]http.HandlerFunc{
		"content-length": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"count":41}`)) },
		"chunked":        handlers["chunked"],
		"close":          handlers["close"],
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

// An answer that comes after the request's timeout fails it, as a connection's deadline did,
// however the loop's checks for expired requests fall.
func TestEventLoopsFailAnswersAfterTheTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond)
		w.Write([]byte(`{"count":1}`))
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Mode: ModeClosed, VUs: 2, Duration: 200 * time.Millisecond, Timeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 0 || res.TransportErrors < 2 || !strings.Contains(res.ErrorSamples[0], "timeout") {
		t.Errorf("answers 30 ms after requests timing out at 10 ms: %d OK, %d transport errors %q", res.OK, res.TransportErrors, res.ErrorSamples)
	}
}

// Responses the driver reads whatever path it takes: an informational answer before the final
// one, a header longer than the connection's buffer, a 204; a header past the limit fails.
func TestResponsesOfEveryShape(t *testing.T) {
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"count\":7}"
	for _, tc := range []struct {
		name, response string
		status         int // 0: a transport error, naming want
		want           string
	}{
		{"103 then 200", "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" + ok, 200, ""},
		{"long header", "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("p", 3*readBufferSize) + "\r\nContent-Length: 11\r\n\r\n{\"count\":7}", 200, ""},
		{"204", "HTTP/1.1 204 No Content\r\n\r\n", 204, ""},
		{"header past the limit", "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("p", maxHeaderBytes) + "\r\nContent-Length: 0\r\n\r\n", 0, "header over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := rawServer(t, tc.response)
			for _, mode := range []Config{
				{Mode: ModeClosed, VUs: 2, Duration: 50 * time.Millisecond},                                   // the event loops
				{Mode: ModeClosed, VUs: 2, Duration: 50 * time.Millisecond, NetworkRTT: time.Millisecond},     // a goroutine per user
				{Mode: ModeOpen, VUs: 2, Rate: 200, Duration: 50 * time.Millisecond, GracefulStop: time.Hour}, // the same
			} {
				mode.URL, mode.Timeout = "http://"+addr+"/", 10*time.Second
				res, err := Run(context.Background(), mode)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tc.status == 200 && (res.OK == 0 || res.Errors() != 0 || res.MaxAcked != 7):
					t.Errorf("%s %v: %d OK, %d errors %q, max acked %d", mode.Mode, mode.NetworkRTT, res.OK, res.Errors(), res.ErrorSamples, res.MaxAcked)
				case tc.status > 200 && (res.OK != 0 || res.Statuses[tc.status] == 0 || res.TransportErrors != 0):
					t.Errorf("%s %v: %d OK, statuses %v, %d transport errors %q", mode.Mode, mode.NetworkRTT, res.OK, res.Statuses, res.TransportErrors, res.ErrorSamples)
				case tc.status == 0 && (res.OK != 0 || res.TransportErrors == 0 || !strings.Contains(res.ErrorSamples[0], tc.want)):
					t.Errorf("%s %v: %d OK, %d transport errors %q, want %q", mode.Mode, mode.NetworkRTT, res.OK, res.TransportErrors, res.ErrorSamples, tc.want)
				}
			}
		})
	}
}

// At the run's end plus its graceful stop, requests still unanswered are abandoned, not counted.
func TestEventLoopsAbandonUnansweredRequestsAtTheHardStop(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	const duration, grace = 50 * time.Millisecond, 100 * time.Millisecond
	t0 := time.Now()
	res, err := Run(context.Background(), Config{URL: "http://" + ln.Addr().String() + "/", Mode: ModeClosed, VUs: 3, Duration: duration, GracefulStop: grace, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); took < duration+grace || res.OK != 0 || res.Errors() != 0 {
		t.Errorf("returned after %v (hard stop at %v), %d OK, %d errors %q", took, duration+grace, res.OK, res.Errors(), res.ErrorSamples)
	}
}

// A host name is dialled as net.Dial dials it: localhost reaches a server listening on one of
// its addresses only.
func TestEventLoopsDialANameAsNetDoes(t *testing.T) {
	addrs, err := net.DefaultResolver.LookupIPAddr(context.Background(), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]bool{}
	for _, a := range addrs {
		has[map[bool]string{true: "tcp4", false: "tcp6"}[a.IP.To4() != nil]] = true
	}
	for _, network := range []string{"tcp4", "tcp6"} {
		if !has[network] {
			t.Logf("localhost has no %s address here (%v)", network, addrs)
			continue
		}
		ln, err := net.Listen(network, map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}[network])
		if err != nil {
			t.Logf("%s: %v (no such loopback here)", network, err)
			continue
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"count":3}`)) }))
		srv.Listener = ln
		srv.Start()
		port := ln.Addr().(*net.TCPAddr).Port
		res, err := Run(context.Background(), Config{URL: fmt.Sprintf("http://localhost:%d/", port), Mode: ModeClosed, VUs: 2, Duration: 50 * time.Millisecond})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.OK == 0 || res.Errors() != 0 {
			t.Errorf("%s: %d OK, %d errors %q", network, res.OK, res.Errors(), res.ErrorSamples)
		}
	}
}
