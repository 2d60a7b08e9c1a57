package httpload

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"persistlab/measure"
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

// framings answer {"count":41} in a chunked body and in one ended by closing the connection.
func framings() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"chunked": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"count":`))
			w.(http.Flusher).Flush()
			w.Write([]byte(`41}`))
		},
		"close": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			w.Write([]byte(`{"count":41}`))
		},
	}
}

func TestChunkedAndCloseDelimitedBodies(t *testing.T) {
	for name, handler := range framings() {
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
// request, so AllocsPerRun sees only the client. It reads each request's header to its blank line
// and skips the body its Content-Length announces.
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
				br, resp, length := bufio.NewReader(c), []byte(response), 0
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(line) > 2 {
						if name, value, ok := bytes.Cut(line, []byte(":")); ok && asciiEqualFold(name, "content-length") {
							length, _ = atoi(bytes.TrimSpace(value))
						}
						continue
					}
					if _, err := br.Discard(length); err != nil {
						return
					}
					length = 0
					c.Write(resp)
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

// weightedList is a list of requests with bodies, headers, a HEAD and an entry the server fails.
func weightedList() []Request {
	return []Request{
		{Name: "count_up", Method: "POST", Path: "/count_up", Weight: 9},
		{Name: "read", Path: "/count?x=1", Weight: 1, Headers: [][2]string{{"Accept", "application/json"}, {"User-Agent", "k6-like"}}},
		{Method: "PUT", Path: "/items", Body: []byte(`{"n":1}`), Weight: 2, Headers: [][2]string{{"Content-Type", "application/json"}, {"X-Trace", "a b;c=1"}}},
		{Method: "HEAD", Path: "/head", Weight: 1},
		{Method: "DELETE", Path: "/fail", Weight: 1},
	}
}

// listServer checks each request of weightedList arrives as written, answers {"count":N} (503 on
// /fail), and counts what it served by path; bad holds what did not arrive as written.
type listServer struct {
	served  atomic.Int64
	byPath  [5]atomic.Int64
	bad     atomic.Pointer[string]
	onServe func(n int64)
}

func (ls *listServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	want := map[string]struct {
		i       int
		method  string
		body    string
		headers map[string]string
	}{
		"/count_up": {0, "POST", "", map[string]string{"User-Agent": "persistlab"}},
		"/count":    {1, "GET", "", map[string]string{"Accept": "application/json", "User-Agent": "k6-like"}},
		"/items":    {2, "PUT", `{"n":1}`, map[string]string{"Content-Type": "application/json", "X-Trace": "a b;c=1", "User-Agent": "persistlab"}},
		"/head":     {3, "HEAD", "", nil},
		"/fail":     {4, "DELETE", "", nil},
	}[r.URL.Path]
	problem := ""
	switch {
	case want.method == "":
		problem = "unknown path " + r.URL.RequestURI()
	case r.Method != want.method || string(body) != want.body || r.ContentLength != int64(len(want.body)):
		problem = fmt.Sprintf("%s %s: body %q (length %d)", r.Method, r.URL.Path, body, r.ContentLength)
	case r.URL.Path == "/count" && r.URL.RawQuery != "x=1":
		problem = "query " + r.URL.RawQuery
	}
	for name, value := range want.headers {
		if got := r.Header.Values(name); len(got) != 1 || got[0] != value {
			problem = fmt.Sprintf("%s %s: header %s %q, want %q", r.Method, r.URL.Path, name, got, value)
		}
	}
	if problem != "" {
		ls.bad.Store(&problem)
	}
	ls.byPath[want.i].Add(1)
	n := ls.served.Add(1)
	if ls.onServe != nil {
		ls.onServe(n)
	}
	if r.URL.Path == "/fail" {
		http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintf(w, `{"count":%d}`, n)
}

// checkList checks a run of weightedList against what its server saw: every answer is its
// entry's, per-entry counts sum to the totals, and each entry's share of the n requests is its
// weight's within six binomial standard deviations.
func checkList(t *testing.T, res *Result, ls *listServer) {
	t.Helper()
	if p := ls.bad.Load(); p != nil {
		t.Errorf("a request did not arrive as written: %s", *p)
	}
	list := weightedList()
	if len(res.ByRequest) != len(list) {
		t.Fatalf("%d request counts for %d requests", len(res.ByRequest), len(list))
	}
	var ok, errs, total int64
	for i, c := range res.ByRequest {
		ok += c.OK
		errs += c.Errors
		total += int64(list[i].Weight)
		if c.Name != list[i].DisplayName() {
			t.Errorf("entry %d named %q, want %q", i, c.Name, list[i].DisplayName())
		}
		if got := ls.byPath[i].Load(); c.OK+c.Errors != got {
			t.Errorf("%s: %d ok + %d errors counted, server served %d", c.Name, c.OK, c.Errors, got)
		}
		if failing := i == 4; (failing && c.OK != 0) || (!failing && c.Errors != 0) {
			t.Errorf("%s: %d ok, %d errors", c.Name, c.OK, c.Errors)
		}
	}
	if ok != res.OK || errs != res.Errors() || ok+errs != ls.served.Load() || res.Statuses[503] != res.ByRequest[4].Errors {
		t.Errorf("entries sum to %d ok, %d errors; run %d ok, %d errors (%v); server served %d", ok, errs, res.OK, res.Errors(), res.Statuses, ls.served.Load())
	}
	n := float64(ok + errs)
	for i, c := range res.ByRequest {
		p := float64(list[i].Weight) / float64(total)
		got, sd := float64(c.OK+c.Errors), math.Sqrt(n*p*(1-p))
		if math.Abs(got-n*p) > 6*sd+1 {
			t.Errorf("%s: %.0f of %.0f requests, want %.1f ± %.1f (weight %d of %d)", c.Name, got, n, n*p, 6*sd+1, list[i].Weight, total)
		}
	}
}

// A closed loop over a list sends each entry as written, in the ratio of the weights.
func TestClosedLoopSendsWeightedRequests(t *testing.T) {
	const requests = 3000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ls := &listServer{onServe: func(n int64) {
		if n >= requests {
			cancel()
		}
	}}
	srv := httptest.NewServer(ls)
	defer srv.Close()
	res, err := Run(ctx, Config{URL: srv.URL, Mode: ModeClosed, VUs: 4, Duration: time.Hour, Timeout: 10 * time.Second, Requests: weightedList()})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK+res.Errors() < requests {
		t.Fatalf("%d requests answered, the server cancelled at %d", res.OK+res.Errors(), requests)
	}
	checkList(t, res, ls)
	if res.MaxAcked < 1 || res.Latency.Count() != res.OK {
		t.Errorf("max acked %d, %d latencies for %d OK", res.MaxAcked, res.Latency.Count(), res.OK)
	}
}

// An open loop over a list sends every slot's entry, the same entries in every run.
func TestOpenLoopSendsWeightedRequests(t *testing.T) {
	const slots = 400
	var runs [2][]RequestCount
	for k := range runs {
		ls := &listServer{}
		srv := httptest.NewServer(ls)
		res, err := Run(context.Background(), Config{URL: srv.URL + "/ignored", Mode: ModeOpen, VUs: 3, Rate: 2000, Duration: slots * 500 * time.Microsecond,
			GracefulStop: time.Hour, Timeout: 10 * time.Second, Requests: weightedList()})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.OK+res.Errors() != slots {
			t.Fatalf("%d requests for %d slots", res.OK+res.Errors(), slots)
		}
		checkList(t, res, ls)
		runs[k] = res.ByRequest
	}
	if fmt.Sprint(runs[0]) != fmt.Sprint(runs[1]) {
		t.Errorf("two runs of the same slots sent %v and %v", runs[0], runs[1])
	}
}

// Picks follow the weights exactly over many draws, and an entry of weight 0 counts as 1.
func TestPickerFollowsTheWeights(t *testing.T) {
	p := newPicker([]Request{{Weight: 9}, {Weight: 1}, {Weight: 0}, {Weight: 1000}})
	if p.total != 1011 {
		t.Fatalf("total weight %d", p.total)
	}
	const n = 200000
	var got [4]float64
	rng := vuSeed(7)
	for range n {
		got[p.pick(splitmix64(&rng))]++
	}
	for i, w := range []float64{9, 1, 1, 1000} {
		q := w / 1011
		if sd := math.Sqrt(n * q * (1 - q)); math.Abs(got[i]-n*q) > 6*sd+1 {
			t.Errorf("entry %d (weight %v): %v of %d picks, want %.1f ± %.1f", i, w, got[i], n, n*q, 6*sd+1)
		}
	}
	// The extremes of the random number land in the first and the last entry.
	if p.pick(0) != 0 || p.pick(math.MaxUint64) != 3 {
		t.Errorf("pick(0) %d, pick(max) %d", p.pick(0), p.pick(math.MaxUint64))
	}
}

func TestBadRequestsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		r    Request
		want string
	}{
		{Request{Method: "GE T", Path: "/"}, "method"},
		{Request{Method: "CONNECT", Path: "/"}, "method"},
		{Request{Path: "x"}, "path"},
		{Request{Path: "/a b"}, "path"},
		{Request{Path: "/", Weight: -1}, "weight"},
		{Request{Path: "/", Headers: [][2]string{{"host", "elsewhere"}}}, "header"},
		{Request{Path: "/", Headers: [][2]string{{"Bad Name", "x"}}}, "header"},
		{Request{Path: "/", Headers: [][2]string{{"X-A", "a\r\nHost: b"}}}, "header"},
	} {
		cfg := Config{URL: "http://x/", Mode: ModeClosed, VUs: 1, Duration: time.Second, Requests: []Request{{Path: "/"}, tc.r}}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "requests[1]") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming requests[1] and %s", tc.r, err, tc.want)
		}
	}
}

// The measuring loop's iteration over a list (pick, send, read, count) allocates nothing.
func TestWeightedRequestsDoNotAllocate(t *testing.T) {
	addr := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"count\":7}")
	reqs := []Request{
		{Method: "POST", Path: "/count_up", Weight: 9},
		{Path: "/count", Weight: 1, Headers: [][2]string{{"Accept", "application/json"}}},
		{Method: "PUT", Path: "/items", Body: []byte(`{"n":1}`), Weight: 3, Headers: [][2]string{{"Content-Type", "application/json"}}},
	}
	wire := make([]wireRequest, len(reqs))
	for i, r := range reqs {
		wire[i] = r.wire(addr)
	}
	p := newPicker(reqs)
	v := &vu{conn: newConn(addr, wire), picker: &p, rng: vuSeed(0), reqOK: make([]int64, len(reqs)), reqErrs: make([]int64, len(reqs)),
		latency: measure.NewRecorder(), service: measure.NewRecorder(), timeline: measure.NewTimeline(time.Now(), time.Hour, TimelineWidth),
		statuses: map[int]int64{}, ackKey: countKey}
	defer v.conn.close()
	deadline := time.Now().Add(time.Minute)
	v.conn.do(deadline) // dial outside the measurement
	slot := int64(0)
	allocs := testing.AllocsPerRun(300, func() {
		for _, req := range []int{v.picker.pick(splitmix64(&v.rng)), v.picker.pick(slotRandom(slot))} { // closed, open
			status, body, err := v.conn.doRequest(req, deadline)
			if err != nil || status != 200 {
				t.Fatalf("status %d err %v", status, err)
			}
			v.answer(req, status, body, time.Millisecond, time.Now())
		}
		slot++
	})
	if allocs != 0 {
		t.Errorf("one iteration allocates %v times", allocs)
	}
	if v.ok != v.reqOK[0]+v.reqOK[1]+v.reqOK[2] || v.reqOK[1] == 0 || v.reqOK[2] == 0 || v.maxAcked != 7 {
		t.Errorf("%d ok, by request %v, max acked %d", v.ok, v.reqOK, v.maxAcked)
	}
}
