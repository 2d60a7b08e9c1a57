// Command volume measures the emulated block volume on this machine. Its ceiling: fio on a volume
// with the model off (ext4 on a loop device over the FUSE-served image), beside fio on a loop
// device over a plain file (no FUSE), on the volume with FUSE passthrough (the kernel does the
// image's I/O; no model can hold it) and on this machine's disk directly, and the largest figures
// the model emulates (a volume type whose limits are above the ceiling cannot be emulated
// faithfully here). Its calibration: fio on volumes with the model on, each rate beside the
// model's figure for the job and their ratio, and depth 1's latency beside the service time.
// The lab's tests assert only that fio never passes the model; how close it comes depends on
// this machine, and is reported here.
//
//	go run ./bench/volume [--runtime 5s] [--size 1GiB] [--ceiling=false] [--calibration=false]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"persistlab/internal/loopdev"
	"persistlab/internal/proc"
	"persistlab/lab/volume"
)

type pattern struct {
	name, rw, bs string
	depth        int
	write        bool
}

var patterns = []pattern{
	{"4 KiB random read, depth 32", "randread", "4k", 32, false},
	{"4 KiB random write, depth 32", "randwrite", "4k", 32, true},
	{"1 MiB sequential read, depth 8", "read", "1M", 8, false},
	{"1 MiB sequential write, depth 8", "write", "1M", 8, true},
}

func main() {
	runtime := flag.Duration("runtime", 5*time.Second, "fio runtime per pattern")
	size := flag.String("size", "1GiB", "fio file size for the ceiling")
	ceiling := flag.Bool("ceiling", true, "measure the emulator's ceiling, model off")
	calibrate := flag.Bool("calibration", true, "measure fio against the model on volumes with the model on")
	flag.Parse()
	work, err := os.MkdirTemp("", "persistlab-bench-volume-")
	check(err)
	ctx := context.Background()
	cleanups = append(cleanups, func() { os.RemoveAll(work) })
	defer cleanup()
	if *ceiling {
		measureCeiling(ctx, work, *runtime, *size)
	}
	if *calibrate {
		measureCalibration(ctx, work, *runtime)
	}
}

func measureCeiling(ctx context.Context, work string, runtime time.Duration, size string) {
	places := []struct{ name, dir string }{}
	disk := filepath.Join(work, "disk")
	check(os.MkdirAll(disk, 0o755))
	places = append(places, struct{ name, dir string }{"this machine's disk", disk})

	plain, cleanPlain := plainLoop(ctx, work)
	cleanups = append(cleanups, cleanPlain)
	places = append(places, struct{ name, dir string }{"ext4 on a loop device over a plain file", plain})

	cfg, err := volume.ConfigFromOptions(map[string]string{"type": "io2", "size": "100GiB", "iops": "50000", "model": "off"})
	check(err)
	cfg.WorkDir = filepath.Join(work, "emulated")
	v, err := volume.Start(ctx, cfg)
	check(err)
	cleanups = append(cleanups, func() { v.Stop(ctx) })
	places = append(places, struct{ name, dir string }{"the emulated volume, model off", v.Dir})
	// FUSE passthrough: the kernel does the image's reads and writes itself. No model can hold an
	// I/O it never sees, so it is measured to know what the served path costs, not used.
	pt := cfg
	pt.WorkDir, pt.Passthrough = filepath.Join(work, "passthrough"), true
	if pv, err := volume.Start(ctx, pt); err != nil {
		fmt.Printf("FUSE passthrough not measured: %v\n", err)
	} else {
		cleanups = append(cleanups, func() { pv.Stop(ctx) })
		places = append(places, struct{ name, dir string }{"the same with FUSE passthrough", pv.Dir})
	}

	fmt.Printf("fio libaio direct, %s file, %v per pattern\n\n", size, runtime)
	fmt.Printf("%-42s", "")
	for _, p := range patterns {
		fmt.Printf("  %30s", p.name)
	}
	fmt.Println()
	for _, pl := range places {
		fmt.Printf("%-42s", pl.name)
		for _, p := range patterns {
			r := fio(pl.dir, p.write, "--rw="+p.rw, "--bs="+p.bs, fmt.Sprintf("--iodepth=%d", p.depth), "--size="+size,
				"--time_based", fmt.Sprintf("--runtime=%dms", runtime.Milliseconds()))
			if strings.HasPrefix(p.bs, "4") {
				fmt.Printf("  %24.0f IOPS ", r.iops)
			} else {
				fmt.Printf("  %23.0f MiB/s ", r.mibs)
			}
		}
		fmt.Println()
	}
	fmt.Printf("\nthe fastest the model emulates: io1/io2 %v IOPS, gp3/io1/io2 %v MiB/s, st1 %v MiB/s; gp2 bursts to %v IOPS\n",
		volume.IOMaxIOPS, volume.IOMaxMiBps, volume.ST1MaxMiBps, volume.GP2BurstIOPS)
}

// calibrations are the jobs the lab's tests once held to the model's figures: each volume type's
// rule at work (gp2's burst and baseline, io1's units of 256 KiB, st1's MiB per I/O, a deep
// queue, the service time at depth 1).
var calibrations = []struct {
	name    string
	options map[string]string
	file    string // fio's size: 64m is 64 MiB (its 64MiB is 64,000,000 bytes)
	job     volume.Job
	args    []string
}{
	{"gp2 100 GiB, burst: 4 KiB random writes, depth 16", map[string]string{"type": "gp2", "size": "100GiB"}, "64m",
		volume.Job{Write: true, Random: true, BS: 4 << 10, Depth: 16}, []string{"--rw=randwrite", "--bs=4k", "--iodepth=16"}},
	// A bucket of about one I/O credit: gp2 at its baseline.
	{"gp2 100 GiB, credits spent: the same", map[string]string{"type": "gp2", "size": "100GiB", "credit_scale": "0.0000002"}, "64m",
		volume.Job{Write: true, Random: true, BS: 4 << 10, Depth: 16}, []string{"--rw=randwrite", "--bs=4k", "--iodepth=16"}},
	{"io1 100 GiB, 1,000 IOPS: 1 MiB random writes, depth 16", map[string]string{"type": "io1", "size": "100GiB", "iops": "1000"}, "256m",
		volume.Job{Write: true, Random: true, BS: 1 << 20, Depth: 16}, []string{"--rw=randwrite", "--bs=1M", "--iodepth=16"}},
	{"st1 500 GiB: 1 MiB sequential reads, depth 8", map[string]string{"type": "st1", "size": "500GiB"}, "512m",
		volume.Job{BS: 1 << 20, Depth: 8}, []string{"--rw=read", "--bs=1M", "--iodepth=8"}},
	{"st1 500 GiB: 4 KiB random reads, depth 8", map[string]string{"type": "st1", "size": "500GiB"}, "512m",
		volume.Job{Random: true, BS: 4 << 10, Depth: 8}, []string{"--rw=randread", "--bs=4k", "--iodepth=8"}},
	{"pd-ssd 100 GiB: 4 KiB random reads, depth 16", map[string]string{"type": "pd-ssd", "size": "100GiB"}, "64m",
		volume.Job{Random: true, BS: 4 << 10, Depth: 16}, []string{"--rw=randread", "--bs=4k", "--iodepth=16"}},
	{"gp3 100 GiB, latency 2ms: 4 KiB random reads, depth 1", map[string]string{"type": "gp3", "size": "100GiB", "latency": "2ms"}, "64m",
		volume.Job{Random: true, BS: 4 << 10, Depth: 1}, []string{"--rw=randread", "--bs=4k", "--iodepth=1"}},
}

// measureCalibration runs each calibration job on a fresh volume, its file laid out first, and
// sets what fio got beside what the model allows the job from full credits.
func measureCalibration(ctx context.Context, work string, runtime time.Duration) {
	fmt.Printf("\nfio against the model (libaio direct, %v per job, files laid out first; model: the rate the volume's limits allow the job from full credits)\n\n", runtime)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "job\tIOPS\tmodel IOPS\tratio\tMiB/s\tmodel MiB/s\tmean latency ms\tservice time ms\tratio\t")
	for i, c := range calibrations {
		cfg, err := volume.ConfigFromOptions(c.options)
		check(err)
		cfg.WorkDir = filepath.Join(work, fmt.Sprintf("calibration-%d", i))
		v, err := volume.Start(ctx, cfg)
		check(err)
		cleanups = append(cleanups, func() { v.Stop(ctx) }) // safe after the Stop below
		fio(v.Dir, true, "--rw=write", "--bs=1M", "--iodepth=4", "--size="+c.file)
		r := fio(v.Dir, c.job.Write, append(c.args, "--size="+c.file, "--time_based", fmt.Sprintf("--runtime=%dms", runtime.Milliseconds()))...)
		check(v.Stop(ctx))
		job := c.job
		job.Seconds = runtime.Seconds()
		limits := cfg.Spec.Limits()
		model := limits.Expect(job)
		svc := limits.ServiceTime.Seconds() * 1e3
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t\n", c.name, r.iops, model, r.iops/model,
			r.mibs, model*float64(job.BS)/(1<<20), r.latMs, svc, r.latMs/svc)
	}
	tw.Flush()
	fmt.Println("\nA ratio of IOPS above 1 would be the emulator letting through more than the model allows; below 1, this machine or the emulator's own round trip (the depth-1 row's latency above the service time) falling short of it.")
}

// plainLoop is ext4 on a loop device over a plain sparse file: the reference without FUSE.
func plainLoop(ctx context.Context, work string) (string, func()) {
	img := filepath.Join(work, "plain.img")
	f, err := os.Create(img)
	check(err)
	check(f.Truncate(100 << 30))
	f.Close()
	dev, err := loopdev.Attach(ctx, img)
	check(err)
	dir := filepath.Join(work, "plain")
	check(os.MkdirAll(dir, 0o755))
	check(volume.Format(ctx, "ext4", dev)) // as the emulated volume is formatted and mounted
	run("mount", append(volume.MountArgs("ext4"), dev, dir)...)
	return dir, func() {
		exec.Command("umount", dir).Run()
		loopdev.Detach(dev, work)
	}
}

type fioResult struct{ iops, mibs, latMs float64 }

// fio runs one job on dir and returns the direction's IOPS, MiB/s and mean latency.
func fio(dir string, write bool, args ...string) fioResult {
	out, err := exec.Command("fio", append([]string{"--name=bench", "--directory=" + dir, "--direct=1", "--ioengine=libaio",
		"--output-format=json", "--group_reporting"}, args...)...).Output()
	check(err)
	var r struct {
		Jobs []struct {
			Read, Write struct {
				IOPS float64 `json:"iops"`
				BW   float64 `json:"bw_bytes"`
				Lat  struct {
					Mean float64 `json:"mean"`
				} `json:"lat_ns"`
			}
		}
	}
	check(json.Unmarshal(out[strings.IndexByte(string(out), '{'):], &r))
	d := r.Jobs[0].Read
	if write {
		d = r.Jobs[0].Write
	}
	return fioResult{d.IOPS, d.BW / (1 << 20), d.Lat.Mean / 1e6}
}

func run(name string, args ...string) {
	_, err := proc.Run(context.Background(), name, args...)
	check(err)
}

// cleanups undo what the benchmark mounted and attached, last first, also when it fails.
var cleanups []func()

func cleanup() {
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/volume:", err)
		cleanup()
		os.Exit(1)
	}
}
