// Package measure records latencies into HDR histograms and summarises runs the way the seeds do.
package measure

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to one hour at 3 significant digits,
// so every reported millisecond figure is exact to 0.1 %.
const (
	lowestMicros      = 1
	highestMicros     = int64(time.Hour / time.Microsecond)
	significantDigits = 3
)

// Recorder holds one goroutine's latencies. It is not safe for concurrent use: give each virtual
// user its own and Merge them at the end, which keeps the hot path free of locks and allocations.
type Recorder struct {
	hist  *hdr.Histogram
	sum   time.Duration // exact sum, so avg is not rounded to histogram buckets
	min   time.Duration
	max   time.Duration
	count int64
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{hist: hdr.New(lowestMicros, highestMicros, significantDigits), min: math.MaxInt64}
}

// Record adds one latency. Values beyond the histogram's range are clamped to it, never dropped.
func (r *Recorder) Record(d time.Duration) {
	us := int64(d / time.Microsecond)
	if us < lowestMicros {
		us = lowestMicros
	}
	if us > highestMicros {
		us = highestMicros
	}
	_ = r.hist.RecordValue(us) // cannot fail: the value is clamped into range
	r.sum += d
	r.count++
	if d < r.min {
		r.min = d
	}
	if d > r.max {
		r.max = d
	}
}

// Merge adds everything other recorded into r.
func (r *Recorder) Merge(other *Recorder) {
	r.hist.Merge(other.hist)
	r.sum += other.sum
	r.count += other.count
	if other.min < r.min {
		r.min = other.min
	}
	if other.max > r.max {
		r.max = other.max
	}
}

// Count is the number of recorded latencies.
func (r *Recorder) Count() int64 { return r.count }

// Summarize computes the run's summary; elapsed is the wall time the samples were taken over.
func (r *Recorder) Summarize(elapsed time.Duration) Summary {
	s := Summary{Count: r.count}
	if r.count == 0 {
		return s
	}
	s.MinMs = ms(r.min)
	s.MaxMs = ms(r.max)
	s.AvgMs = ms(r.sum) / float64(r.count)
	s.MedMs = r.percentileMs(50)
	s.P90Ms = r.percentileMs(90)
	s.P95Ms = r.percentileMs(95)
	s.P99Ms = r.percentileMs(99)
	if elapsed > 0 {
		s.Rate = float64(r.count) / elapsed.Seconds()
	}
	return s
}

// percentileMs reports the histogram's value at p, clamped to the exact min and max so a
// bucket's upper edge never reads above the largest latency seen.
func (r *Recorder) percentileMs(p float64) float64 {
	v := float64(r.hist.ValueAtPercentile(p)) / 1000
	return math.Min(math.Max(v, ms(r.min)), ms(r.max))
}

// Encode returns the histogram in the HdrHistogram V2 compressed, base64 form that every HdrHistogram
// implementation reads, so a results file can be re-analysed with other tools.
func (r *Recorder) Encode() (string, error) {
	b, err := r.hist.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram reads a histogram written by Encode. Values are in microseconds.
func DecodeHistogram(encoded string) (*hdr.Histogram, error) {
	h, err := hdr.Decode([]byte(encoded))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
