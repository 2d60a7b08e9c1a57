// Command volume measures the emulated block volume's own ceiling on this machine: fio on a volume
// with the model off (ext4 on a loop device over the FUSE-served image), beside fio on a loop
// device over a plain file (no FUSE) and on this machine's disk directly, and the largest figures
// the model emulates. A volume type whose limits are above the emulator's ceiling cannot be
// emulated faithfully here.
//
//	go run ./bench/volume [--runtime 5s] [--size 1GiB]
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
	"time"

	"persistlab/internal/loopdev"
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
	size := flag.String("size", "1GiB", "fio file size")
	flag.Parse()
	work, err := os.MkdirTemp("", "persistlab-bench-volume-")
	check(err)
	ctx := context.Background()
	cleanups = append(cleanups, func() { os.RemoveAll(work) })
	defer cleanup()

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

	fmt.Printf("fio libaio direct, %s file, %v per pattern\n\n", *size, *runtime)
	fmt.Printf("%-42s", "")
	for _, p := range patterns {
		fmt.Printf("  %30s", p.name)
	}
	fmt.Println()
	for _, pl := range places {
		fmt.Printf("%-42s", pl.name)
		for _, p := range patterns {
			iops, mibs := fio(pl.dir, p, *runtime, *size)
			if strings.HasPrefix(p.bs, "4") {
				fmt.Printf("  %24.0f IOPS ", iops)
			} else {
				fmt.Printf("  %23.0f MiB/s ", mibs)
			}
		}
		fmt.Println()
	}
	fmt.Printf("\nthe fastest the model emulates: io1/io2 %v IOPS, gp3/io1/io2 %v MiB/s, st1 %v MiB/s; gp2 bursts to %v IOPS\n",
		volume.IOMaxIOPS, volume.IOMaxMiBps, volume.ST1MaxMiBps, volume.GP2BurstIOPS)
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
		loopdev.Detach(dev)
	}
}

func fio(dir string, p pattern, runtime time.Duration, size string) (iops, mibs float64) {
	out, err := exec.Command("fio", "--name=bench", "--directory="+dir, "--direct=1", "--ioengine=libaio", "--output-format=json",
		"--rw="+p.rw, "--bs="+p.bs, fmt.Sprintf("--iodepth=%d", p.depth), "--size="+size, "--time_based",
		fmt.Sprintf("--runtime=%dms", runtime.Milliseconds()), "--group_reporting").Output()
	check(err)
	var r struct {
		Jobs []struct {
			Read, Write struct {
				IOPS float64 `json:"iops"`
				BW   float64 `json:"bw_bytes"`
			}
		} `json:"jobs"`
	}
	check(json.Unmarshal(out[strings.IndexByte(string(out), '{'):], &r))
	d := r.Jobs[0].Read
	if p.write {
		d = r.Jobs[0].Write
	}
	return d.IOPS, d.BW / (1 << 20)
}

func run(name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		check(fmt.Errorf("%s %v: %v: %s", name, args, err, out))
	}
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
