package fio

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/report/reporttest"
	"persistlab/results"
	"persistlab/scenario"
)

// fioResults is a fio run over sweep, one run per cell, each cell's MiB/s given by mibs.
func fioResults(t *testing.T, backends []scenario.BackendSpec, sweep scenario.Sweep, mibs func(backend string, p map[string]string) float64) *results.Results {
	t.Helper()
	r := reporttest.Fio(backends, sweep, mibs)
	report.Summarize(r)
	return r
}

// Seed 002's four hypotheses are answered from the measurements: true, partly or false per claim.
func TestSeed002HypothesesFollowTheMeasurements(t *testing.T) {
	backends := []scenario.BackendSpec{{Name: "gcsfuse", Label: "nocache"}, {Name: "gcsfuse", Label: "cache", Options: map[string]string{"file_cache": "on"}}}
	sweep := scenario.Sweep{{Name: "file_size", Values: []string{"10KiB", "1GiB"}}, {Name: "rw", Values: []string{"read", "randread", "write", "randwrite"}}}
	r := fioResults(t, backends, sweep, func(b string, p map[string]string) float64 {
		v := 100.0
		if p["file_size"] == "10KiB" {
			v = 1 // small files slowest everywhere: hypothesis 3 holds
		}
		switch {
		case b == "cache" && p["rw"] == "read":
			v *= 3 // faster at both sizes: 1 holds
		case b == "cache" && p["rw"] == "randread" && p["file_size"] == "1GiB":
			v *= 3 // faster at one size only: 2 holds partly
		case b == "cache" && p["rw"] == "randwrite" && p["file_size"] == "1GiB":
			v *= 2 // not alike: 4 holds partly
		}
		return v
	})
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	for _, want := range []string{
		"1. read is faster with the cache: TRUE (2 of 2 hold",
		"2. random read is faster with the cache: PARTLY (1 of 2 hold, 1 cannot tell",
		"3. gcsfuse handles small files badly (the smallest file's MiB/s is the lowest): TRUE (8 of 8 hold",
		// One run each: writes differ beyond the margin, and cannot be told alike within it.
		"4. writes are alike with and without the cache (within 0.8-1.25x): FALSE (0 of 4 hold, 1 fails, 3 cannot tell",
		"NOT 1GiB 100.0 vs 200.0 MiB/s",
		"seed 002's hypotheses, case by case: one run each, so a case holds or fails only where the two figures are more than 25% apart",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
}

// With seed 002's configuration and a variant of it, each cache entry is judged against gcsfuse
// without the cache, in the scenario's order, and the seed's verdicts are recalled once.
func TestSeed002HypothesesPerCacheVariant(t *testing.T) {
	backends := []scenario.BackendSpec{{Name: "gcsfuse"},
		{Name: "gcsfuse", Label: "gcsfuse-cache", Options: map[string]string{"file_cache": "on", "file_cache_for_range_read": "false"}},
		{Name: "gcsfuse", Label: "gcsfuse-cache-range", Options: map[string]string{"file_cache": "on", "file_cache_for_range_read": "true"}}}
	sweep := scenario.Sweep{{Name: "file_size", Values: []string{"10KiB", "1GiB"}}, {Name: "rw", Values: []string{"read", "randread", "write", "randwrite"}}}
	r := fioResults(t, backends, sweep, func(b string, p map[string]string) float64 {
		switch {
		case b == "gcsfuse-cache" && p["rw"] == "read", b == "gcsfuse-cache-range" && strings.Contains(p["rw"], "read"):
			return 300 // the seed's cache speeds up reads; the variant random reads too
		}
		return 100
	})
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	plain := strings.Index(text, "(gcsfuse without the file cache against gcsfuse-cache with it, file_cache_for_range_read false)")
	ranged := strings.Index(text, "(gcsfuse without the file cache against gcsfuse-cache-range with it, file_cache_for_range_read true)")
	if plain < 0 || ranged < plain {
		t.Fatalf("want a block per cache entry, in order:\n%s", text)
	}
	for _, c := range []struct{ block, want string }{
		{text[plain:ranged], "1. read is faster with the cache: TRUE (2 of 2 hold"},
		// Alike in one run each: not told apart, so not judged, where the 5% rule once said FALSE.
		{text[plain:ranged], "2. random read is faster with the cache: not judged: the run cannot tell any case from noise: 0 of 2 hold, 2 cannot tell: ? 10KiB 100.0 vs 100.0 MiB/s"},
		{text[ranged:], "1. read is faster with the cache: TRUE (2 of 2 hold"},
		{text[ranged:], "2. random read is faster with the cache: TRUE (2 of 2 hold: 10KiB 100.0 vs 300.0 MiB/s"},
		// Equal writes in one run each cannot be told alike: the band is within the margin.
		{text[ranged:], "4. writes are alike with and without the cache (within 0.8-1.25x): not judged: the run cannot tell any case from noise: 0 of 4 hold, 4 cannot tell"},
	} {
		if !strings.Contains(c.block, c.want) {
			t.Errorf("want %q in:\n%s", c.want, c.block)
		}
	}
	if n := strings.Count(text, "the seed answered all four true"); n != 1 {
		t.Errorf("the seed's verdicts recalled %d times:\n%s", n, text)
	}
}

// Seed 003's shape: one linked axis whose block size follows the file size. Ratios are set beside
// the published ones, and charts draw MiB/s against the file size, one per rw, not per block size.
func TestSeed003RatiosAndChartsOverALinkedAxis(t *testing.T) {
	axis := scenario.Axis{Name: "rw+file_size+bs", Values: []string{"read/128KiB/128KiB", "read/1GiB/1MiB", "randread/128KiB/128KiB", "randread/1GiB/1MiB"}}
	r := fioResults(t, []scenario.BackendSpec{{Name: "gcsfuse"}}, scenario.Sweep{axis}, func(_ string, p map[string]string) float64 {
		switch p["rw"] + p["file_size"] {
		case "read1GiB":
			return 400
		case "randread1GiB":
			return 100
		case "read128KiB":
			return 40
		}
		return 20
	})
	r.Scenario.Published = []scenario.Published{
		{Backend: "gcsfuse", Source: "seed", Params: map[string]string{"rw": "read"}, Columns: []string{"file_size", "mib_s"},
			Rows: [][]scenario.Value{{"128KiB", "100"}, {"1GiB", "1000"}}},
		{Backend: "gcsfuse", Source: "seed", Params: map[string]string{"rw": "randread"}, Columns: []string{"file_size", "mib_s"},
			Rows: [][]scenario.Value{{"128KiB", "50"}, {"1GiB", "300"}}},
	}
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	for _, want := range []string{"random / sequential read at 1GiB: ours 0.25, seed 0.30"} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	charts, err := fioCharts(r)
	if err != nil || len(charts) != 2 {
		t.Fatalf("charts %+v, %v", charts, err)
	}
	for _, c := range charts {
		if c.XLabel != "file_size" || len(c.Series) != 1 || len(c.Series[0].Points) != 2 || strings.Contains(c.Title, "bs=") {
			t.Errorf("chart %+v", c)
		}
	}
	if !strings.Contains(charts[0].Title, "rw=read") || charts[0].Series[0].Points[1] != [2]float64{1 << 30, 400} {
		t.Errorf("first chart %+v", charts[0])
	}
}

// The file-size axis reads in binary units (it read as percentiles, "99.999%", when every log
// axis was drawn as a latency spectrum), a tick at each size swept; a swept count (jobs) stays a
// plain number.
func TestChartAxesReadInTheirUnit(t *testing.T) {
	for _, c := range []struct {
		axis   scenario.Axis
		unit   report.Unit
		labels []string
	}{
		{scenario.Axis{Name: "file_size", Values: []string{"4KiB", "1MiB", "1GiB"}}, report.UnitBytes, []string{"4 KiB", "1 MiB", "1 GiB"}},
		{scenario.Axis{Name: "numjobs", Values: []string{"1", "4", "16"}}, report.UnitCount, []string{"1", "4", "16"}},
	} {
		r := fioResults(t, []scenario.BackendSpec{{Name: "local"}}, scenario.Sweep{c.axis}, func(string, map[string]string) float64 { return 1 })
		charts, err := report.ChartsFor(r)
		if err != nil || len(charts) != 1 {
			t.Fatalf("%s: charts %+v, %v", c.axis.Name, charts, err)
		}
		ch := charts[0]
		labels := map[string]bool{}
		for _, tk := range ch.X.Ticks {
			labels[tk.Label] = true
			if strings.Contains(tk.Label, "%") {
				t.Errorf("%s tick %q", c.axis.Name, tk.Label)
			}
		}
		for _, want := range c.labels {
			if !labels[want] {
				t.Errorf("%s: no tick %q among %+v", c.axis.Name, want, ch.X.Ticks)
			}
		}
		if ch.XUnit != c.unit || !ch.X.Log {
			t.Errorf("%s: unit %q, log %v", c.axis.Name, ch.XUnit, ch.X.Log)
		}
	}
}

// Each gcsfuse entry with the file cache is judged against the first without it that runs the same
// gcsfuse (version and defaults): the seed's day's software against itself, the current against
// the current; a cache entry with no such partner is left out.
func TestCachePairsMatchTheSoftware(t *testing.T) {
	v24 := map[string]string{"defaults": "v2.4"}
	with := func(o map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range o {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	r := &results.Results{Scenario: &scenario.Spec{Backends: []scenario.BackendSpec{
		{Name: "gcsfuse", Options: v24},
		{Name: "gcsfuse", Label: "gcsfuse-cache", Options: with(v24, "file_cache", "on")},
		{Name: "gcsfuse", Label: "gcsfuse-cache-range", Options: with(v24, "file_cache", "on", "file_cache_for_range_read", "true")},
		// An option today's declarations refuse, of no bearing on the cache: still paired.
		{Name: "gcsfuse", Label: "gcsfuse-cache-odd", Options: with(v24, "file_cache", "on", "stat_cache_max_size_mb", "-7")},
		{Name: "gcsfuse", Label: "gcsfuse-3.11"},
		{Name: "gcsfuse", Label: "gcsfuse-3.11-again", Options: map[string]string{"defaults": "current"}},
		{Name: "gcsfuse", Label: "gcsfuse-cache-3.11", Options: map[string]string{"file_cache": "true", "defaults": "current"}},
		{Name: "gcsfuse", Label: "gcsfuse-cache-old", Options: map[string]string{"file_cache": "on", "version": "3.2.8"}},
		{Name: "local", Label: "local-cache", Options: map[string]string{"file_cache": "on"}},
	}}}
	got := cachePairs(r)
	want := []cachePair{{"gcsfuse", "gcsfuse-cache"}, {"gcsfuse", "gcsfuse-cache-range"}, {"gcsfuse", "gcsfuse-cache-odd"}, {"gcsfuse-3.11", "gcsfuse-cache-3.11"}}
	if !slices.Equal(got, want) {
		t.Errorf("pairs %v, want %v", got, want)
	}
}
