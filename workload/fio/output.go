package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// Output is one fio run's results.
type Output struct {
	FioVersion string
	// Jobs is every job fio reported (one per group with group_reporting); with fio servers, every
	// server's jobs, in the order fio printed them.
	Jobs []JobResult
	// Clients groups Jobs by fio server (client/server mode only).
	Clients []ClientResult
	// AllClients is fio's own sum over the servers (its "All clients" entry), kept for comparison.
	// fio prints it when the servers sent more than one report in all; it has no percentiles, and
	// its bandwidth is total bytes over the longest runtime.
	AllClients *JobResult
	// Aggregate is over all of Jobs, combined as Merge describes.
	Aggregate JobResult
}

// ClientResult is what one fio server ran.
type ClientResult struct {
	Hostname string // as the client named the server, e.g. 127.0.0.1
	Port     int
	Jobs     []JobResult
	Total    JobResult // over Jobs, like Output.Aggregate
}

// JobResult is one job (or one group-reported group) of fio's report.
type JobResult struct {
	Name        string
	Read, Write Direction
	Sync        LatencyStats // fsync latency (fio's "sync" section); Count is the number of syncs
	Error       int          // fio's errno for the job; 0 = none
	// Elapsed is fio's job_runtime (for a group-reported group fio sums its jobs' runtimes).
	Elapsed        time.Duration
	UsrCPU, SysCPU float64 // percent of Elapsed
}

// Direction is one I/O direction of a job.
type Direction struct {
	IOBytes              int64
	IOs                  int64
	BandwidthBytesPerSec float64
	IOPS                 float64
	Runtime              time.Duration // fio counts it in whole milliseconds
	Lat                  LatencyStats  // total latency (lat_ns): submission + completion
	Clat                 LatencyStats  // completion latency (clat_ns)
}

// LatencyStats is one of fio's latency summaries.
type LatencyStats struct {
	Count                  int64
	Min, Max, Mean, StdDev time.Duration
	Percentiles            []Percentile // sorted by P; empty when fio reported none
	// UpperBound says Percentiles are the largest of several jobs' percentiles, not the merged
	// distribution's: fio gave no histogram to merge. Each is then an upper bound of the true one.
	UpperBound bool
	// Bins is fio's latency histogram (json+ output only), sorted by Value: each bin's midpoint
	// and how many latencies fell into it.
	Bins []Bin
}

// Percentile is one percentile of a latency distribution.
type Percentile struct {
	P     float64 // 0 < P <= 100
	Value time.Duration
}

// Bin is one bucket of fio's latency histogram.
type Bin struct {
	Value time.Duration
	Count int64
}

// Parse reads fio's JSON or JSON+ output. Lines before the JSON (fio servers' "<host> ..." lines
// in client/server mode, warnings) are skipped: the JSON starts at the first '{' that begins a line.
func Parse(out []byte) (*Output, error) {
	start := -1
	for i := 0; i < len(out); i++ {
		if out[i] == '{' && (i == 0 || out[i-1] == '\n') {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("fio output: no JSON object (no line starting with '{') in %d bytes: %q", len(out), head(out))
	}
	var raw rawOutput
	if err := json.NewDecoder(bytes.NewReader(out[start:])).Decode(&raw); err != nil {
		return nil, fmt.Errorf("fio output: JSON from byte %d: %w", start, err)
	}
	o := &Output{FioVersion: raw.Version}
	for _, rj := range raw.Jobs {
		jr, err := rj.result()
		if err != nil {
			return nil, err
		}
		o.Jobs = append(o.Jobs, jr)
	}
	for _, rj := range raw.Clients {
		jr, err := rj.result()
		if err != nil {
			return nil, err
		}
		// fio names its sum over servers this way; a job cannot be, its name has a space.
		if rj.Name == "All clients" {
			o.AllClients = &jr
			continue
		}
		o.Jobs = append(o.Jobs, jr)
		o.addToClient(rj.Hostname, rj.Port, jr)
	}
	if len(o.Jobs) == 0 {
		return nil, errors.New("fio output: no jobs and no client_stats: fio ran nothing")
	}
	for i := range o.Clients {
		o.Clients[i].Total = Merge(o.Clients[i].Hostname, o.Clients[i].Jobs)
	}
	o.Aggregate = Merge("all", o.Jobs)
	return o, nil
}

func (o *Output) addToClient(host string, port int, jr JobResult) {
	for i := range o.Clients {
		if o.Clients[i].Hostname == host && o.Clients[i].Port == port {
			o.Clients[i].Jobs = append(o.Clients[i].Jobs, jr)
			return
		}
	}
	o.Clients = append(o.Clients, ClientResult{Hostname: host, Port: port, Jobs: []JobResult{jr}})
}

func head(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

// The shapes of fio's JSON (stat.c show_thread_status_json and add_ddir_status_json in fio 3.33).
type rawOutput struct {
	Version string   `json:"fio version"`
	Jobs    []rawJob `json:"jobs"`
	Clients []rawJob `json:"client_stats"`
}

type rawJob struct {
	Name       string  `json:"jobname"`
	Error      int     `json:"error"`
	Elapsed    int64   `json:"elapsed"`     // seconds since fio started (absent from client_stats)
	JobRuntime *int64  `json:"job_runtime"` // milliseconds
	Read       rawDir  `json:"read"`
	Write      rawDir  `json:"write"`
	Sync       rawSync `json:"sync"`
	UsrCPU     float64 `json:"usr_cpu"`
	SysCPU     float64 `json:"sys_cpu"`
	Hostname   string  `json:"hostname"`
	Port       int     `json:"port"`
}

type rawDir struct {
	IOBytes  int64   `json:"io_bytes"`
	BWBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	Runtime  int64   `json:"runtime"` // milliseconds
	TotalIOs int64   `json:"total_ios"`
	Clat     rawLat  `json:"clat_ns"`
	Lat      rawLat  `json:"lat_ns"`
}

type rawSync struct {
	TotalIOs int64  `json:"total_ios"`
	Lat      rawLat `json:"lat_ns"`
}

type rawLat struct {
	Min        int64            `json:"min"`
	Max        int64            `json:"max"`
	Mean       float64          `json:"mean"`
	StdDev     float64          `json:"stddev"`
	N          int64            `json:"N"`
	Percentile map[string]int64 `json:"percentile"` // keys like "99.000000"
	Bins       map[string]int64 `json:"bins"`       // json+ only: bucket value (ns) -> count
}

func (r rawJob) result() (JobResult, error) {
	jr := JobResult{Name: r.Name, Error: r.Error, UsrCPU: r.UsrCPU, SysCPU: r.SysCPU,
		Elapsed: time.Duration(r.Elapsed) * time.Second}
	if r.JobRuntime != nil {
		jr.Elapsed = time.Duration(*r.JobRuntime) * time.Millisecond
	}
	var err error
	if jr.Read, err = r.Read.direction(); err != nil {
		return jr, fmt.Errorf("fio output: job %q read: %w", r.Name, err)
	}
	if jr.Write, err = r.Write.direction(); err != nil {
		return jr, fmt.Errorf("fio output: job %q write: %w", r.Name, err)
	}
	if jr.Sync, err = r.Sync.Lat.stats(); err != nil {
		return jr, fmt.Errorf("fio output: job %q sync: %w", r.Name, err)
	}
	return jr, nil
}

func (r rawDir) direction() (Direction, error) {
	d := Direction{IOBytes: r.IOBytes, IOs: r.TotalIOs, BandwidthBytesPerSec: r.BWBytes, IOPS: r.IOPS,
		Runtime: time.Duration(r.Runtime) * time.Millisecond}
	var err error
	if d.Lat, err = r.Lat.stats(); err != nil {
		return d, fmt.Errorf("lat_ns: %w", err)
	}
	if d.Clat, err = r.Clat.stats(); err != nil {
		return d, fmt.Errorf("clat_ns: %w", err)
	}
	return d, nil
}

func (r rawLat) stats() (LatencyStats, error) {
	s := LatencyStats{Count: r.N, Min: time.Duration(r.Min), Max: time.Duration(r.Max),
		Mean: nanos(r.Mean), StdDev: nanos(r.StdDev)}
	for k, v := range r.Percentile {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil || p <= 0 || p > 100 {
			return s, fmt.Errorf("percentile key %q: want a number in (0, 100]", k)
		}
		s.Percentiles = append(s.Percentiles, Percentile{P: p, Value: time.Duration(v)})
	}
	sort.Slice(s.Percentiles, func(a, b int) bool { return s.Percentiles[a].P < s.Percentiles[b].P })
	for k, v := range r.Bins {
		ns, err := strconv.ParseInt(k, 10, 64)
		if err != nil || ns < 0 {
			return s, fmt.Errorf("bin key %q: want a latency in whole nanoseconds", k)
		}
		s.Bins = append(s.Bins, Bin{Value: time.Duration(ns), Count: v})
	}
	sort.Slice(s.Bins, func(a, b int) bool { return s.Bins[a].Value < s.Bins[b].Value })
	return s, nil
}

// nanos rounds fio's float nanoseconds to a Duration.
func nanos(ns float64) time.Duration { return time.Duration(math.Round(ns)) }
