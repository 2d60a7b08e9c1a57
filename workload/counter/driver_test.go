package counter

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The runs below end on a count, not a short duration: the server cancels the run once it has
// served this many requests, so a slow or busy machine still gets answers before the end.
const endAfter = 30

func TestClosedLoopAccountsForEveryRequest(t *testing.T) {
	var served, failed atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		if n >= endAfter {
			cancel()
		}
		if n%3 == 0 {
			failed.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, `{"count":%d}`, n)
	}))
	defer srv.Close()

	res, err := Run(ctx, Config{URL: srv.URL + "/count_up", Mode: ModeClosed, VUs: 4, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// Every request in flight at the cancel still gets its answer: none goes unaccounted, and the
	// first endAfter served hold endAfter/3 503s, so at least 2/3 of them were OK.
	if res.OK < endAfter-endAfter/3 {
		t.Fatalf("%d OK answers, %d served", res.OK, served.Load())
	}
	if got := res.OK + res.Errors(); got != served.Load() {
		t.Errorf("driver accounted for %d requests, server served %d", got, served.Load())
	}
	if res.Statuses[503] != failed.Load() {
		t.Errorf("503s counted %d, server sent %d", res.Statuses[503], failed.Load())
	}
	if res.Latency.Count() != res.OK {
		t.Errorf("histogram holds %d latencies for %d OK answers", res.Latency.Count(), res.OK)
	}
	if res.MaxAcked < res.OK || res.MaxAcked > served.Load() {
		t.Errorf("max acked count %d outside [%d, %d]", res.MaxAcked, res.OK, served.Load())
	}
	if len(res.ErrorSamples) == 0 || !strings.Contains(res.ErrorSamples[0], "503") {
		t.Errorf("error samples %q should show the 503", res.ErrorSamples)
	}
}

func TestTransportErrorsAreCounted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if accepted.Add(1) >= endAfter {
				cancel()
			}
			c.Close() // hang up before answering
		}
	}()
	res, err := Run(ctx, Config{URL: "http://" + ln.Addr().String() + "/count_up", Mode: ModeClosed, VUs: 2, Duration: time.Hour})
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	// A request whose error arrives after the cancel is not counted: at most one per VU.
	if res.OK != 0 || res.TransportErrors < endAfter-2 || res.TransportErrors < accepted.Load()-2 {
		t.Errorf("ok %d, transport errors %d, connections hung up %d", res.OK, res.TransportErrors, accepted.Load())
	}
}

func TestChunkedAndCloseDelimitedBodies(t *testing.T) {
	for name, handler := range map[string]http.HandlerFunc{
		"chunked": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"count":`))
			w.(http.Flusher).Flush()
			w.Write([]byte(`41}`))
		},
		"close": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			w.Write([]byte(`{"count":41}`))
		},
	} {
		srv := httptest.NewServer(handler)
		c := newHTTPConn(strings.TrimPrefix(srv.URL, "http://"), "POST", "/count_up")
		for i := 0; i < 3; i++ {
			status, body, err := c.do(time.Now().Add(5 * time.Second))
			if err != nil || status != 200 {
				t.Fatalf("%s: status %d err %v", name, status, err)
			}
			if n, ok := countValue(body); !ok || n != 41 {
				t.Errorf("%s: body %q", name, body)
			}
		}
		c.close()
		srv.Close()
	}
}

func TestOpenLoopCountsFromIntendedStart(t *testing.T) {
	// One connection, a server that needs at least 20 ms per request, and an arrival every 5 ms
	// for 400 ms: 80 slots. Request k cannot be sent before the k before it have each taken 20 ms,
	// so every one after the first is late, and its latency from its intended start (5k ms) is at
	// least 20(k+1) - 5k ms however slow the machine: queueing the service time does not show.
	const svcTime, slots = 20 * time.Millisecond, 80
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(svcTime)
		w.Write([]byte(`{"count":1}`))
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL + "/", Mode: ModeOpen, VUs: 1, Rate: 200, Duration: 400 * time.Millisecond, GracefulStop: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != slots || res.Errors() != 0 || res.Service.Count() != slots {
		t.Fatalf("%d OK, %d errors, %d service times for %d slots", res.OK, res.Errors(), res.Service.Count(), slots)
	}
	lat, svc := res.Latency.Summarize(res.Elapsed), res.Service.Summarize(res.Elapsed)
	if res.Late < slots-1 {
		t.Errorf("%d of %d requests late: a request sent behind its queue must count as late", res.Late, slots)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	if lastQueued := ms(slots*svcTime - (slots-1)*5*time.Millisecond); lat.MaxMs < lastQueued {
		t.Errorf("latency max %.1f ms, service max %.1f ms: the last slot waited at least %.0f ms, queueing not counted", lat.MaxMs, svc.MaxMs, lastQueued)
	}
	if svc.MinMs < ms(svcTime) || lat.MinMs < svc.MinMs || lat.MaxMs < svc.MaxMs || lat.AvgMs < svc.AvgMs {
		t.Errorf("latency min/avg/max %.1f/%.1f/%.1f ms below service %.1f/%.1f/%.1f ms or the %v service time", lat.MinMs, lat.AvgMs, lat.MaxMs, svc.MinMs, svc.AvgMs, svc.MaxMs, svcTime)
	}
}

// A run set to an hour returns once its context is cancelled (else go test's timeout ends it),
// with every answer up to then kept.
func TestCancelStopsAndKeepsMeasurements(t *testing.T) {
	var served atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) >= endAfter {
			cancel()
		}
		w.Write([]byte(`{"count":1}`))
	}))
	defer srv.Close()
	res, err := Run(ctx, Config{URL: srv.URL + "/", Mode: ModeClosed, VUs: 2, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK < endAfter || res.OK != served.Load() || res.Latency.Count() != res.OK {
		t.Errorf("cancelled after %d served: kept %d answers, %d latencies (served %d)", endAfter, res.OK, res.Latency.Count(), served.Load())
	}
}

func TestConfigValidationNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "https://x/", Mode: ModeClosed, VUs: 1, Duration: time.Second}, "url"},
		{Config{URL: "http://x/", Mode: "burst", VUs: 1, Duration: time.Second}, "mode \"burst\""},
		{Config{URL: "http://x/", Mode: ModeClosed, VUs: 0, Duration: time.Second}, "vus 0"},
		{Config{URL: "http://x/", Mode: ModeOpen, VUs: 1, Duration: time.Second}, "rate"},
		{Config{URL: "http://x/", Mode: ModeClosed, VUs: 1}, "duration"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.cfg, err, tc.want)
		}
	}
}

// rawServer answers every request on a connection with the same bytes and allocates nothing per
// request, so AllocsPerRun sees only the client.
func rawServer(t *testing.T, response string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				buf, resp, seen := make([]byte, 4096), []byte(response), 0
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					for _, b := range buf[:n] { // one response per blank line ending a header
						if b == '\n' {
							seen++
							if seen == 4 { // request line + Host + User-Agent + Content-Length
								continue
							}
							if seen == 5 {
								seen = 0
								c.Write(resp)
							}
						}
					}
				}
			}(c)
		}
	}()
	return ln.Addr().String()
}

func TestRequestDoesNotAllocate(t *testing.T) {
	addr := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"count\":7}")
	c := newHTTPConn(addr, "POST", "/count_up")
	defer c.close()
	deadline := time.Now().Add(time.Minute)
	c.do(deadline) // dial outside the measurement
	allocs := testing.AllocsPerRun(200, func() {
		if status, body, err := c.do(deadline); err != nil || status != 200 {
			t.Fatalf("status %d err %v", status, err)
		} else if n, ok := countValue(body); !ok || n != 7 {
			t.Fatalf("body %q", body)
		}
	})
	if allocs != 0 {
		t.Errorf("one request allocates %v times", allocs)
	}
}

func TestRecordAcksKeepsEveryCountInOrder(t *testing.T) {
	var n atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := n.Add(1)
		if c >= endAfter {
			cancel()
		}
		fmt.Fprintf(w, `{"count":%d}`, c)
	}))
	defer srv.Close()
	res, err := Run(ctx, Config{URL: srv.URL + "/", Mode: ModeClosed, VUs: 3, Duration: time.Hour, RecordAcks: true})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(res.Acks)) != res.OK || res.OK < endAfter || res.OK != n.Load() {
		t.Fatalf("%d acks for %d OK answers", len(res.Acks), res.OK)
	}
	for i, a := range res.Acks {
		if a.Count != int64(i+1) {
			t.Fatalf("ack %d holds count %d", i, a.Count)
		}
	}
	if at, ok := res.AckedAt(res.MaxAcked); !ok || at.After(res.LastAck) {
		t.Errorf("the highest count's ack %v (%v), last ack %v", at, ok, res.LastAck)
	}
	if _, ok := res.AckedAt(res.MaxAcked + 1); ok {
		t.Error("found an ack that never happened")
	}
}

// An open loop's rate is over the set duration, not until its last arrival: 1 request/s for 2 s
// is 2 arrivals (at 0 and 1 s) and a rate of 1, not 2 over 1 s; a rate far below 1/duration still
// sends its first arrival and reports a tiny rate, not thousands per second.
func TestOpenLoopRateIsOverTheSetDuration(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"count":1}`)) }))
	defer srv.Close()
	for _, tc := range []struct {
		rate float64
		d    time.Duration
		ok   int64
	}{{1, 2 * time.Second, 2}, {0.001, 300 * time.Millisecond, 1}} {
		res, err := Run(context.Background(), Config{URL: srv.URL + "/", Mode: ModeOpen, VUs: 1, Rate: tc.rate, Duration: tc.d})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Latency.Summarize(res.Elapsed).Rate
		want := float64(tc.ok) / tc.d.Seconds()
		if res.OK != tc.ok || res.Elapsed < tc.d || got > want*1.001 {
			t.Errorf("rate %v for %v: %d answers, elapsed %v, rate %.3f (want %.3f)", tc.rate, tc.d, res.OK, res.Elapsed, got, want)
		}
	}
}

// A network round trip is spent before each request reaches the server: every latency includes
// it, and a closed-loop VU sends at most one request per round trip of the run's elapsed time.
func TestNetworkRTTDelaysEveryRequest(t *testing.T) {
	var served atomic.Int64
	var cancelRun atomic.Pointer[context.CancelFunc]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) >= endAfter {
			if c := cancelRun.Load(); c != nil {
				(*c)()
			}
		}
		w.Write([]byte(`{"count":1}`))
	}))
	defer srv.Close()
	const rtt = 20 * time.Millisecond
	for _, mode := range []string{ModeClosed, ModeOpen} {
		served.Store(0)
		ctx, cancel := context.WithCancel(context.Background())
		cfg := Config{URL: srv.URL + "/count_up", Mode: mode, VUs: 2, Duration: 400 * time.Millisecond, NetworkRTT: rtt}
		if mode == ModeOpen {
			cfg.Rate = 20 // slots at 0, 50, ..., 350 ms: the first is always sent
		} else {
			cfg.Duration = time.Hour // ends on a count
			cancelRun.Store(&cancel)
		}
		r, err := Run(ctx, cfg)
		cancelRun.Store(nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		s := r.Latency.Summarize(r.Elapsed)
		if r.OK == 0 || s.MinMs < float64(rtt)/1e6 {
			t.Errorf("%s: %d answers, min latency %.2f ms under a %v round trip", mode, r.OK, s.MinMs, rtt)
		}
		if mode == ModeClosed && (r.OK < endAfter || r.OK > int64(2*(r.Elapsed/rtt+1))) {
			t.Errorf("closed loop: %d answers from 2 VUs in %v with a %v round trip each", r.OK, r.Elapsed, rtt)
		}
	}
}
