package calibrate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand"
	"slices"
	"strconv"
	"sync"
	"time"

	"persistlab/cost"
	"persistlab/profile"
)

// BucketPlan is the bucket probe: fixed and small, every request counted before the first is sent.
type BucketPlan struct {
	Samples    int // small uploads, small reads and listings: this many of each
	SmallBytes int
	// FitSizes are read single-stream to fit the bandwidth (the smallest and largest, so that the
	// per-request latency cancels); HeldOutSize is read too and predicted from the fit.
	FitSizes    [2]int64
	HeldOutSize int64
	LargeReps   int           // reads of each large size
	Burst       time.Duration // how long one object is written again and again
	BurstEvery  time.Duration // at most one write attempt this often
}

const mib = 1 << 20

// DefaultBucketPlan is the probe `persistlab calibrate bucket` makes unless told otherwise.
func DefaultBucketPlan() BucketPlan {
	return BucketPlan{Samples: 300, SmallBytes: 4 << 10, FitSizes: [2]int64{1 * mib, 64 * mib}, HeldOutSize: 8 * mib,
		LargeReps: 3, Burst: 10 * time.Second, BurstEvery: 50 * time.Millisecond}
}

// Bounds of the plan's settings.
const (
	MinSamples = 20 // fewer leaves no p99 worth the name
	MaxSamples = 5000
	MinBurst   = 2 * time.Second
	MaxBurst   = time.Minute
)

// Check says what of the plan is out of bounds.
func (p BucketPlan) Check() error {
	if p.Samples < MinSamples || p.Samples > MaxSamples {
		return fmt.Errorf("--samples %d: want %d to %d requests of each class", p.Samples, MinSamples, MaxSamples)
	}
	if p.Burst < MinBurst || p.Burst > MaxBurst {
		return fmt.Errorf("--burst %s: want %s to %s of writes to one object", p.Burst, MinBurst, MaxBurst)
	}
	return nil
}

// burstAttempts is the most write attempts the burst makes.
func (p BucketPlan) burstAttempts() int { return int(p.Burst / p.BurstEvery) }

// largeSizes are the sizes read single-stream, small to large.
func (p BucketPlan) largeSizes() []int64 {
	return []int64{p.FitSizes[0], p.HeldOutSize, p.FitSizes[1]}
}

// PlanLine is one kind of request the probe makes: its GCS pricing class, what it is, how many.
type PlanLine struct {
	Class    string // "A", "B" or "free"
	What     string
	Requests int
}

// Lines are the probe's requests, in the order it makes them. A throttled delete is retried, and
// the burst stops early when it is done; the counts are the most the probe sends.
func (p BucketPlan) Lines() []PlanLine {
	large := len(p.largeSizes())
	small := fmt.Sprintf("%d KiB", p.SmallBytes>>10)
	return []PlanLine{
		{"A", "a listing of the probe's prefix (the bucket is there and listable, the prefix empty)", 1},
		{"A", "uploads of " + small + " objects (write latency)", p.Samples},
		{"B", "reads of those objects (read latency)", p.Samples},
		{"A", "listings of them (list latency)", p.Samples},
		{"A", fmt.Sprintf("uploads of %s objects", sizesText(p.largeSizes())), large},
		{"B", fmt.Sprintf("single-stream reads of those, %d each (bandwidth; the %s read held out)", p.LargeReps, sizeText(p.HeldOutSize)), large * p.LargeReps},
		{"A", fmt.Sprintf("writes to one object for %s, one per %s at most (its write limit)", p.Burst, p.BurstEvery), p.burstAttempts()},
		{"A", "a listing of the probe's prefix after the deletes (anything left)", 1},
		{"free", "deletes of every object the probe wrote, with retries when throttled", (p.Samples + large + 1) * deleteTries},
	}
}

// Requests counts the plan's requests by pricing class.
func (p BucketPlan) Requests() (classA, classB, free int) {
	for _, l := range p.Lines() {
		switch l.Class {
		case "A":
			classA += l.Requests
		case "B":
			classB += l.Requests
		default:
			free += l.Requests
		}
	}
	return classA, classB, free
}

// USD is the most the plan's requests cost at GCS's list prices (cost.GCSUSD).
func (p BucketPlan) USD() float64 {
	a, b, _ := p.Requests()
	return cost.GCSUSD(int64(a), int64(b))
}

// Bytes are what the probe uploads and downloads at most.
func (p BucketPlan) Bytes() (up, down int64) {
	var large int64
	for _, s := range p.largeSizes() {
		large += s
	}
	small := int64(p.SmallBytes)
	return int64(p.Samples)*small + large + int64(p.burstAttempts())*small, int64(p.Samples)*small + large*int64(p.LargeReps)
}

func sizeText(n int64) string { return strconv.FormatInt(n/mib, 10) + " MiB" }

func sizesText(sizes []int64) string {
	var s string
	for i, n := range sizes {
		switch {
		case i == 0:
		case i == len(sizes)-1:
			s += " and "
		default:
			s += ", "
		}
		s += strconv.FormatInt(n/mib, 10)
	}
	return s + " MiB"
}

// NewProbeID is a random id for a probe's prefix.
func NewProbeID() string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// ProbePrefix is the only prefix a probe writes under.
func ProbePrefix(id string) string { return "persistlab-probe-" + id + "/" }

// The probe's objects, under its prefix.
func smallObject(i int) string { return fmt.Sprintf("small/%04d", i) }

func largeObject(n int64) string { return "large/" + strconv.FormatInt(n/mib, 10) + "MiB" }

const burstObject = "burst"

// BurstAttempt is one write of the burst: when it started (since the burst's start), and whether
// it was taken or throttled (429 or 503).
type BurstAttempt struct {
	At        time.Duration
	Throttled bool
}

// BucketSamples are what the probe measured.
type BucketSamples struct {
	Put, Get, List []time.Duration           // first-byte latencies
	Reads          map[int64][]time.Duration // whole-read times by size
	Burst          []BurstAttempt
	BurstEvery     time.Duration
	Sent           map[string]int // requests sent, by pricing class
	Elapsed        time.Duration
}

// Requests is how many requests the probe sent.
func (s *BucketSamples) Requests() int { return s.Sent["A"] + s.Sent["B"] + s.Sent["free"] }

// BucketProbe runs a plan against one bucket, writing under Prefix only, and remembers every
// object it may have written so that Cleanup can delete them.
type BucketProbe struct {
	Client   *Client
	Plan     BucketPlan
	Prefix   string
	Progress io.Writer // a line per phase; nil for none

	written []string
	samples BucketSamples
}

func (p *BucketProbe) say(format string, a ...any) {
	if p.Progress != nil {
		fmt.Fprintf(p.Progress, format+"\n", a...)
	}
}

// name is an object of the probe, recorded as written before the request that writes it.
func (p *BucketProbe) name(rest string) string {
	n := p.Prefix + rest
	if !slices.Contains(p.written, n) {
		p.written = append(p.written, n)
	}
	return n
}

// Run makes the plan's requests and returns what they measured. On an error it returns the
// error; Cleanup must be called in every case.
func (p *BucketProbe) Run(ctx context.Context) (*BucketSamples, error) {
	s := &p.samples
	*s = BucketSamples{Reads: map[int64][]time.Duration{}, Sent: map[string]int{}, BurstEvery: p.Plan.BurstEvery}
	start := time.Now()
	defer func() { s.Elapsed = time.Since(start) }()
	c, plan := p.Client, p.Plan
	rng := mrand.New(mrand.NewSource(time.Now().UnixNano()))
	body := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	s.Sent["A"]++
	if _, names, err := c.List(ctx, p.Prefix, 1); err != nil {
		return s, err
	} else if len(names) > 0 {
		return s, fmt.Errorf("the prefix %s already holds %s: not the probe's to write over", p.Prefix, names[0])
	}
	phase := func(what string, n int, class string, f func(i int) (time.Duration, error)) ([]time.Duration, error) {
		t0 := time.Now()
		out := make([]time.Duration, 0, n)
		for i := 0; i < n; i++ {
			s.Sent[class]++
			d, err := f(i)
			if err != nil {
				return out, err
			}
			out = append(out, d)
		}
		p.say("  %-44s %4d in %s", what, n, time.Since(t0).Round(100*time.Millisecond))
		return out, nil
	}
	small := smallObject
	var err error
	if s.Put, err = phase("small uploads", plan.Samples, "A", func(i int) (time.Duration, error) {
		t, err := c.Put(ctx, p.name(small(i)), body(plan.SmallBytes))
		return t.FirstByte, err
	}); err != nil {
		return s, err
	}
	if s.Get, err = phase("small reads", plan.Samples, "B", func(i int) (time.Duration, error) {
		t, err := c.Get(ctx, p.Prefix+small(i))
		return t.FirstByte, err
	}); err != nil {
		return s, err
	}
	if s.List, err = phase("listings", plan.Samples, "A", func(i int) (time.Duration, error) {
		t, _, err := c.List(ctx, p.Prefix+"small/", 10)
		return t.FirstByte, err
	}); err != nil {
		return s, err
	}
	large := largeObject
	t0 := time.Now()
	for _, n := range plan.largeSizes() {
		s.Sent["A"]++
		if _, err := c.Put(ctx, p.name(large(n)), body(int(n))); err != nil {
			return s, err
		}
	}
	p.say("  %-44s %4d in %s", "large uploads ("+sizesText(plan.largeSizes())+")", len(plan.largeSizes()), time.Since(t0).Round(100*time.Millisecond))
	t0 = time.Now()
	for r := 0; r < plan.LargeReps; r++ { // sizes interleaved, so a drift in the target's speed hits each alike
		for _, n := range plan.largeSizes() {
			s.Sent["B"]++
			t, err := c.Get(ctx, p.Prefix+large(n))
			if err != nil {
				return s, err
			}
			if t.Bytes != n {
				return s, fmt.Errorf("read %s: %d bytes of %d", p.Prefix+large(n), t.Bytes, n)
			}
			s.Reads[n] = append(s.Reads[n], t.Total)
		}
	}
	p.say("  %-44s %4d in %s", "single-stream reads", plan.LargeReps*len(plan.largeSizes()), time.Since(t0).Round(100*time.Millisecond))
	if err := p.burst(ctx, body(plan.SmallBytes)); err != nil {
		return s, err
	}
	return s, nil
}

// burst writes one object again and again, at most once per BurstEvery, for Burst, and records
// which writes were throttled.
func (p *BucketProbe) burst(ctx context.Context, body []byte) error {
	s, plan := &p.samples, p.Plan
	name := p.name(burstObject)
	start := time.Now()
	for i := 0; i < plan.burstAttempts(); i++ {
		due := start.Add(time.Duration(i) * plan.BurstEvery)
		if wait := time.Until(due); wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		at := time.Since(start)
		if at >= plan.Burst {
			break
		}
		s.Sent["A"]++
		_, err := p.Client.Put(ctx, name, body)
		var se *StatusError
		switch {
		case err == nil:
			s.Burst = append(s.Burst, BurstAttempt{At: at})
		case errors.As(err, &se) && se.Throttled():
			s.Burst = append(s.Burst, BurstAttempt{At: at, Throttled: true})
		default:
			return err
		}
	}
	throttled := 0
	for _, a := range s.Burst {
		if a.Throttled {
			throttled++
		}
	}
	p.say("  %-44s %4d in %s, %d throttled (429/503)", "writes to one object", len(s.Burst), time.Since(start).Round(100*time.Millisecond), throttled)
	return nil
}

// deleteTries is how often a delete is tried when the target throttles it (the burst's object
// is throttled right after the burst), waiting a little longer each time.
const deleteTries = 6

// Leftover is an object the probe wrote and could not delete.
type Leftover struct {
	Name string
	Why  string
}

// Cleanup deletes every object the probe may have written, retrying throttled deletes, then lists
// the probe's prefix for anything still there. It returns how many it deleted and what is left.
// ctx should be a fresh one: it runs after an interrupt too.
func (p *BucketProbe) Cleanup(ctx context.Context) (deleted int, left []Leftover) {
	failed := map[string]string{}
	var mu sync.Mutex
	queue := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < deleteWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range queue {
				sent, err := p.deleteOne(ctx, name)
				mu.Lock()
				p.samples.Sent["free"] += sent
				if err != nil {
					failed[name] = err.Error()
				} else {
					deleted++
				}
				mu.Unlock()
			}
		}()
	}
	for _, name := range p.written {
		queue <- name
	}
	close(queue)
	wg.Wait()
	p.samples.Sent["A"]++
	_, names, err := p.Client.List(ctx, p.Prefix, 1000)
	if err != nil {
		for _, name := range p.written {
			if why, ok := failed[name]; ok {
				left = append(left, Leftover{name, why})
			}
		}
		return deleted, append(left, Leftover{p.Prefix + "*", "the prefix could not be listed to check: " + err.Error()})
	}
	for _, name := range names {
		why := failed[name]
		switch {
		case why != "":
		case slices.Contains(p.written, name):
			why = "still listed after its delete"
		default:
			why = "not an object the probe wrote: left alone"
		}
		left = append(left, Leftover{name, why})
	}
	return deleted, left
}

// deleteWorkers is how many deletes are in flight at once: cleanup is no measurement.
const deleteWorkers = 8

// deleteOne deletes one object, trying again while the target throttles it; it returns how many
// requests it sent.
func (p *BucketProbe) deleteOne(ctx context.Context, name string) (sent int, err error) {
	for try := 0; try < deleteTries; try++ {
		sent++
		if err = p.Client.Delete(ctx, name); err == nil {
			return sent, nil
		}
		var se *StatusError
		if !errors.As(err, &se) || !se.Throttled() {
			return sent, err
		}
		select {
		case <-ctx.Done():
			return sent, err
		case <-time.After(time.Duration(1<<try) * 250 * time.Millisecond):
		}
	}
	return sent, err
}

// CleanupDead deletes the objects a killed probe's record names, as Cleanup does for a probe of
// this process, and lists the prefix for anything else: named in left, never deleted.
func CleanupDead(ctx context.Context, client *Client, rec ProbeRecord) (deleted int, left []Leftover) {
	p := &BucketProbe{Client: client, Prefix: rec.Prefix, written: rec.Objects, samples: BucketSamples{Sent: map[string]int{}}}
	return p.Cleanup(ctx)
}

// Written is how many objects the probe may have written.
func (p *BucketProbe) Written() int { return len(p.written) }

// Quantile is the q-quantile of durations (linear between order statistics).
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + time.Duration((pos-float64(lo))*float64(s[hi]-s[lo]))
}

// QuantileInterval is a distribution-free 95% interval for the q-quantile of the distribution
// ds were drawn from: the order statistics at ranks n·q ± 1.96·sqrt(n·q·(1-q)) (the binomial's
// normal approximation). A p99 from a few hundred samples is this uncertain whatever the target.
func QuantileInterval(ds []time.Duration, q float64) (lo, hi time.Duration) {
	n := len(ds)
	if n == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	half := 1.96 * math.Sqrt(float64(n)*q*(1-q))
	at := func(rank float64) time.Duration {
		return s[max(0, min(n-1, int(math.Round(rank))-1))]
	}
	return at(float64(n)*q - half), at(float64(n)*q + half + 1)
}

// BucketFit is what the samples fit: figures for the bucket model's options, what could not be
// fitted, and the held-out read.
type BucketFit struct {
	Figures   []profile.Figure
	NotFitted []profile.NotFitted
	HeldOut   []profile.HeldOut
}

// Value is the fitted value of option, "" if it was not fitted.
func (f BucketFit) Value(option string) string {
	for _, x := range f.Figures {
		if x.Option == option {
			return x.Value
		}
	}
	return ""
}

// FitBucket fits the bucket model's options to the samples.
func FitBucket(s *BucketSamples, plan BucketPlan) BucketFit {
	var f BucketFit
	add := func(option, value, how string) {
		f.Figures = append(f.Figures, profile.Figure{Option: option, Value: value, Provenance: "measured", How: how})
	}
	ms := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	small := fmt.Sprintf("%d KiB", plan.SmallBytes>>10)
	for _, c := range []struct {
		class, what string
		ds          []time.Duration
	}{
		{"read", "reads (GET alt=media) of " + small + " objects", s.Get},
		{"write", "uploads (uploadType=media) of " + small + " objects, each to a new name", s.Put},
		{"list", "listings of a prefix (maxResults 10)", s.List},
	} {
		if len(c.ds) < MinSamples {
			why := fmt.Sprintf("only %d %s measured", len(c.ds), c.what)
			f.NotFitted = append(f.NotFitted, profile.NotFitted{Option: c.class + "_median", Why: why}, profile.NotFitted{Option: c.class + "_p99", Why: why})
			continue
		}
		how := fmt.Sprintf("of the first-byte latencies of %d %s, one at a time on a kept-alive connection", len(c.ds), c.what)
		interval := func(q float64) string {
			lo, hi := QuantileInterval(c.ds, q)
			return fmt.Sprintf(" (95%% interval %s to %s)", ms(lo), ms(hi))
		}
		add(c.class+"_median", ms(Quantile(c.ds, 0.5)), "median "+how+interval(0.5))
		add(c.class+"_p99", ms(Quantile(c.ds, 0.99)), "99th percentile "+how+interval(0.99))
	}
	lo, hi := plan.FitSizes[0], plan.FitSizes[1]
	tLo, tHi := Quantile(s.Reads[lo], 0.5), Quantile(s.Reads[hi], 0.5)
	var bytesPerSecond float64
	switch {
	case len(s.Reads[lo]) == 0 || len(s.Reads[hi]) == 0:
		f.NotFitted = append(f.NotFitted, profile.NotFitted{Option: "stream_mib_s", Why: "the large reads were not all made"})
	case tHi <= tLo:
		f.NotFitted = append(f.NotFitted, profile.NotFitted{Option: "stream_mib_s", Why: fmt.Sprintf("the %s read (%s) took no longer than the %s one (%s)", sizeText(hi), tHi, sizeText(lo), tLo)})
	default:
		bytesPerSecond = float64(hi-lo) / (tHi - tLo).Seconds()
		add("stream_mib_s", strconv.FormatFloat(bytesPerSecond/mib, 'f', 1, 64),
			fmt.Sprintf("(%s - %s) over the difference of the median times of %d single-stream reads of each (%s and %s), so that the per-request latency cancels",
				sizeText(hi), sizeText(lo), len(s.Reads[hi]), tLo.Round(time.Millisecond), tHi.Round(time.Millisecond)))
	}
	f.fitBurst(s, plan)
	if readMedian := Quantile(s.Get, 0.5); bytesPerSecond > 0 && len(s.Reads[plan.HeldOutSize]) > 0 && readMedian > 0 {
		predicted := readMedian.Seconds() + float64(plan.HeldOutSize)/bytesPerSecond
		measured := Quantile(s.Reads[plan.HeldOutSize], 0.5).Seconds()
		round := func(x float64) float64 { return math.Round(x*1e6) / 1e6 }
		predicted, measured = round(predicted), round(measured)
		f.HeldOut = append(f.HeldOut, profile.HeldOut{Point: sizeText(plan.HeldOutSize) + " read", Unit: "s",
			Predicted: predicted, Measured: measured, Error: math.Round((predicted-measured)/measured*1e6) / 1e6})
	}
	return f
}

// fitBurst fits the per-object write limit: the writes taken before the first throttled one are
// its burst; the writes taken after it come one per interval.
func (f *BucketFit) fitBurst(s *BucketSamples, plan BucketPlan) {
	first := slices.IndexFunc(s.Burst, func(a BurstAttempt) bool { return a.Throttled })
	if first < 0 {
		why := fmt.Sprintf("no 429 or 503 in %d writes to one object over %s (one per %s at most): its limit was not reached at that rate", len(s.Burst), plan.Burst, plan.BurstEvery)
		f.NotFitted = append(f.NotFitted, profile.NotFitted{Option: "object_update_interval", Why: why}, profile.NotFitted{Option: "object_update_burst", Why: why})
		return
	}
	if first > 0 {
		f.Figures = append(f.Figures, profile.Figure{Option: "object_update_burst", Value: strconv.Itoa(first), Provenance: "measured",
			How: fmt.Sprintf("writes to one object taken before the first 429/503, writing it once per %s", plan.BurstEvery)})
	}
	var after []time.Duration
	for _, a := range s.Burst[first:] {
		if !a.Throttled {
			after = append(after, a.At)
		}
	}
	if len(after) < 2 {
		f.NotFitted = append(f.NotFitted, profile.NotFitted{Option: "object_update_interval",
			Why: fmt.Sprintf("%d write(s) taken after the first 429/503 in %s: too few to time the interval between them (a longer --burst would)", len(after), plan.Burst)})
		return
	}
	interval := (after[len(after)-1] - after[0]) / time.Duration(len(after)-1)
	f.Figures = append(f.Figures, profile.Figure{Option: "object_update_interval", Value: interval.Round(10 * time.Millisecond).String(), Provenance: "measured",
		How: fmt.Sprintf("mean time between the %d writes to one object taken after its first 429/503, attempting one per %s for %s", len(after), plan.BurstEvery, plan.Burst)})
}
