// Command lab measures the lab bucket's own ceiling with the cloud model off: how fast bodies move
// up and down through the JSON API (the official Go client, streaming) and through a real gcsfuse
// mount of the lab (large sequential writes + fsync + close, then large reads through a fresh
// mount for each of gcsfuse's readers: its default, --enable-kernel-reader and --enable-buffered-read;
// nothing comes from gcsfuse's or the kernel's cache of the mount).
//
// It is a benchmark, not a test: it prints a table and flags every figure taken while the machine's
// CPUs were saturated, since such a figure is this machine's limit rather than the lab's.
//
//	go run ./bench/lab [--size 512MiB] [--gcsfuse PATH] [--gcsfuse-flags "..."] [--model off|no-delay|gcs]
//	                   [--storage-root DIR] [--wait-quiet 1m] [--no-gcsfuse] [--cpuprofile FILE] [--log FILE]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"persistlab/internal/benchgoal"
	"persistlab/internal/mounts"
	"persistlab/internal/proc"
	"persistlab/internal/tools"
	"persistlab/lab/bucket"
)

const (
	bucketName = "bench"
	block      = 1 << 20 // each write and read call of the benchmark: 1 MiB, like dd bs=1M
	// saturated: above this share of the machine's CPU time a figure is bound by this machine.
	saturated = 0.85
)

// cleanups undo what the benchmark set up (mounts, the bucket, directories), last first, also when
// it fails.
var cleanups []func()

func cleanup() {
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/lab: "+format+"\n", args...)
	cleanup()
	os.Exit(1)
}

// sizeFlag parses 512MiB, 1GiB, 64M or a plain number of MiB.
type sizeFlag int64

func (s *sizeFlag) String() string { return fmt.Sprintf("%dMiB", int64(*s)>>20) }
func (s *sizeFlag) Set(v string) error {
	v = strings.TrimSpace(v)
	mult := int64(1 << 20)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"G", 1 << 30}, {"MiB", 1 << 20}, {"M", 1 << 20}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a size like 512MiB or 1GiB")
	}
	*s = sizeFlag(int64(n*float64(mult)) / block * block)
	if *s == 0 {
		return fmt.Errorf("at least 1MiB")
	}
	return nil
}

// payload is the benchmark's data: a pseudo-random MiB repeated with the block index stamped in
// its first bytes, so that no two blocks are equal and nothing compresses.
type payload struct {
	base []byte
	buf  []byte
	size int64
}

const stampLen = 32

func newPayload(size int64) *payload {
	p := &payload{base: make([]byte, block), buf: make([]byte, block), size: size}
	rand.New(rand.NewSource(1)).Read(p.base)
	copy(p.buf, p.base)
	return p
}

// block i of the payload (valid until the next call; only its stamp changes from call to call).
func (p *payload) block(i int64) []byte {
	copy(p.buf[:stampLen], p.base)
	copy(p.buf, strconv.AppendInt([]byte("block "), i, 10))
	return p.buf
}

func (p *payload) blocks() int64 { return p.size / block }

// crc32c of the whole payload, computed once outside every measurement.
func (p *payload) crc32c() uint32 {
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	for i := int64(0); i < p.blocks(); i++ {
		h.Write(p.block(i))
	}
	return h.Sum32()
}

// cpuSample is CPU time of this process and of gcsfuse, and the machine's busy and total jiffies.
type cpuSample struct {
	at           time.Time
	self, fuse   time.Duration
	busy, totalJ uint64
}

func sample(fusePid int) cpuSample {
	s := cpuSample{at: time.Now()}
	s.self, _ = proc.CPUTime(os.Getpid())
	if fusePid > 0 {
		s.fuse, _ = proc.CPUTime(fusePid)
	}
	if data, err := os.ReadFile("/proc/stat"); err == nil {
		line := strings.SplitN(string(data), "\n", 2)[0]
		f := strings.Fields(line)[1:]
		for i, v := range f {
			n, _ := strconv.ParseUint(v, 10, 64)
			s.totalJ += n
			if i != 3 && i != 4 { // idle, iowait
				s.busy += n
			}
		}
	}
	return s
}

type result struct {
	path, direction string
	bytes           int64
	wall            time.Duration
	selfCPU         time.Duration // this process: the client (or the file I/O through the mount) and the lab
	fuseCPU         time.Duration // gcsfuse
	machine         float64       // busy share of all CPUs over the run, from /proc/stat
	requests        int64         // requests the bucket counted (class A + B)
	throttled       int64         // answered 429 by the model's per-object limit
	note            string
}

var measure = func(fusePid int, lab *bucket.Server, run func() error) (result, error) {
	before, acc0 := sample(fusePid), lab.Accounting()
	err := run()
	after, acc1 := sample(fusePid), lab.Accounting()
	r := result{wall: after.at.Sub(before.at), selfCPU: after.self - before.self, fuseCPU: after.fuse - before.fuse}
	if after.totalJ > before.totalJ {
		r.machine = float64(after.busy-before.busy) / float64(after.totalJ-before.totalJ)
	}
	r.requests = (acc1.ClassA - acc0.ClassA) + (acc1.ClassB - acc0.ClassB)
	r.throttled = acc1.Throttled - acc0.Throttled
	return r, err
}

func main() {
	size := sizeFlag(512 << 20)
	flag.Var(&size, "size", "bytes moved each way on each path (512MiB, 1GiB, ...)")
	gcsfuseBin := flag.String("gcsfuse", "", "gcsfuse binary (default: found like the backend finds it, e.g. .tools/bin/gcsfuse)")
	fuseFlags := flag.String("gcsfuse-flags", "", "more gcsfuse flags, space-separated (the mount always has the gcsfuse backend's)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process (the lab runs in it) to this file")
	logPath := flag.String("log", "", "append the lab's request log to this file")
	skipFuse := flag.Bool("no-gcsfuse", false, "measure the JSON API only")
	modelName := flag.String("model", "off", "the bucket's model: off (no delay, no limit: the lab's ceiling), no-delay or gcs")
	quiet := flag.Duration("wait-quiet", time.Minute, "before each measurement, wait up to this long for the machine to be idle (0: do not wait)")
	storageRoot := flag.String("storage-root", "", "where the lab keeps object bodies (Config.StorageRoot; default the bench's work directory)")
	flag.Parse()
	defer cleanup()

	cores := runtime.NumCPU()
	work, err := os.MkdirTemp("", "persistlab-bench-lab-")
	if err != nil {
		fail("%v", err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(work) })

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail("%v", err)
		}
		cleanups = append(cleanups, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if *storageRoot == "" {
		*storageRoot = work
	}
	cfg := bucket.Config{Buckets: []string{bucketName}, StorageRoot: *storageRoot} // the model off: no delay, no limit
	if *modelName != "off" {
		if cfg.Model, err = bucket.ModelFromOptions(map[string]string{"model": *modelName}); err != nil {
			fail("--model: %v", err)
		}
	}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fail("--log: %v", err)
		}
		cleanups = append(cleanups, func() { f.Close() })
		cfg.Log = f
	}
	lab, err := bucket.Start(cfg)
	if err != nil {
		fail("%v", err)
	}
	cleanups = append(cleanups, func() { lab.Close() })

	p := newPayload(int64(size))
	want := p.crc32c()
	fmt.Printf("lab bucket %s, model %s; %d MiB each way, %d KiB per call; %d CPUs\n\n", lab.Host(), *modelName, size>>20, block>>10, cores)

	var results []result
	report := func(r result, err error, path, dir, note string) {
		if err != nil {
			fail("%s %s: %v", path, dir, err)
		}
		r.path, r.direction, r.bytes, r.note = path, dir, int64(size), note
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "  done: %s %s %.2f s\n", path, dir, r.wall.Seconds())
	}

	if *quiet > 0 {
		realMeasure := measure
		measure = func(fusePid int, lab *bucket.Server, run func() error) (result, error) {
			waitQuiet(*quiet)
			return realMeasure(fusePid, lab, run)
		}
	}
	diskReference(*storageRoot, p, report, lab)

	ctx := context.Background()
	client, err := storage.NewClient(ctx, option.WithEndpoint(lab.JSONEndpoint()), option.WithoutAuthentication())
	if err != nil {
		fail("%v", err)
	}
	cleanups = append(cleanups, func() { client.Close() })
	bkt := client.Bucket(bucketName)

	upload := func(name string, chunk int) func() error {
		return func() error {
			w := bkt.Object(name).NewWriter(ctx)
			w.ChunkSize = chunk
			for i := int64(0); i < p.blocks(); i++ {
				if _, err := w.Write(p.block(i)); err != nil {
					w.Close()
					return err
				}
			}
			if err := w.Close(); err != nil {
				return err
			}
			if a := w.Attrs(); a.Size != int64(size) || a.CRC32C != want {
				return fmt.Errorf("stored %d bytes crc32c %08x, sent %d bytes crc32c %08x", a.Size, a.CRC32C, int64(size), want)
			}
			return nil
		}
	}
	r, err := measure(0, lab, upload("json-resumable.bin", 16<<20))
	report(r, err, "json api", "up", "resumable upload, 16 MiB chunks (the Go client's default)")
	r, err = measure(0, lab, upload("json-multipart.bin", 0))
	report(r, err, "json api", "up", "multipart upload, one request")
	r, err = measure(0, lab, func() error {
		rd, err := bkt.Object("json-resumable.bin").NewReader(ctx) // full read: the client checks crc32c
		if err != nil {
			return err
		}
		defer rd.Close()
		n, err := io.CopyBuffer(io.Discard, rd, make([]byte, block))
		if err == nil && n != int64(size) {
			err = fmt.Errorf("read %d bytes, want %d", n, int64(size))
		}
		return err
	})
	report(r, err, "json api", "down", "one GET of the whole object, crc32c checked by the client")

	if !*skipFuse {
		bin := *gcsfuseBin
		if bin == "" {
			if bin, err = tools.Find("gcsfuse"); err != nil {
				fail("%v", err)
			}
		}
		var phases string
		extra := strings.Fields(*fuseFlags)
		m, err := mount(bin, extra, lab, work, "up")
		if err != nil {
			fail("%v", err)
		}
		file := filepath.Join(m.dir, "fuse.bin")
		r, err = measure(m.child.Pid(), lab, func() error {
			f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			t0 := time.Now()
			for i := int64(0); i < p.blocks(); i++ {
				if _, err := f.Write(p.block(i)); err != nil {
					f.Close()
					return err
				}
			}
			t1 := time.Now()
			if err := f.Sync(); err != nil {
				f.Close()
				return err
			}
			t2 := time.Now()
			err = f.Close()
			phases = fmt.Sprintf("writes %.2f s, fsync %.2f s, close %.2f s", t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), time.Since(t2).Seconds())
			return err
		})
		stopErr := m.stop()
		report(r, errors.Join(err, stopErr), "gcsfuse", "up", phases)
		if a, err := bkt.Object("fuse.bin").Attrs(ctx); err != nil || a.Size != int64(size) || a.CRC32C != want {
			fail("gcsfuse up: the bucket holds %+v (%v), want %d bytes crc32c %08x", a, err, int64(size), want)
		}

		// gcsfuse's readers: its default (its own prefetch), the kernel's readahead and page cache
		// (--enable-kernel-reader), and parallel buffered prefetch (--enable-buffered-read). The
		// read goal takes the fastest: a user chooses the reader, the lab serves them all.
		for _, reader := range readers {
			m, err = mount(bin, append(slices.Clone(extra), reader.flags...), lab, work, "down"+strings.ReplaceAll(reader.suffix, "/", "-"))
			if err != nil {
				fail("%v", err)
			}
			r, err = measure(m.child.Pid(), lab, func() error { return readBack(filepath.Join(m.dir, "fuse.bin"), p, int64(size)) })
			stopErr = m.stop()
			report(r, errors.Join(err, stopErr), "gcsfuse"+reader.suffix, "down", "fresh mount, sequential 1 MiB reads, "+reader.what)
		}
	}

	fmt.Printf("\n%-17s %-5s %6s %8s %8s %5s %5s %9s %9s %5s %5s  %s\n", "path", "dir", "MiB", "seconds", "MiB/s", "reqs", "429s", "self cpu", "fuse cpu", "cpu", "busy", "")
	anyBound := false
	for _, r := range results {
		cpu := (r.selfCPU + r.fuseCPU).Seconds() / r.wall.Seconds() / float64(cores)
		mark := ""
		if r.machine >= saturated || cpu >= saturated {
			mark, anyBound = "CPU-BOUND", true
		}
		fuse := "-"
		if strings.HasPrefix(r.path, "gcsfuse") {
			fuse = fmt.Sprintf("%.2f s", r.fuseCPU.Seconds())
		}
		fmt.Printf("%-17s %-5s %6d %8.2f %8.0f %5d %5d %7.2f s %9s %4.0f%% %4.0f%%  %s\n", r.path, r.direction, r.bytes>>20, r.wall.Seconds(),
			float64(r.bytes)/(1<<20)/r.wall.Seconds(), r.requests, r.throttled, r.selfCPU.Seconds(), fuse, cpu*100, r.machine*100, mark)
	}
	fmt.Println()
	for _, r := range results {
		fmt.Printf("%s %s: %s\n", r.path, r.direction, r.note)
	}
	fmt.Printf("\nself cpu: user+system CPU seconds of this process (the client or the file I/O, and the lab); fuse cpu: gcsfuse's;\n")
	fmt.Printf("cpu: (self + fuse) / (seconds × %d CPUs); busy: the whole machine's non-idle share over the run (/proc/stat:\n", cores)
	fmt.Printf("kernel threads, e.g. loopback TCP in softirq and writeback, and other users too).\n")
	if anyBound {
		fmt.Printf("CPU-BOUND: %.0f%% or more of the machine was busy: the figure is this machine's limit; the lab's ceiling is at least that.\n", saturated*100)
	}
	fmt.Println()
	// rate is the fastest row of a path (gcsfuse: any of its readers) in a direction, and its path.
	rate := func(path, dir string) (float64, string) {
		best, which := 0.0, ""
		for _, r := range results {
			if (r.path == path || strings.HasPrefix(r.path, path+"/")) && r.direction == dir {
				if v := float64(r.bytes) / (1 << 20) / r.wall.Seconds(); v > best {
					best, which = v, r.path
				}
			}
		}
		return best, which
	}
	for _, g := range []struct {
		dir  string
		goal float64
	}{{"down", 1024}, {"up", 500}} { // issue 23: 1 GiB/s read, 500 MiB/s write through a real gcsfuse mount
		fuse, reader := rate("gcsfuse", g.dir)
		disk, _ := rate("disk", g.dir)
		if fuse == 0 {
			continue // gcsfuse not measured (no mount here)
		}
		err := benchgoal.Report(os.Stdout, benchgoal.Row{Name: "lab bucket through gcsfuse, MiB/s " + g.dir, Got: fuse, Op: ">=", Goal: g.goal,
			Basis: fmt.Sprintf("bench/lab, model %s, %d MiB, %s; the same bytes on this machine's disk %.0f MiB/s (%.2fx)", *modelName, size>>20, reader, disk, fuse/disk)})
		if err != nil {
			fail("%v", err)
		}
	}
}

// readers are the gcsfuse read paths measured, each through a fresh mount.
var readers = []struct {
	suffix, what string
	flags        []string
}{
	{"", "gcsfuse's default reader", nil},
	{"/kernel", "--enable-kernel-reader (the kernel's readahead and page cache)", []string{"--enable-kernel-reader"}},
	{"/buffered", "--enable-buffered-read (parallel prefetch into buffers)", []string{"--enable-buffered-read"}},
}

// readBack reads file sequentially in 1 MiB calls, checking its length and its first and last
// blocks against the payload.
func readBack(file string, p *payload, size int64) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, block)
	var n int64
	for i := int64(0); ; i++ {
		k, err := io.ReadFull(f, buf)
		n += int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
		if (i == 0 || i == p.blocks()-1) && !bytes.Equal(buf, p.block(i)) {
			return fmt.Errorf("block %d differs from what was written", i)
		}
	}
	if n != size {
		return fmt.Errorf("read %d bytes, want %d", n, size)
	}
	return nil
}

// diskReference writes size bytes into a new file where the lab keeps its bodies (1 MiB writes,
// no fsync, as the lab does), then reads them back: what this machine's file system allows.
func diskReference(dir string, p *payload, report func(result, error, string, string, string), lab *bucket.Server) {
	f, err := os.CreateTemp(dir, "bench-lab-disk-")
	if err != nil {
		fail("%v", err)
	}
	defer os.Remove(f.Name())
	r, err := measure(0, lab, func() error {
		for i := int64(0); i < p.blocks(); i++ {
			if _, err := f.Write(p.block(i)); err != nil {
				return err
			}
		}
		return f.Close()
	})
	report(r, err, "disk", "up", "reference: 1 MiB writes into a new file of "+dir+" (no fsync), as the lab stores a body")
	r, err = measure(0, lab, func() error {
		g, err := os.Open(f.Name())
		if err != nil {
			return err
		}
		defer g.Close()
		_, err = io.CopyBuffer(io.Discard, g, make([]byte, block))
		return err
	})
	report(r, err, "disk", "down", "reference: 1 MiB reads of that file (from the page cache)")
}

// waitQuiet waits up to limit for the machine to be idle (at least 90% over 2 s), so that another
// user's load does not land in the figures; it says so when it gives up.
func waitQuiet(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		a := sample(0)
		time.Sleep(2 * time.Second)
		b := sample(0)
		idle := 1 - float64(b.busy-a.busy)/float64(max(b.totalJ-a.totalJ, 1))
		if idle >= 0.9 {
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "bench/lab: the machine is still busy (%.0f%% idle); measuring anyway\n", idle*100)
			return
		}
	}
}

// mounted is one gcsfuse process and its mount point.
type mounted struct {
	dir     string
	child   *proc.Child
	stopped bool
}

// mount starts gcsfuse as the gcsfuse backend does, and waits for the mount.
func mount(bin string, extra []string, lab *bucket.Server, work, name string) (*mounted, error) {
	dir, staging := filepath.Join(work, "mnt-"+name), filepath.Join(work, "tmp-"+name)
	for _, d := range []string{dir, staging} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	args := append([]string{bin, "--foreground", "--implicit-dirs", "--temp-dir=" + staging}, lab.GcsfuseFlags()...)
	args = append(args, extra...)
	args = append(args, bucketName, dir)
	child, err := proc.Start("gcsfuse", filepath.Join(work, "gcsfuse-"+name+".log"), os.Environ(), args...)
	if err != nil {
		return nil, err
	}
	m := &mounted{dir: dir, child: child}
	cleanups = append(cleanups, func() { m.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for !mounts.Mounted(dir) {
		if child.Exited() || time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(work, "gcsfuse-"+name+".log"))
			m.stop()
			return nil, fmt.Errorf("gcsfuse did not mount %s: %s", dir, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return m, nil
}

// stop unmounts (retrying while busy), then stops gcsfuse by its pid; once.
func (m *mounted) stop() error {
	if m.stopped {
		return nil
	}
	m.stopped = true
	var err error
	if mounts.Mounted(m.dir) {
		busy, cancelBusy := context.WithTimeout(context.Background(), 10*time.Second)
		err = mounts.Unmount(busy, m.dir)
		cancelBusy()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return errors.Join(err, m.child.Stop(ctx))
}
