// Package httpload is persistlab's HTTP load generator: requests against an app on loopback, in a
// closed loop of virtual users (k6's constant-vus, seed 000's model) or an open loop at a constant
// arrival rate whose latency counts from each request's intended start (no coordinated omission).
// A run sends one request, or picks each from a weighted list (Config.Requests). The workloads
// that drive an app over HTTP (counter, http) declare its parameters (Params), report its figures
// (Metrics, ResultOf) and run their app as it says (NewAppGroup, CPUUtil).
package httpload

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"persistlab/measure"
)

// Modes of the driver.
const (
	ModeClosed = "closed"
	ModeOpen   = "open"
)

// Defaults follow k6 where k6 has one.
const (
	DefaultTimeout      = 60 * time.Second // k6's http request timeout
	DefaultGracefulStop = 30 * time.Second // k6's gracefulStop for in-flight iterations
	maxErrorSamples     = 5
)

// Config is one run of the driver.
type Config struct {
	URL          string        // e.g. http://127.0.0.1:8080/count_up
	Method       string        // e.g. POST
	Mode         string        // ModeClosed or ModeOpen
	VUs          int           // closed: concurrent users; open: connections available to the arrivals
	Rate         float64       // open: requests started per second
	Duration     time.Duration // how long new requests start
	Timeout      time.Duration // per request
	GracefulStop time.Duration // how long in-flight requests may finish after Duration
	// RecordAcks keeps every acknowledged count with its time (crash runs date their losses).
	RecordAcks bool
	// AckField names the JSON field of a 200 answer that carries the acknowledged count ("":
	// "count", as the counter answers {"count":N}).
	AckField string
	// NetworkRTT is a constant network round trip each request spends before it is sent: the
	// server sees it that much later and its latency includes it, as a client across a network
	// measures (0: loopback only).
	NetworkRTT time.Duration
	// Requests, when set, are what the run sends instead of Method and URL's path (URL gives
	// the host and port): each iteration one, picked by weight, by a virtual user's own
	// deterministic random numbers (closed loop) or by the arrival's slot (open loop).
	Requests []Request
}

// Ack is one acknowledged count and when its answer arrived.
type Ack = measure.Ack

// Result is what one run measured. Latencies of 200 answers go into the histogram; every other
// answer and every transport error is counted, never dropped.
type Result struct {
	Latency  *measure.Recorder `json:"-"`
	Service  *measure.Recorder `json:"-"` // open loop: from actual send, to show the queueing the latency includes
	Elapsed  time.Duration     `json:"-"`
	OK       int64             `json:"ok"`
	Statuses map[int]int64     `json:"statuses,omitempty"` // non-200 answers by status code
	// TransportErrors counts requests with no HTTP answer (refused, reset, timed out).
	TransportErrors int64    `json:"transport_errors"`
	ErrorSamples    []string `json:"error_samples,omitempty"`
	// MaxAcked is the highest {"count":N} any client saw in a 200 answer.
	MaxAcked int64 `json:"max_acked"`
	// Late counts open-loop requests that started more than 1 ms after their intended time.
	Late int64 `json:"late,omitempty"`
	// LastAck is when the last 200 answer arrived.
	LastAck time.Time `json:"-"`
	// Acks holds every acknowledged count, in count order, when Config.RecordAcks is set.
	Acks []Ack `json:"-"`
	// Timeline is the 200 answers' latency per window of the run, by when each answer arrived.
	Timeline *measure.Timeline `json:"-"`
	// ByRequest counts each entry of Config.Requests' answers, in the list's order (nil without
	// a list); they sum to OK and Errors().
	ByRequest []RequestCount `json:"requests,omitempty"`
}

// TimelineWidth is the narrowest window of a run's timeline: the interval at which the runner
// samples a backend's counters, so the two line up.
const TimelineWidth = 250 * time.Millisecond

// AckedAt finds when count n was acknowledged (Acks must be recorded); ok is false if it was not.
func (r *Result) AckedAt(n int64) (time.Time, bool) {
	i := sort.Search(len(r.Acks), func(i int) bool { return r.Acks[i].Count >= n })
	if i < len(r.Acks) && r.Acks[i].Count == n {
		return r.Acks[i].At, true
	}
	return time.Time{}, false
}

// Errors is the number of requests that did not get a 200.
func (r *Result) Errors() int64 {
	n := r.TransportErrors
	for _, c := range r.Statuses {
		n += c
	}
	return n
}

// Validate reports the first field that cannot be run.
func (c *Config) Validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case err != nil || u.Scheme != "http" || u.Host == "":
		return fmt.Errorf("url %q: want http://HOST:PORT/PATH (plain HTTP/1.1)", c.URL)
	case c.Mode != ModeClosed && c.Mode != ModeOpen:
		return fmt.Errorf("mode %q: want %q or %q", c.Mode, ModeClosed, ModeOpen)
	case c.VUs < 1:
		return fmt.Errorf("vus %d: want at least 1", c.VUs)
	case c.Mode == ModeOpen && c.Rate <= 0:
		return fmt.Errorf("rate %v: open mode needs a rate above 0 requests/s", c.Rate)
	case c.Duration <= 0:
		return fmt.Errorf("duration %v: want more than 0", c.Duration)
	case len(c.Requests) > maxRequests:
		return fmt.Errorf("requests: %d entries, want at most %d", len(c.Requests), maxRequests)
	}
	for i, r := range c.Requests {
		if err := r.validate(); err != nil {
			return fmt.Errorf("requests[%d] (%s): %w", i, r.DisplayName(), err)
		}
	}
	return nil
}

type vu struct {
	conn     *httpConn
	picker   *picker // shared, read-only
	rng      uint64  // closed loop: the state of the user's random numbers
	reqOK    []int64 // by request
	reqErrs  []int64
	latency  *measure.Recorder
	service  *measure.Recorder
	timeline *measure.Timeline // shared by every VU
	statuses map[int]int64
	ok       int64
	errs     int64
	late     int64
	maxAcked int64
	lastAck  time.Time
	acks     []Ack // nil unless acks are recorded
	samples  []string
	ackKey   []byte // `"FIELD":`, made once per run
}

func (v *vu) fail(req int, err error) {
	v.errs++
	v.reqErrs[req]++
	if len(v.samples) < maxErrorSamples {
		v.samples = append(v.samples, err.Error())
	}
}

func (v *vu) answer(req, status int, body []byte, latency time.Duration, at time.Time) {
	if status != 200 {
		v.statuses[status]++
		v.reqErrs[req]++
		if len(v.samples) < maxErrorSamples {
			v.samples = append(v.samples, fmt.Sprintf("HTTP %d: %.200s", status, body))
		}
		return
	}
	v.ok++
	v.reqOK[req]++
	v.lastAck = at
	v.latency.Record(latency)
	v.timeline.Record(at, latency)
	if n, ok := fieldValue(body, v.ackKey); ok {
		v.maxAcked = max(v.maxAcked, n)
		if v.acks != nil {
			v.acks = append(v.acks, Ack{Count: n, At: at})
		}
	}
}

// Run drives load until cfg.Duration has passed (or ctx ends) and returns what it measured.
// A cancelled ctx stops new requests at once and still returns the measurements so far.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Method == "" {
		cfg.Method = "POST"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.GracefulStop <= 0 {
		cfg.GracefulStop = DefaultGracefulStop
	}
	u, _ := url.Parse(cfg.URL)
	path := u.RequestURI()
	if cfg.AckField == "" {
		cfg.AckField = "count"
	}
	ackKey := []byte(`"` + cfg.AckField + `":`)

	// Every request's bytes are built once; the connections share them.
	reqs := cfg.Requests
	if len(reqs) == 0 {
		reqs = []Request{{Method: cfg.Method, Path: path}}
	}
	wire := make([]wireRequest, len(reqs))
	for i, r := range reqs {
		wire[i] = r.wire(u.Host)
	}
	pick := newPicker(reqs)

	start := time.Now()
	timeline := measure.NewTimeline(start, cfg.Duration+cfg.GracefulStop, TimelineWidth)
	vus := make([]*vu, cfg.VUs)
	for i := range vus {
		vus[i] = &vu{conn: newConn(u.Host, wire), picker: &pick, rng: vuSeed(i), reqOK: make([]int64, len(reqs)), reqErrs: make([]int64, len(reqs)),
			latency: measure.NewRecorder(), service: measure.NewRecorder(), timeline: timeline, statuses: map[int]int64{}, ackKey: ackKey}
		if cfg.RecordAcks {
			vus[i].acks = make([]Ack, 0, 4096)
		}
	}
	var stopped atomic.Bool
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-runCtx.Done()
		stopped.Store(true)
	}()

	end := start.Add(cfg.Duration)
	hardStop := time.AfterFunc(cfg.Duration+cfg.GracefulStop, func() {
		stopped.Store(true)
		for _, v := range vus {
			v.conn.close() // unblocks a request still in flight
		}
	})
	defer hardStop.Stop()

	var seq atomic.Int64
	interval := time.Duration(0)
	if cfg.Mode == ModeOpen {
		interval = time.Duration(float64(time.Second) / cfg.Rate)
	}
	if cfg.Mode == ModeClosed && cfg.NetworkRTT == 0 {
		if err := runEventLoops(vus, wire, u.Host, &stopped, end, start.Add(cfg.Duration+cfg.GracefulStop), cfg.Timeout); err != nil {
			return nil, err
		}
	} else {
		var wg sync.WaitGroup
		for _, v := range vus {
			wg.Add(1)
			go func(v *vu) {
				defer wg.Done()
				defer v.conn.close()
				if cfg.Mode == ModeClosed {
					closedLoop(v, &stopped, end, cfg.Timeout, cfg.NetworkRTT)
				} else {
					openLoop(v, &stopped, &seq, start, end, interval, cfg.Timeout, cfg.NetworkRTT)
				}
			}(v)
		}
		wg.Wait()
	}
	elapsed := time.Since(start)
	if cfg.Mode == ModeOpen && ctx.Err() == nil && elapsed < cfg.Duration {
		// The last arrival's slot comes before the end: the rate is over the whole set duration.
		elapsed = cfg.Duration
	}

	res := &Result{Latency: measure.NewRecorder(), Service: measure.NewRecorder(), Elapsed: elapsed, Statuses: map[int]int64{}, Timeline: timeline}
	if len(cfg.Requests) > 0 {
		res.ByRequest = make([]RequestCount, len(cfg.Requests))
		for i, r := range cfg.Requests {
			res.ByRequest[i].Name = r.DisplayName()
		}
	}
	seen := map[string]bool{}
	for _, v := range vus {
		for i := range res.ByRequest {
			res.ByRequest[i].OK += v.reqOK[i]
			res.ByRequest[i].Errors += v.reqErrs[i]
		}
		res.Latency.Merge(v.latency)
		res.Service.Merge(v.service)
		res.OK += v.ok
		res.TransportErrors += v.errs
		res.Late += v.late
		res.MaxAcked = max(res.MaxAcked, v.maxAcked)
		if v.lastAck.After(res.LastAck) {
			res.LastAck = v.lastAck
		}
		res.Acks = append(res.Acks, v.acks...)
		for code, n := range v.statuses {
			res.Statuses[code] += n
		}
		for _, s := range v.samples {
			if !seen[s] && len(res.ErrorSamples) < maxErrorSamples {
				seen[s] = true
				res.ErrorSamples = append(res.ErrorSamples, s)
			}
		}
	}
	sort.Strings(res.ErrorSamples)
	sort.Slice(res.Acks, func(i, j int) bool { return res.Acks[i].Count < res.Acks[j].Count })
	return res, nil
}

// closedLoop is k6's constant-vus: each user sends its next request as soon as the last one ends.
// It runs where each request first spends a network round trip; without one the event loops
// (runEventLoops) run the same loop at less CPU per request.
func closedLoop(v *vu, stopped *atomic.Bool, end time.Time, timeout, rtt time.Duration) {
	for !stopped.Load() {
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		req := v.picker.pick(splitmix64(&v.rng))
		if rtt > 0 {
			time.Sleep(rtt)
		}
		status, body, err := v.conn.doRequest(req, t0.Add(timeout))
		done := time.Now()
		if err != nil {
			if !stopped.Load() {
				v.fail(req, err)
			}
			continue
		}
		v.answer(req, status, body, done.Sub(t0), done)
	}
}

// openLoop takes request slots start+i*interval from a shared sequence. A slot whose time has
// passed because every connection was busy is sent at once, and its latency still counts from the
// slot's time, so a slow server cannot hide its queue from the measurement.
func openLoop(v *vu, stopped *atomic.Bool, seq *atomic.Int64, start, end time.Time, interval, timeout, rtt time.Duration) {
	for !stopped.Load() {
		slot := seq.Add(1) - 1
		intended := start.Add(time.Duration(slot) * interval)
		if !intended.Before(end) {
			return
		}
		req := v.picker.pick(slotRandom(slot))
		if wait := time.Until(intended); wait > 0 {
			time.Sleep(wait)
		}
		sent := time.Now()
		if sent.Sub(intended) > time.Millisecond {
			v.late++
		}
		if rtt > 0 {
			time.Sleep(rtt)
		}
		status, body, err := v.conn.doRequest(req, sent.Add(timeout))
		done := time.Now()
		if err != nil {
			if !stopped.Load() {
				v.fail(req, err)
			}
			continue
		}
		if status == 200 {
			v.service.Record(done.Sub(sent))
		}
		v.answer(req, status, body, done.Sub(intended), done)
	}
}
