package fio

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fioJSON decodes fio's output on its own, without Parse: from the first line that is "{".
func fioJSON(t *testing.T, out []byte) map[string]any {
	t.Helper()
	i := bytes.Index(out, []byte("\n{\n"))
	if bytes.HasPrefix(out, []byte("{")) {
		i = -1
	} else if i < 0 {
		t.Fatalf("no JSON object in fio's output: %.200q", out)
	}
	var m map[string]any
	if err := json.Unmarshal(out[i+1:], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// fioJobs is fio's list of job reports: jobs, or client_stats without fio's "All clients" sum.
func fioJobs(m map[string]any) (jobs []map[string]any, all map[string]any) {
	list, ok := m["jobs"].([]any)
	if !ok {
		list = m["client_stats"].([]any)
	}
	for _, j := range list {
		jm := j.(map[string]any)
		if jm["jobname"] == "All clients" {
			all = jm
			continue
		}
		jobs = append(jobs, jm)
	}
	return jobs, all
}

func num(m map[string]any, path ...string) float64 {
	var v any = m
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	return v.(float64)
}

// sameAsFio checks one parsed job against fio's own numbers for it.
func sameAsFio(t *testing.T, label string, got JobResult, want map[string]any) {
	t.Helper()
	near := func(what string, g, w float64) {
		t.Helper()
		if math.Abs(g-w) > 0.5 {
			t.Errorf("%s %s: parsed %v, fio says %v", label, what, g, w)
		}
	}
	if got.Name != want["jobname"] || float64(got.Error) != num(want, "error") {
		t.Errorf("%s: name %q error %d; fio says %v %v", label, got.Name, got.Error, want["jobname"], want["error"])
	}
	near("job_runtime ms", float64(got.Elapsed.Milliseconds()), num(want, "job_runtime"))
	near("usr_cpu", got.UsrCPU, num(want, "usr_cpu"))
	for _, d := range []struct {
		name string
		got  Direction
	}{{"read", got.Read}, {"write", got.Write}} {
		near(d.name+" io_bytes", float64(d.got.IOBytes), num(want, d.name, "io_bytes"))
		near(d.name+" total_ios", float64(d.got.IOs), num(want, d.name, "total_ios"))
		near(d.name+" bw_bytes", d.got.BandwidthBytesPerSec, num(want, d.name, "bw_bytes"))
		near(d.name+" iops", d.got.IOPS, num(want, d.name, "iops"))
		near(d.name+" runtime ms", float64(d.got.Runtime.Milliseconds()), num(want, d.name, "runtime"))
		for _, l := range []struct {
			key string
			got LatencyStats
		}{{"lat_ns", d.got.Lat}, {"clat_ns", d.got.Clat}} {
			sameLatency(t, label+" "+d.name+" "+l.key, l.got, want[d.name].(map[string]any)[l.key].(map[string]any))
		}
	}
	sameLatency(t, label+" sync lat_ns", got.Sync, want["sync"].(map[string]any)["lat_ns"].(map[string]any))
	if got.Sync.Count != int64(num(want, "sync", "total_ios")) {
		t.Errorf("%s: %d syncs; fio's sync total_ios %v", label, got.Sync.Count, num(want, "sync", "total_ios"))
	}
}

func sameLatency(t *testing.T, label string, got LatencyStats, want map[string]any) {
	t.Helper()
	for _, c := range []struct {
		key string
		got time.Duration
	}{{"min", got.Min}, {"max", got.Max}, {"mean", got.Mean}, {"stddev", got.StdDev}} {
		if math.Abs(float64(c.got)-num(want, c.key)) > 0.5 {
			t.Errorf("%s %s: parsed %v ns, fio says %v", label, c.key, int64(c.got), num(want, c.key))
		}
	}
	if float64(got.Count) != num(want, "N") {
		t.Errorf("%s N: parsed %d, fio says %v", label, got.Count, num(want, "N"))
	}
	pcts, _ := want["percentile"].(map[string]any)
	if len(got.Percentiles) != len(pcts) {
		t.Errorf("%s: %d percentiles, fio gave %d", label, len(got.Percentiles), len(pcts))
	}
	for _, p := range got.Percentiles {
		if w := pcts[strconv.FormatFloat(p.P, 'f', 6, 64)]; w != float64(p.Value) {
			t.Errorf("%s p%v: parsed %d, fio says %v", label, p.P, p.Value, w)
		}
	}
	bins, _ := want["bins"].(map[string]any)
	if len(got.Bins) != len(bins) {
		t.Errorf("%s: %d bins, fio gave %d", label, len(got.Bins), len(bins))
	}
	for _, b := range got.Bins {
		if w := bins[strconv.FormatInt(int64(b.Value), 10)]; w != float64(b.Count) {
			t.Errorf("%s bin %d: count %d, fio says %v", label, b.Value, b.Count, w)
		}
	}
}

// sameAsFioOutput checks every job of a report, and that the aggregate sums them.
func sameAsFioOutput(t *testing.T, label string, out *Output, raw []byte) {
	t.Helper()
	jobs, _ := fioJobs(fioJSON(t, raw))
	if len(out.Jobs) != len(jobs) || len(jobs) == 0 {
		t.Fatalf("%s: parsed %d jobs, fio reported %d", label, len(out.Jobs), len(jobs))
	}
	for i := range jobs {
		sameAsFio(t, label+" job "+strconv.Itoa(i), out.Jobs[i], jobs[i])
	}
	sumsJobs(t, label, out.Aggregate, out.Jobs)
}

// sumsJobs checks the invariants of an aggregate over jobs.
func sumsJobs(t *testing.T, label string, agg JobResult, jobs []JobResult) {
	t.Helper()
	for _, d := range []struct {
		name string
		agg  Direction
		part func(JobResult) Direction
	}{{"read", agg.Read, func(j JobResult) Direction { return j.Read }}, {"write", agg.Write, func(j JobResult) Direction { return j.Write }}} {
		var bytes, ios, count int64
		var bw, iops, weighted float64
		lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
		for _, j := range jobs {
			p := d.part(j)
			bytes, ios, bw, iops = bytes+p.IOBytes, ios+p.IOs, bw+p.BandwidthBytesPerSec, iops+p.IOPS
			count += p.Lat.Count
			weighted += float64(p.Lat.Mean) * float64(p.Lat.Count)
			if p.Lat.Count > 0 {
				lo, hi = min(lo, p.Lat.Min), max(hi, p.Lat.Max)
			}
		}
		if d.agg.IOBytes != bytes || d.agg.IOs != ios || d.agg.Lat.Count != count {
			t.Errorf("%s aggregate %s: %d bytes %d IOs %d latencies; jobs sum to %d %d %d", label, d.name,
				d.agg.IOBytes, d.agg.IOs, d.agg.Lat.Count, bytes, ios, count)
		}
		if math.Abs(d.agg.BandwidthBytesPerSec-bw) > 1e-6*bw || math.Abs(d.agg.IOPS-iops) > 1e-6*iops {
			t.Errorf("%s aggregate %s: bw %v iops %v; jobs sum to %v %v", label, d.name, d.agg.BandwidthBytesPerSec, d.agg.IOPS, bw, iops)
		}
		if count > 0 && (math.Abs(float64(d.agg.Lat.Mean)-weighted/float64(count)) > 1 || d.agg.Lat.Min != lo || d.agg.Lat.Max != hi) {
			t.Errorf("%s aggregate %s latency: mean %v min %v max %v; jobs give %v %v %v", label, d.name,
				d.agg.Lat.Mean, d.agg.Lat.Min, d.agg.Lat.Max, time.Duration(weighted/float64(count)), lo, hi)
		}
		for _, p := range d.agg.Lat.Percentiles {
			plo, phi := time.Duration(math.MaxInt64), time.Duration(0)
			for _, j := range jobs {
				for _, q := range d.part(j).Lat.Percentiles {
					if q.P == p.P {
						plo, phi = min(plo, q.Value), max(phi, q.Value)
					}
				}
			}
			// A mixture's percentile lies between its parts' percentiles.
			if p.Value < plo || p.Value > phi {
				t.Errorf("%s aggregate %s p%v = %v outside the jobs' [%v, %v]", label, d.name, p.P, p.Value, plo, phi)
			}
		}
	}
}

func fixture(t *testing.T, name string) ([]byte, *Output) {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return raw, out
}

func TestParseRecordedOutputs(t *testing.T) {
	for _, name := range []string{"local-2jobs.jsonplus", "local-2jobs.json", "clients-2x2.jsonplus"} {
		raw, out := fixture(t, name)
		if out.FioVersion != "fio-3.33" {
			t.Errorf("%s: version %q", name, out.FioVersion)
		}
		sameAsFioOutput(t, name, out, raw)
		for _, j := range out.Jobs {
			for _, d := range []Direction{j.Read, j.Write} {
				if d.IOBytes != d.IOs*4096 {
					t.Errorf("%s: %d bytes in %d IOs of 4 KiB", name, d.IOBytes, d.IOs)
				}
			}
			if j.Write.IOBytes+j.Read.IOBytes != 1<<20 {
				t.Errorf("%s: job moved %d bytes; its size is 1 MiB", name, j.Write.IOBytes+j.Read.IOBytes)
			}
		}
	}
}

func TestParseLocalFsyncCounts(t *testing.T) {
	_, out := fixture(t, "local-2jobs.jsonplus") // fsync=16, 256 writes per job
	for _, j := range out.Jobs {
		// fio 3.33 issues no fsync after the job's last write: 15 syncs, not 16.
		if per := j.Write.IOs / 16; j.Sync.Count != per && j.Sync.Count != per-1 {
			t.Errorf("%d syncs for %d writes at fsync=16", j.Sync.Count, j.Write.IOs)
		}
	}
	if out.Aggregate.Sync.Count != out.Jobs[0].Sync.Count+out.Jobs[1].Sync.Count {
		t.Errorf("aggregate syncs %d; jobs %d + %d", out.Aggregate.Sync.Count, out.Jobs[0].Sync.Count, out.Jobs[1].Sync.Count)
	}
}

func TestPercentilesFromBinsMatchFio(t *testing.T) {
	for _, name := range []string{"local-2jobs.jsonplus", "clients-2x2.jsonplus"} {
		_, out := fixture(t, name)
		checked := 0
		for _, j := range out.Jobs {
			for _, s := range []LatencyStats{j.Read.Lat, j.Read.Clat, j.Write.Lat, j.Write.Clat, j.Sync} {
				if s.Count == 0 {
					continue
				}
				var ps []float64
				for _, p := range s.Percentiles {
					ps = append(ps, p.P)
				}
				got := PercentilesFromBins(s.Bins, s.Count, ps)
				if len(got) != len(s.Percentiles) || len(got) == 0 {
					t.Fatalf("%s: %d percentiles from bins, fio printed %d", name, len(got), len(s.Percentiles))
				}
				for i := range got {
					if got[i] != s.Percentiles[i] {
						t.Errorf("%s: from bins %v, fio printed %v", name, got[i], s.Percentiles[i])
					}
				}
				checked++
			}
		}
		if checked < 4 {
			t.Errorf("%s: only %d latency summaries with histograms", name, checked)
		}
	}
}

func TestParsePlainJSONMarksUpperBound(t *testing.T) {
	_, out := fixture(t, "local-2jobs.json")
	agg := out.Aggregate.Write.Lat
	if !agg.UpperBound || agg.Bins != nil || len(agg.Percentiles) == 0 {
		t.Fatalf("no histograms in plain JSON: want upper-bound percentiles, got %+v", agg)
	}
	for _, p := range agg.Percentiles {
		var want time.Duration
		for _, j := range out.Jobs {
			for _, q := range j.Write.Lat.Percentiles {
				if q.P == p.P {
					want = max(want, q.Value)
				}
			}
		}
		if p.Value != want {
			t.Errorf("p%v = %v; want the jobs' largest, %v", p.P, p.Value, want)
		}
	}
	_, plus := fixture(t, "local-2jobs.jsonplus")
	if l := plus.Aggregate.Write.Lat; l.UpperBound || len(l.Bins) == 0 || len(l.Percentiles) == 0 {
		t.Errorf("json+ aggregate: want merged-histogram percentiles, got upper bound %v, %d bins", l.UpperBound, len(l.Bins))
	}
}

func TestParseClientServerOutput(t *testing.T) {
	_, out := fixture(t, "clients-2x2.jsonplus")
	if len(out.Clients) != 2 || len(out.Jobs) != 4 || out.AllClients == nil {
		t.Fatalf("%d clients, %d jobs, all-clients %v; want 2, 4 (2 each), fio's sum", len(out.Clients), len(out.Jobs), out.AllClients != nil)
	}
	for _, c := range out.Clients {
		if c.Hostname != "127.0.0.1" || c.Port == 0 || len(c.Jobs) != 2 {
			t.Errorf("client %s:%d with %d jobs", c.Hostname, c.Port, len(c.Jobs))
		}
		sumsJobs(t, "client total", c.Total, c.Jobs)
	}
	if out.Clients[0].Port == out.Clients[1].Port {
		t.Errorf("both clients on port %d", out.Clients[0].Port)
	}
	sumsJobs(t, "clients", out.Aggregate, []JobResult{out.Clients[0].Total, out.Clients[1].Total})
	sameAsAllClients(t, out)
}

// sameAsAllClients compares the aggregate with fio's own sum over servers where both sum alike.
func sameAsAllClients(t *testing.T, out *Output) {
	t.Helper()
	a, f := out.Aggregate, *out.AllClients
	for _, d := range []struct {
		name string
		a, f Direction
	}{{"read", a.Read, f.Read}, {"write", a.Write, f.Write}} {
		if d.a.IOBytes != d.f.IOBytes || d.a.IOs != d.f.IOs || d.a.Lat.Count != d.f.Lat.Count ||
			d.a.Lat.Min != d.f.Lat.Min || d.a.Lat.Max != d.f.Lat.Max {
			t.Errorf("%s: aggregate %+v\nfio's All clients %+v", d.name, d.a, d.f)
		}
		if math.Abs(float64(d.a.Lat.Mean-d.f.Lat.Mean)) > 1 || math.Abs(float64(d.a.Lat.StdDev-d.f.Lat.StdDev)) > 1e-3*float64(d.f.Lat.StdDev)+1 {
			t.Errorf("%s latency mean/stddev: aggregate %v/%v, fio %v/%v", d.name, d.a.Lat.Mean, d.a.Lat.StdDev, d.f.Lat.Mean, d.f.Lat.StdDev)
		}
	}
}

func TestParseSkipsLinesBeforeJSON(t *testing.T) {
	raw, _ := fixture(t, "local-2jobs.json")
	noisy := append([]byte("fio: some warning {not json}\n<vm> r: Laying out IO file\n"), raw...)
	a, err := Parse(noisy)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Parse(raw)
	if a.Aggregate.Write.IOBytes != b.Aggregate.Write.IOBytes || len(a.Jobs) != len(b.Jobs) {
		t.Errorf("with leading lines: %d jobs %d bytes; without: %d jobs %d bytes", len(a.Jobs), a.Aggregate.Write.IOBytes, len(b.Jobs), b.Aggregate.Write.IOBytes)
	}
}

func TestParseRejects(t *testing.T) {
	for _, c := range []struct {
		in, says string
	}{
		{"", "no JSON object"},
		{"fio: failed parsing rw=sideways\n", "no JSON object"},
		{"<vm> {\n", "no JSON object"},
		{"{\n  \"jobs\": [\n", "JSON from byte 0"},
		{`{"fio version": "fio-3.33", "jobs": []}`, "fio ran nothing"},
		{`{"jobs": [{"jobname": "x", "read": {"lat_ns": {"N": 1, "percentile": {"abc": 5}}}}]}`, `percentile key "abc"`},
		{`{"jobs": [{"jobname": "x", "write": {"clat_ns": {"N": 1, "bins": {"-3": 1}}}}]}`, `bin key "-3"`},
	} {
		_, err := Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Parse(%q): %v; want an error saying %q", c.in, err, c.says)
		}
	}
}
