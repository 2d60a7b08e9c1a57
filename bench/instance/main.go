// Command instance measures which way of slowing this machine's CPU keeps a slow CPU's latency
// shape, for run --profile with an instance profile (lab/instance). A CPU f times slower takes f
// times as long over every request: its median and its p99 are both f times the unthrottled
// ones. A CFS quota of 1/f CPU gives the same CPU time on average, but how it spreads it over a
// request depends on the period: with a long one a request may run at full speed and then wait
// out the rest of the period.
//
// For each method (a quota of 1/f CPU per period, for each --periods; "shortest" is run
// --profile's, the shortest period that holds the kernel's least quota of 1 ms) and each
// --factors f, a
// child process runs CPU-bound requests (SHA-256 over a buffer, about --work long unthrottled) on
// one thread inside a cpu cgroup of its own, in two shapes: isolated (one request, then a pause
// of 1 to 3 times its slowed length, so that arrivals fall at any point of a period) and back to
// back (no pause). It prints each one's median and p99 against the unthrottled ones and the
// factor they should be, and a goal row for each method and shape (how far the median and p99
// ratios are from f). Root and a cpu cgroup controller (v1 or v2) are needed.
//
// A benchmark, not a test: run it on a quiet machine.
//
//	go run ./bench/instance [--requests 400] [--work 5ms] [--factors 2,4] [--periods 100ms,20ms,5ms,shortest]
package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"persistlab/internal/benchgoal"
	"persistlab/internal/cgroup"
	"persistlab/lab/instance"
)

// childFlag runs the requests of one method in this process (the parent starts it in a cgroup).
const childFlag = "child"

// Goals: a method keeps the shape when its median and its p99 are within these of f times the
// unthrottled ones.
const (
	medianGoal = 0.15
	p99Goal    = 0.25
)

var shapes = []string{"isolated", "back-to-back"}

func main() {
	requests := flag.Int("requests", 400, "requests per method, factor and shape")
	work := flag.Duration("work", 5*time.Millisecond, "a request's CPU time, unthrottled")
	factors := flag.String("factors", "2,4", "slowdowns to emulate (a quota of 1/f CPU)")
	periods := flag.String("periods", "100ms,20ms,5ms,shortest", "CFS periods to compare (100ms: the containers' default; shortest: run --profile's, 1 ms of quota per period); the kernel takes no quota under 1 ms per period")
	child := flag.String(childFlag, "", "internal: run as the child, in this shape")
	iterations := flag.Int("iterations", 0, "internal: hash iterations per request")
	slowed := flag.Duration("slowed", 0, "internal: the slowed request's expected length, for the pauses")
	flag.Parse()
	if *child != "" {
		runChild(*child, *requests, *iterations, *slowed)
		return
	}
	if *requests < 20 || *requests > 100000 || *work < 100*time.Microsecond || *work > time.Second {
		fail("--requests %d --work %s: want 20 to 100000 requests of 100µs to 1s", *requests, *work)
	}
	fs := parseList(*factors, "--factors", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	ps := parseList(*periods, "--periods", func(s string) (time.Duration, error) {
		if s == "shortest" {
			return 0, nil
		}
		return time.ParseDuration(s)
	})
	for _, f := range fs {
		if !(f > 1 && f <= 100) {
			fail("--factors %s: want slowdowns above 1 and at most 100", *factors)
		}
	}
	for _, p := range ps {
		if p != 0 && (p < time.Millisecond || p > time.Second) {
			fail("--periods %s: want periods of 1ms to 1s", *periods)
		}
	}
	if os.Geteuid() != 0 {
		fail("a cpu cgroup is made by root only: run as root")
	}
	if err := cgroup.CheckCPU(); err != nil {
		fail("%v", err)
	}
	self, err := os.Executable()
	if err != nil {
		fail("%v", err)
	}
	dir, err := os.MkdirTemp("", "persistlab-bench-instance-")
	if err != nil {
		fail("%v", err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	defer cleanup()
	// Interrupted, or its output's reader gone (| head): its cgroups go all the same.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)
	go func() {
		sig := <-signals
		fail("%v", sig)
	}()

	iters := calibrate(*work)
	fmt.Printf("a request: %d rounds of SHA-256 over 64 KiB (about %s here, unthrottled); %d requests per row; %d CPUs, %s\n\n",
		iters, *work, *requests, runtime.NumCPU(), cpuModel())
	type row struct {
		method, shape string
		f             float64
		med, p99      time.Duration
	}
	var rows []row
	base := map[string]row{}
	for _, shape := range shapes {
		lat := runIn(nil, self, shape, *requests, iters, *work)
		r := row{method: "unthrottled", shape: shape, f: 1, med: quantile(lat, 0.5), p99: quantile(lat, 0.99)}
		base[shape] = r
		rows = append(rows, r)
	}
	for _, period := range ps {
		for _, f := range fs {
			p, method := period, "quota 1/f per "+period.String()
			if p == 0 {
				p = instance.ShortestPeriod(1 / f)
				method = "quota 1/f per " + p.String() + " (shortest)"
			}
			if time.Duration(float64(p)/f) < time.Millisecond {
				fmt.Printf("quota 1/%g per %s: not measured, under the kernel's least quota of 1 ms per period\n", f, p)
				continue
			}
			name := fmt.Sprintf("persistlab-bench-instance-%d-%s-%g", os.Getpid(), p, f)
			c, err := cgroup.NewCPU(name, 1/f, p, dir)
			if err != nil {
				fail("%v", err)
			}
			cleanupMu.Lock()
			cleanups = append(cleanups, func() { c.Remove() })
			cleanupMu.Unlock()
			for _, shape := range shapes {
				lat := runIn(c, self, shape, *requests, iters, time.Duration(f*float64(*work)))
				rows = append(rows, row{method: method, shape: shape, f: f, med: quantile(lat, 0.5), p99: quantile(lat, 0.99)})
			}
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tf\tshape\tmedian ms\tp99 ms\tmedian / unthrottled\tp99 / unthrottled\tp99 / median\t")
	for _, r := range rows {
		b := base[r.shape]
		fmt.Fprintf(tw, "%s\t%g\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.method, r.f, r.shape, ms(r.med), ms(r.p99),
			float64(r.med)/float64(b.med), float64(r.p99)/float64(b.p99), float64(r.p99)/float64(r.med))
	}
	tw.Flush()
	fmt.Println("\na CPU f times slower: median / unthrottled = p99 / unthrottled = f, p99 / median as unthrottled")
	for _, r := range rows {
		if r.method == "unthrottled" {
			continue
		}
		b := base[r.shape]
		for _, g := range []struct {
			what       string
			got, want  float64
			goal       float64
			unthrottle time.Duration
		}{{"median", float64(r.med), r.f * float64(b.med), medianGoal, b.med}, {"p99", float64(r.p99), r.f * float64(b.p99), p99Goal, b.p99}} {
			err := benchgoal.Report(os.Stdout, benchgoal.Row{Name: fmt.Sprintf("instance %s, f %g, %s: %s off f times unthrottled", r.method, r.f, r.shape, g.what),
				Got: math.Abs(g.got/g.want - 1), Op: "<=", Goal: g.goal,
				Basis: fmt.Sprintf("bench/instance: %d requests of %s; %.2f ms against %.2f x %.2f ms", *requests, *work, ms(time.Duration(g.got)), r.f, ms(g.unthrottle))})
			if err != nil {
				fail("%v", err)
			}
		}
	}
}

// runIn runs the child in cgroup c (none: unthrottled) and returns its requests' latencies.
func runIn(c *cgroup.CPU, self, shape string, requests, iters int, slowed time.Duration) []time.Duration {
	argv := []string{self, "--" + childFlag, shape, "--requests", strconv.Itoa(requests), "--iterations", strconv.Itoa(iters), "--slowed", slowed.String()}
	if c != nil {
		argv = append(c.Wrap(), argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		fail("child %s: %v", shape, err)
	}
	var ns []int64
	if err := json.Unmarshal(out, &ns); err != nil || len(ns) != requests {
		fail("child %s: %v (%d latencies)", shape, err, len(ns))
	}
	lat := make([]time.Duration, len(ns))
	for i, n := range ns {
		lat[i] = time.Duration(n)
	}
	return lat
}

// runChild runs the requests on one thread and prints their latencies, in ns, as JSON.
func runChild(shape string, requests, iters int, slowed time.Duration) {
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	buf := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	var sink byte
	for range 5 { // warm up
		sink ^= request(buf, iters)
	}
	lat := make([]int64, 0, requests)
	for range requests {
		if shape == "isolated" {
			time.Sleep(time.Duration((1 + 2*rng.Float64()) * float64(slowed)))
		}
		start := time.Now()
		sink ^= request(buf, iters)
		lat = append(lat, int64(time.Since(start)))
	}
	buf[0] = sink
	json.NewEncoder(os.Stdout).Encode(lat)
}

// request is the CPU-bound work of one request.
func request(buf []byte, iters int) byte {
	var sum [32]byte
	for range iters {
		sum = sha256.Sum256(buf)
		buf[0] ^= sum[0]
	}
	return sum[1]
}

// calibrate finds the iterations that take about work here, unthrottled.
func calibrate(work time.Duration) int {
	buf := make([]byte, 64<<10)
	const probe = 50
	var times []time.Duration
	for range 20 {
		start := time.Now()
		request(buf, probe)
		times = append(times, time.Since(start))
	}
	per := quantile(times, 0.5) / probe
	return max(1, int(work/per))
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func parseList[T any](s, flagName string, parse func(string) (T, error)) []T {
	var out []T
	for _, part := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(part))
		if err != nil {
			fail("%s %q: %v", flagName, s, err)
		}
		out = append(out, v)
	}
	return out
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// cleanups remove what the benchmark made (its cgroups, its directory), last first, also when it
// fails.
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

func cleanup() {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

func fail(format string, args ...any) {
	cleanup()
	fmt.Fprintf(os.Stderr, "bench/instance: "+format+"\n", args...)
	os.Exit(1)
}
