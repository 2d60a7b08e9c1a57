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

func TestClosedLoopAccountsForEveryRequest(t *testing.T) {
	var served, failed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		if n%3 == 0 {
			failed.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, `{"count":%d}`, n)
	}))
	defer srv.Close()

	res, err := Run(context.Background(), Config{URL: srv.URL + "/count_up", Mode: ModeClosed, VUs: 4, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK == 0 {
		t.Fatal("no request succeeded")
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
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close() // hang up before answering
		}
	}()
	res, err := Run(context.Background(), Config{URL: "http://" + ln.Addr().String() + "/count_up", Mode: ModeClosed, VUs: 2, Duration: 100 * time.Millisecond})
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 0 || res.TransportErrors == 0 || res.TransportErrors < accepted.Load()-2 {
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
	// One connection, a server that needs 20 ms per request, and 200 arrivals per second: the
	// queue grows, and latency from the intended start must show it while service time does not.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Write([]byte(`{"count":1}`))
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL + "/", Mode: ModeOpen, VUs: 1, Rate: 200, Duration: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	lat, svc := res.Latency.Summarize(res.Elapsed), res.Service.Summarize(res.Elapsed)
	if res.Late == 0 || lat.MaxMs < 3*svc.MaxMs {
		t.Errorf("late %d, latency max %.1f ms vs service max %.1f ms: queueing not counted", res.Late, lat.MaxMs, svc.MaxMs)
	}
}

func TestCancelStopsAndKeepsMeasurements(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"count":1}`)) }))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	res, err := Run(ctx, Config{URL: srv.URL + "/", Mode: ModeClosed, VUs: 2, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(t0) > 10*time.Second || res.OK == 0 {
		t.Errorf("cancelled run took %v and kept %d answers", time.Since(t0), res.OK)
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"count":%d}`, n.Add(1))
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL + "/", Mode: ModeClosed, VUs: 3, Duration: 200 * time.Millisecond, RecordAcks: true})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(res.Acks)) != res.OK || res.OK == 0 {
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
// it, and a closed-loop VU sends at most one request per round trip.
func TestNetworkRTTDelaysEveryRequest(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Write([]byte(`{"count":1}`))
	}))
	defer srv.Close()
	const rtt = 20 * time.Millisecond
	for _, mode := range []string{ModeClosed, ModeOpen} {
		cfg := Config{URL: srv.URL + "/count_up", Mode: mode, VUs: 2, Duration: 400 * time.Millisecond, NetworkRTT: rtt}
		if mode == ModeOpen {
			cfg.Rate = 20
		}
		r, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		s := r.Latency.Summarize(r.Elapsed)
		if r.OK == 0 || s.MinMs < float64(rtt)/1e6 {
			t.Errorf("%s: %d answers, min latency %.2f ms under a %v round trip", mode, r.OK, s.MinMs, rtt)
		}
		if mode == ModeClosed && r.OK > int64(2*(cfg.Duration/rtt+1)) {
			t.Errorf("closed loop: %d answers from 2 VUs in %v with a %v round trip each", r.OK, cfg.Duration, rtt)
		}
	}
}
