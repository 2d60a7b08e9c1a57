package measure

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seedRuns reads seed 000's raw table: per VU level, three runs of avg, min, med, max, p90, p95.
func seedRuns(t *testing.T, path string) (vus []float64, avgs []float64, byVUs map[int][]Summary) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byVUs = map[int][]Summary{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		var v [8]float64
		for i, field := range strings.Split(line, "\t") {
			if v[i], err = strconv.ParseFloat(field, 64); err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
		}
		vus = append(vus, v[0])
		avgs = append(avgs, v[2])
		byVUs[int(v[0])] = append(byVUs[int(v[0])], Summary{AvgMs: v[2], MinMs: v[3], MedMs: v[4], MaxMs: v[5], P90Ms: v[6], P95Ms: v[7]})
	}
	return vus, avgs, byVUs
}

func TestSlopeThroughOriginReproducesSeed000(t *testing.T) {
	for _, tc := range []struct {
		file string
		want float64 // published in seed 000: "the coefficients ... are 8.19 and 4.77"
	}{
		{"testdata/seed000_gcsfuse_raw.tsv", 8.19},
		{"testdata/seed000_litestream_raw.tsv", 4.77},
	} {
		vus, avgs, _ := seedRuns(t, tc.file)
		if len(vus) != 30 {
			t.Fatalf("%s: %d runs, want 30 (10 VU levels x 3)", tc.file, len(vus))
		}
		if got := SlopeThroughOrigin(vus, avgs); math.Abs(got-tc.want) > 0.005 {
			t.Errorf("%s: slope %.4f, seed published %.2f", tc.file, got, tc.want)
		}
	}
}

func TestMedianOfRunsReproducesSeed000Table(t *testing.T) {
	// Rows of the seed's published (median-of-three) tables: vus, med, avg, p90, p95, min, max.
	published := map[string][][7]float64{
		"testdata/seed000_gcsfuse_raw.tsv": {
			{2, 10.97, 16.79, 38.74, 42.62, 8.12, 629.35},
			{12, 94.21, 98.2, 104.83, 112.09, 8.59, 748.89},
			{20, 164.94, 165.12, 184.68, 192, 8.32, 783.74},
		},
		"testdata/seed000_litestream_raw.tsv": {
			{4, 11.14, 19.51, 52.09, 55.21, 6.41, 159.78},
			{16, 83.6, 77, 94.66, 99.93, 6.63, 189.46},
		},
	}
	for file, rows := range published {
		_, _, byVUs := seedRuns(t, file)
		for _, row := range rows {
			got := MedianOfRuns(byVUs[int(row[0])])
			want := Summary{MedMs: row[1], AvgMs: row[2], P90Ms: row[3], P95Ms: row[4], MinMs: row[5], MaxMs: row[6]}
			if got != want {
				t.Errorf("%s vus=%v: median of runs %+v, seed published %+v", file, row[0], got, want)
			}
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1}, 5},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) should be NaN")
	}
}

func TestRecorderSummaryOfKnownData(t *testing.T) {
	r := NewRecorder()
	// 1..1000 ms, each once: med 500, p90 900, p95 950, p99 990, avg 500.5.
	for i := 1000; i >= 1; i-- {
		r.Record(time.Duration(i) * time.Millisecond)
	}
	s := r.Summarize(10 * time.Second)
	check := func(name string, got, want, relTol float64) {
		if math.Abs(got-want) > want*relTol {
			t.Errorf("%s = %v, want %v (±%.1f%%)", name, got, want, relTol*100)
		}
	}
	if s.Count != 1000 {
		t.Errorf("count %d", s.Count)
	}
	check("rate", s.Rate, 100, 0)
	check("min", s.MinMs, 1, 0)
	check("max", s.MaxMs, 1000, 0)
	check("avg", s.AvgMs, 500.5, 0) // exact: kept outside the histogram
	for _, p := range []struct {
		name      string
		got, want float64
	}{{"med", s.MedMs, 500}, {"p90", s.P90Ms, 900}, {"p95", s.P95Ms, 950}, {"p99", s.P99Ms, 990}} {
		check(p.name, p.got, p.want, 0.001) // 3 significant digits
	}
}

func TestRecorderMergeAndEncodeRoundTrip(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	for i := 1; i <= 100; i++ {
		a.Record(time.Duration(i) * time.Millisecond)
		b.Record(time.Duration(i+100) * time.Millisecond)
	}
	a.Merge(b)
	s := a.Summarize(time.Second)
	if s.Count != 200 || s.MinMs != 1 || s.MaxMs != 200 || s.AvgMs != 100.5 {
		t.Fatalf("merged summary %+v", s)
	}
	enc, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	h, err := DecodeHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 200 || h.ValueAtQuantile(50) != a.hist.ValueAtQuantile(50) {
		t.Errorf("decoded histogram count %d p50 %d, want 200 and %d", h.TotalCount(), h.ValueAtQuantile(50), a.hist.ValueAtQuantile(50))
	}
}

func TestRecorderClampsOutOfRange(t *testing.T) {
	r := NewRecorder()
	r.Record(0)
	r.Record(2 * time.Hour)
	if r.Count() != 2 || r.hist.TotalCount() != 2 {
		t.Fatalf("out-of-range values must be counted, got %d/%d", r.Count(), r.hist.TotalCount())
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := NewRecorder()
	if n := testing.AllocsPerRun(1000, func() { r.Record(1234 * time.Microsecond) }); n != 0 {
		t.Errorf("Record allocates %v times per call", n)
	}
}
