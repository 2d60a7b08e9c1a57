// Command fio benchmarks the fio workload against fio run by hand: the same job on the same local
// directory, alternately through `persistlab run` and as `fio JOB --output-format=json`, and prints
// each job's median MiB/s both ways and their ratio (persistlab adds nothing to fio's own work, so
// the ratio should be 1.00 within the runs' noise). fio by hand runs on the CPUs persistlab's cell
// pinned fio to.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"persistlab/internal/tools"
	"persistlab/report"
	fiowl "persistlab/workload/fio"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench fio: "+format+"\n", args...)
	os.Exit(1)
}

// jobs are the cases compared: a sequential read and a small random write, both direct.
var jobs = []struct{ name, sets string }{
	{"seqread 1MiB", "rw=read bs=1MiB file_size=512MiB numjobs=2 iodepth=16 engine=libaio direct=true runtime=5s time_based=true"},
	{"randwrite 4KiB", "rw=randwrite bs=4KiB file_size=256MiB numjobs=2 iodepth=16 engine=libaio direct=true runtime=5s time_based=true"},
}

func main() {
	self := flag.String("persistlab", "bin/persistlab", "persistlab binary")
	runs := flag.Int("runs", 5, "runs of each job each way; medians are compared")
	flag.Parse()
	bin, err := fiowl.Find()
	if err != nil {
		fail("%v", err)
	}
	work, err := os.MkdirTemp("", "persistlab-bench-fio-")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(work)
	fmt.Printf("%-16s %12s %12s %8s\n", "job", "persistlab", "by hand", "ratio")
	for _, j := range jobs {
		var through, byHand []float64
		// The job file persistlab runs, and the CPUs its cells pin fio to: fio by hand runs on
		// the same, so that neither gets a core the other lacks.
		_, jobFile, cpus := viaPersistlab(*self, work, j.sets)
		for i := 0; i < *runs; i++ {
			// Alternate which goes first, so a disk that slows (or warms) over time favours neither.
			if i%2 == 0 {
				byHand = append(byHand, viaFio(bin, work, jobFile, cpus))
			}
			mib, _, _ := viaPersistlab(*self, work, j.sets)
			through = append(through, mib)
			if i%2 == 1 {
				byHand = append(byHand, viaFio(bin, work, jobFile, cpus))
			}
		}
		a, b := median(through), median(byHand)
		fmt.Printf("%-16s %12.1f %12.1f %8.3f\n", j.name, a, b, a/b)
	}
}

// viaPersistlab runs the job as a one-cell fio scenario on the local backend and returns its MiB/s,
// the job file it ran and the CPUs it ran fio on.
func viaPersistlab(self, work, sets string) (float64, string, []int) {
	scenario := filepath.Join(work, "bench.yaml")
	spec := "name: bench-fio\nworkload: {type: fio}\nbackends: [{name: local, options: {dir: " + work + "}}]\nrepeat: 1\n"
	if err := os.WriteFile(scenario, []byte(spec), 0o644); err != nil {
		fail("%v", err)
	}
	out := filepath.Join(work, "r.json")
	args := []string{"run", scenario, "--force", "--out", out}
	for _, kv := range strings.Fields(sets) {
		args = append(args, "--set", kv)
	}
	cmd := exec.Command(self, args...)
	if o, err := cmd.CombinedOutput(); err != nil {
		fail("persistlab run: %v\n%s", err, o)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 1 || r.Cells[0].Failure != "" {
		fail("results: %v %+v", err, r)
	}
	return r.Cells[0].M("mib_s"), r.Cells[0].Facts["job"], r.Placement.AppCPUs
}

// viaFio runs the same job file with fio itself in a fresh directory, on cpus (none: any), and
// returns its MiB/s.
func viaFio(bin, work, jobFile string, cpus []int) float64 {
	dir := filepath.Join(work, "by-hand")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(dir)
	var lines []string
	for _, l := range strings.Split(jobFile, "\n") {
		if strings.HasPrefix(l, "directory=") {
			l = "directory=" + dir
		}
		lines = append(lines, l)
	}
	path := filepath.Join(work, "by-hand.fio")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		fail("%v", err)
	}
	argv := tools.Pinned(cpus, bin, "--output-format=json", path)
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		fail("fio: %v", err)
	}
	var v struct {
		Jobs []struct {
			Read, Write struct {
				BW float64 `json:"bw_bytes"`
			}
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out[bytes.IndexByte(out, '{'):], &v); err != nil || len(v.Jobs) == 0 {
		fail("fio's JSON: %v", err)
	}
	var bw float64
	for _, j := range v.Jobs {
		bw += j.Read.BW + j.Write.BW
	}
	return bw / (1 << 20)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
