package calibrate

import (
	"math"
	"strconv"
	"testing"
	"time"

	"persistlab/cost"
)

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// The fit reads each figure the way its option means it: quantiles of first bytes, bandwidth
// from the size difference (the per-request latency cancels), the write limit from the writes
// taken after the first 429; the held-out read is predicted from them, not fitted.
func TestFitBucketFromKnownSamples(t *testing.T) {
	plan := DefaultBucketPlan()
	var get, put, list []time.Duration
	for i := 1; i <= 100; i++ {
		get, put, list = append(get, ms(float64(i))), append(put, ms(2*float64(i))), append(list, ms(3*float64(i)))
	}
	const latency, bw = 0.030, 40.0 * mib // seconds, bytes/s
	read := func(size int64, extra float64) time.Duration {
		return time.Duration((latency + float64(size)/bw + extra) * float64(time.Second))
	}
	s := &BucketSamples{Get: get, Put: put, List: list, Reads: map[int64][]time.Duration{
		1 * mib:  {read(mib, 0.002), read(mib, 0), read(mib, 0.050)},
		64 * mib: {read(64*mib, 0), read(64*mib, 0.001), read(64*mib, 0.3)},
		8 * mib:  {read(8*mib, 0.100), read(8*mib, 0.100), read(8*mib, 0.100)},
	}}
	// A burst of 3, then one write taken every 1.5 s.
	for i := 0; i < 200; i++ {
		at := time.Duration(i) * plan.BurstEvery
		taken := i < 3 || (i >= 3 && at%(1500*time.Millisecond) == 0 && at > 0)
		s.Burst = append(s.Burst, BurstAttempt{At: at, Throttled: !taken})
	}
	f := FitBucket(s, plan)
	want := map[string]string{"read_median": "50.5ms", "write_median": "101ms", "list_median": "151.5ms",
		"object_update_burst": "3", "object_update_interval": "1.5s"}
	for option, v := range want {
		if got := f.Value(option); got != v {
			t.Errorf("%s = %q, want %q", option, got, v)
		}
	}
	if got, _ := strconv.ParseFloat(f.Value("stream_mib_s"), 64); math.Abs(got-40) > 0.5 {
		t.Errorf("stream_mib_s %v, want 40 (the latency cancels)", got)
	}
	if len(f.HeldOut) != 1 {
		t.Fatalf("held out %+v", f.HeldOut)
	}
	h := f.HeldOut[0]
	wantPredicted := Quantile(get, 0.5).Seconds() + 8.0/40
	if h.Point != "8 MiB read" || math.Abs(h.Predicted-wantPredicted) > 0.002 || math.Abs(h.Measured-read(8*mib, 0.1).Seconds()) > 1e-5 ||
		math.Abs(h.Error-(h.Predicted-h.Measured)/h.Measured) > 1e-5 {
		t.Errorf("held out %+v, want predicted %.4f", h, wantPredicted)
	}
	if len(f.NotFitted) != 0 {
		t.Errorf("not fitted: %+v", f.NotFitted)
	}
}

// A burst that is never throttled fits no limit, and says so, rather than a guess.
func TestFitBucketWithoutThrottlingFitsNoLimit(t *testing.T) {
	plan := DefaultBucketPlan()
	s := &BucketSamples{Reads: map[int64][]time.Duration{}}
	for i := 0; i < 50; i++ {
		s.Burst = append(s.Burst, BurstAttempt{At: time.Duration(i) * plan.BurstEvery})
	}
	f := FitBucket(s, plan)
	if f.Value("object_update_interval") != "" || f.Value("stream_mib_s") != "" || len(f.HeldOut) != 0 {
		t.Errorf("fitted %+v", f)
	}
	not := map[string]bool{}
	for _, n := range f.NotFitted {
		not[n.Option] = n.Why != ""
	}
	for _, o := range []string{"object_update_interval", "object_update_burst", "stream_mib_s", "read_median", "read_p99"} {
		if !not[o] {
			t.Errorf("%s: not said to be unfitted (%+v)", o, f.NotFitted)
		}
	}
}

func TestQuantileAndItsInterval(t *testing.T) {
	var ds []time.Duration
	for i := 300; i >= 1; i-- {
		ds = append(ds, ms(float64(i)))
	}
	if got := Quantile(ds, 0.5); got != ms(150.5) {
		t.Errorf("median %v", got)
	}
	if got := Quantile(ds, 0.99); got.Round(time.Microsecond) != ms(297.01) {
		t.Errorf("p99 %v", got)
	}
	lo, hi := QuantileInterval(ds, 0.5)
	if lo >= ms(150) || hi <= ms(151) || lo < ms(125) || hi > ms(177) {
		t.Errorf("median interval %v..%v", lo, hi)
	}
	lo, hi = QuantileInterval(ds, 0.99)
	if lo >= ms(297) || hi < ms(299) {
		t.Errorf("p99 interval %v..%v", lo, hi)
	}
}

// The plan's price is its lines' counts at GCS list prices, and the default stays under a cent.
func TestBucketPlanPrice(t *testing.T) {
	p := DefaultBucketPlan()
	a, b, _ := p.Requests()
	if want := float64(a)/1000*cost.GCSClassAPer1000USD + float64(b)/1000*cost.GCSClassBPer1000USD; math.Abs(p.USD()-want) > 1e-12 {
		t.Errorf("USD %v, want %v", p.USD(), want)
	}
	if p.USD() >= 0.01 {
		t.Errorf("the default probe costs $%.4f: the goal is under a cent", p.USD())
	}
	more := p
	more.Samples *= 2
	if more.USD() <= p.USD() {
		t.Error("more samples cost no more")
	}
	if err := (BucketPlan{Samples: 5, Burst: 10 * time.Second}).Check(); err == nil {
		t.Error("5 samples passed")
	}
}
