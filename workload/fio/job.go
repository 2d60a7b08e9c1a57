// Package fio runs the fio storage benchmark (Debian's fio 3.33) as one workload cell: it writes a
// job file from parameters, asks fio to check it, runs it alone or through fio servers on
// loopback, and reads fio's JSON into per-job and aggregate results.
package fio

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Job is one fio job: every field goes into the job file's [global] section except Name (the
// section) and NumJobs (in that section).
type Job struct {
	Name      string
	Directory string // target directory, absolute; with servers, a path on the server's machine
	// Filename, relative to Directory, is one file every job shares; FilenameFormat (e.g.
	// $jobname.$jobnum.$filenum) names a file per job instead. At most one of them is set.
	Filename       string
	FilenameFormat string
	RW             string // read, write, randread, randwrite, rw, readwrite, randrw
	BS             int64  // bytes
	Size           int64  // bytes per job (fio size=); 0 = unset
	FileSize       int64  // bytes per file (fio filesize=); 0 = unset
	NrFiles        int    // 0 = fio's default (1)
	OpenFiles      int    // 0 = fio's default (all of NrFiles)
	NumJobs        int
	IODepth        int
	Direct         bool
	Engine         string // ioengine; "" = fio's default (psync)
	Runtime        time.Duration
	RampTime       time.Duration
	TimeBased      bool
	Fsync          int // fsync after every N writes; 0 = off
	Thread         bool
	Invalidate     *bool // nil = fio's default (1)
	FadviseHint    *bool // nil = fio's default (1)
	Verify         string
	AllRandRepeat  bool
	GroupReporting bool
	// Extra options go to the end of [global] verbatim and in order; an empty value writes the
	// key alone. Sizes here are read by fio itself: there, KiB means 1000 (see ParseSize).
	Extra [][2]string
}

// LaidOut is about how many bytes the job's files take on the target: fio lays them out before
// the job runs, for reads as for writes.
func (j Job) LaidOut() int64 {
	// In floating point: the parameters' bounds multiplied pass the largest int64.
	total := max(float64(j.Size), float64(j.FileSize)*float64(max(j.NrFiles, 1)))
	if j.FilenameFormat != "" { // a file (or files) per job
		total *= float64(max(j.NumJobs, 1))
	}
	return int64(min(total, math.MaxInt64/2))
}

// RWModes are the values RW takes.
var RWModes = []string{"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"}

// File renders the job file. The same Job always gives the same text.
//
// lat_percentiles=1 is always set: the percentiles persistlab reports are of total latency (fio's
// lat_ns). It is a job option, so it goes here: given on fio's command line it would not reach
// fio servers, which receive only the job file.
func (j Job) File() string {
	var b strings.Builder
	kv := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	num := func(k string, n int64) { kv(k, strconv.FormatInt(n, 10)) }
	flag := func(k string, on bool) {
		v := "0"
		if on {
			v = "1"
		}
		kv(k, v)
	}

	b.WriteString("[global]\n")
	kv("directory", j.Directory)
	if j.Filename != "" {
		kv("filename", j.Filename)
	}
	if j.FilenameFormat != "" {
		kv("filename_format", j.FilenameFormat)
	}
	kv("rw", j.RW)
	num("bs", j.BS)
	if j.Size > 0 {
		num("size", j.Size)
	}
	if j.FileSize > 0 {
		num("filesize", j.FileSize)
	}
	if j.NrFiles > 0 {
		num("nrfiles", int64(j.NrFiles))
	}
	if j.OpenFiles > 0 {
		num("openfiles", int64(j.OpenFiles))
	}
	num("iodepth", int64(j.IODepth))
	flag("direct", j.Direct)
	if j.Engine != "" {
		kv("ioengine", j.Engine)
	}
	if j.Runtime > 0 {
		kv("runtime", fioDuration(j.Runtime))
	}
	if j.RampTime > 0 {
		kv("ramp_time", fioDuration(j.RampTime))
	}
	if j.TimeBased {
		flag("time_based", true)
	}
	if j.Fsync > 0 {
		num("fsync", int64(j.Fsync))
	}
	if j.Thread {
		flag("thread", true)
	}
	if j.Invalidate != nil {
		flag("invalidate", *j.Invalidate)
	}
	if j.FadviseHint != nil {
		flag("fadvise_hint", *j.FadviseHint)
	}
	if j.Verify != "" {
		kv("verify", j.Verify)
	}
	if j.AllRandRepeat {
		flag("allrandrepeat", true)
	}
	if j.GroupReporting {
		flag("group_reporting", true)
	}
	flag("lat_percentiles", true)
	for _, e := range j.Extra {
		if e[1] == "" {
			b.WriteString(e[0] + "\n")
		} else {
			kv(e[0], e[1])
		}
	}
	fmt.Fprintf(&b, "\n[%s]\n", j.Name)
	num("numjobs", int64(j.NumJobs))
	return b.String()
}

// fioDuration writes whole seconds as 10s, else milliseconds or microseconds (fio takes no finer).
func fioDuration(d time.Duration) string {
	switch {
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	default:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
	}
}
