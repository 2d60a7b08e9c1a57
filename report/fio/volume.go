package fio

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"persistlab/backend"
	"persistlab/lab"
	"persistlab/param"
	"persistlab/report"
	"persistlab/results"
)

// writeVolumeModel sets, for fio on emulated volumes, what the model promises each row beside
// what fio measured: the calibration of the lab (a ratio far from 1 is the emulator's or this
// machine's doing, or a pattern the model counts differently from fio's view).
func writeVolumeModel(w io.Writer, r *results.Results) {
	header := false
	for _, b := range r.Scenario.Backends {
		m, ok := backend.VolumeModelOf(b.Name, b.Options)
		if !ok {
			continue
		}
		rows := r.AggregatesOf(b.ID())
		if len(rows) == 0 {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nemulated volumes: fio against the model (model: the rate the volume's published limits allow this job, from full credits)\n")
			header = true
		}
		fmt.Fprintf(w, "\nbackend %s: %s\n", b.ID(), m.Limits)
		tw := report.NewTable(w, tabwriter.AlignRight)
		fmt.Fprintln(tw, "point\tIOPS\tmodel IOPS\tratio\tMiB/s\tmodel MiB/s\t")
		for _, a := range rows {
			p := a.Resolved
			job, ok := fioJob(p)
			if !ok {
				continue
			}
			want := m.Expect(job)
			got := a.Median["iops"]
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%.1f\t%.1f\t\n", a.Point, got, want, got/want, a.Median["mib_s"], want*float64(job.BS)/(1<<20))
		}
		tw.Flush()
	}
}

// timeBased reads fio's parameter time_based as its declaration does (a boolean: true, on, 1).
func timeBased(v string) bool {
	b, err := param.ParseBool(v)
	return err == nil && b
}

// fioJob reads a fio row's parameters as a steady job; mixed reads and writes are not one.
func fioJob(p map[string]string) (lab.Job, bool) {
	rw := p["rw"]
	var j lab.Job
	switch rw {
	case "read", "write", "randread", "randwrite":
	default:
		return j, false
	}
	j.Write, j.Random = strings.HasSuffix(rw, "write"), strings.HasPrefix(rw, "rand")
	bs, err := param.ParseSize(p["bs"])
	if err != nil || bs <= 0 {
		return j, false
	}
	j.BS = bs
	depth, _ := strconv.Atoi(p["iodepth"])
	if e := p["engine"]; e != "libaio" && e != "io_uring" && e != "posixaio" {
		depth = 1 // a synchronous engine has one I/O in flight per job, whatever iodepth says
	}
	jobs, _ := strconv.Atoi(p["numjobs"])
	j.Depth = max(1, depth) * max(1, jobs)
	if d, err := time.ParseDuration(p["runtime"]); err == nil && timeBased(p["time_based"]) {
		j.Seconds = d.Seconds()
	}
	return j, true
}
