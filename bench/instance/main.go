// Command instance measures which way of slowing this machine's CPU keeps a slow CPU's latency
// shape, for run --profile with an instance profile (lab/instance). A CPU f times slower takes f
// times as long over every request: its median and its p99 are both f times the unthrottled
// ones.
//
// Two ways of giving a request 1/f of a CPU are compared (--methods):
//   - a CFS quota of 1/f CPU per period (each duration in --methods; "shortest" is the shortest
//     period that holds the kernel's least quota of 1 ms; run --profile uses 5 ms, longer under
//     0.2 CPUs: lab/instance.Period). It gives the
//     same CPU time on average, but how it spreads it over a request depends on the period: a
//     request shorter than the quota runs at full speed, and an idle spell banks nothing but
//     lets the next request start with a whole period's quota.
//   - "weight": the app's CPU shared with a busy-looping spinner pinned to the same CPU, the two
//     in sibling cpu cgroups whose weights give the app 1/f of it while both run. The spinner
//     never idles, so the app's share does not depend on what it did before.
//
// For each method and each --factors f, a child process runs CPU-bound requests (SHA-256 over a
// buffer, about --work long unthrottled) on one thread, in two shapes: isolated (one request,
// then a pause of 1 to 3 times its slowed length, so that arrivals fall at any point of a period)
// and back to back (no pause). It prints each one's median and p99 against the unthrottled ones
// (pinned to the same CPU, for the weight method) and the factor they should be, and a goal row
// for each method and shape (how far the median and p99 ratios are from f). Root and a cpu
// cgroup controller (v1 or v2) are needed. Its cgroups and its spinner are removed at the end,
// also on Ctrl-C or a closed pipe.
//
// A benchmark, not a test: run it on a quiet machine.
//
//	go run ./bench/instance [--requests 400] [--work 5ms] [--factors 2,4] [--methods 100ms,20ms,5ms,shortest,weight]
package main

import (
	"bufio"
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
	"persistlab/internal/proc"
	"persistlab/lib/readfile"
)

// Internal flags: the parent starts itself as the child that runs the requests, and as the
// spinner.
const (
	childFlag   = "child"
	spinnerFlag = "spinner"
)

// Goals: a method keeps the shape when its median and its p99 are within these of f times the
// unthrottled ones.
const (
	medianGoal = 0.15
	p99Goal    = 0.25
)

var shapes = []string{"isolated", "back-to-back"}

// workDir holds the records of the cgroups the benchmark makes; removed at the end.
var workDir string

// weightMethod names the weight against a pinned spinner in --methods.
const weightMethod = "weight"

// method is one way of giving a request 1/f of a CPU: a quota per period (0: the shortest that
// holds the kernel's least quota), or a weight against a spinner.
type method struct {
	weight bool
	period time.Duration
}

func main() {
	requests := flag.Int("requests", 400, "requests per method, factor and shape")
	work := flag.Duration("work", 5*time.Millisecond, "a request's CPU time, unthrottled")
	factors := flag.String("factors", "2,4", "slowdowns to emulate (1/f of a CPU)")
	methods := flag.String("methods", "100ms,20ms,5ms,shortest,weight", "ways to slow the CPU: a CFS quota of 1/f CPU per each period named (100ms: the containers' default; 5ms: run --profile's; shortest: 1 ms of quota per period, the kernel's least), and weight: a weight of 1 against f-1 for a busy spinner pinned to the same CPU")
	child := flag.String(childFlag, "", "internal: run as the child, in this shape")
	asSpinner := flag.Bool(spinnerFlag, false, "internal: run as the spinner")
	pin := flag.Int("cpu", -1, "internal: pin the child or the spinner to this CPU")
	iterations := flag.Int("iterations", 0, "internal: hash iterations per request")
	slowed := flag.Duration("slowed", 0, "internal: the slowed request's expected length, for the pauses")
	flag.Parse()
	if *pin >= 0 {
		if err := proc.PinSelf([]int{*pin}); err != nil {
			fail("%v", err)
		}
	}
	if *asSpinner {
		spin()
	}
	if *child != "" {
		runChild(*child, *requests, *iterations, *slowed)
		return
	}
	if *requests < 20 || *requests > 100000 || *work < 100*time.Microsecond || *work > time.Second {
		fail("--requests %d --work %s: want 20 to 100000 requests of 100µs to 1s", *requests, *work)
	}
	fs := parseList(*factors, "--factors", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	ms := parseList(*methods, "--methods", func(s string) (method, error) {
		switch s {
		case weightMethod:
			return method{weight: true}, nil
		case "shortest":
			return method{}, nil
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Millisecond || d > time.Second {
			return method{}, fmt.Errorf("want a period of 1ms to 1s, shortest or %s", weightMethod)
		}
		return method{period: d}, nil
	})
	for _, f := range fs {
		if !(f > 1 && f <= cgroup.MaxCPUWeight) {
			fail("--factors %s: want slowdowns above 1 and at most %g", *factors, cgroup.MaxCPUWeight)
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
	online, err := proc.OnlineCPUs()
	if err != nil {
		fail("%v", err)
	}
	spinCPU := online[len(online)-1]
	if err := track(func() (func(), error) {
		dir, err := os.MkdirTemp("", "persistlab-bench-instance-")
		workDir = dir
		return func() { os.RemoveAll(dir) }, err
	}); err != nil {
		fail("%v", err)
	}
	defer cleanup()
	// Interrupted, or its output's reader gone (| head): its cgroups and spinner go all the same.
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
		pinned        bool // on spinCPU, against the pinned unthrottled rows
		med, p99      time.Duration
	}
	var rows []row
	type baseKey struct {
		pinned bool
		shape  string
	}
	base := map[baseKey]row{}
	unthrottled := func(pinned bool, name string) {
		for _, shape := range shapes {
			cpu := -1
			if pinned {
				cpu = spinCPU
			}
			lat := runIn(nil, self, shape, *requests, iters, *work, cpu)
			r := row{method: name, shape: shape, f: 1, pinned: pinned, med: quantile(lat, 0.5), p99: quantile(lat, 0.99)}
			base[baseKey{pinned, shape}] = r
			rows = append(rows, r)
		}
	}
	unthrottled(false, "unthrottled")
	if slices.ContainsFunc(ms, func(m method) bool { return m.weight }) {
		unthrottled(true, fmt.Sprintf("unthrottled, on CPU %d", spinCPU))
	}
	for _, m := range ms {
		for _, f := range fs {
			var name string
			var c *cgroup.CPU
			var sp *spinner
			cpu := -1
			switch {
			case m.weight:
				name, cpu = fmt.Sprintf("weight 1/f, spinner on CPU %d", spinCPU), spinCPU
				c, sp = startSpinner(self, f, spinCPU)
			default:
				p := m.period
				name = "quota 1/f per " + p.String()
				if p == 0 {
					p = cgroup.ShortestPeriod(1 / f)
					name = "quota 1/f per " + p.String() + " (shortest)"
				}
				if err := cgroup.CheckQuota(1/f, p); err != nil {
					fmt.Printf("%s, f %g: not measured: %v\n", name, f, err)
					continue
				}
				c = newGroup(fmt.Sprintf("persistlab-bench-instance-%d-%s-%g", os.Getpid(), p, f), func(n string) (*cgroup.CPU, error) { return cgroup.NewCPU(n, 1/f, p, workDir) })
			}
			for _, shape := range shapes {
				lat := runIn(c, self, shape, *requests, iters, time.Duration(f*float64(*work)), cpu)
				rows = append(rows, row{method: name, shape: shape, f: f, pinned: m.weight, med: quantile(lat, 0.5), p99: quantile(lat, 0.99)})
			}
			if sp != nil {
				stopSpinner(sp)
			}
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tf\tshape\tmedian ms\tp99 ms\tmedian / unthrottled\tp99 / unthrottled\tp99 / median\t")
	for _, r := range rows {
		b := base[baseKey{r.pinned, r.shape}]
		fmt.Fprintf(tw, "%s\t%g\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.method, r.f, r.shape, msOf(r.med), msOf(r.p99),
			float64(r.med)/float64(b.med), float64(r.p99)/float64(b.p99), float64(r.p99)/float64(r.med))
	}
	tw.Flush()
	fmt.Println("\na CPU f times slower: median / unthrottled = p99 / unthrottled = f, p99 / median as unthrottled (the weight rows against the unthrottled rows on the same CPU)")
	for _, r := range rows {
		if r.f == 1 {
			continue
		}
		b := base[baseKey{r.pinned, r.shape}]
		for _, g := range []struct {
			what       string
			got, want  float64
			goal       float64
			unthrottle time.Duration
		}{{"median", float64(r.med), r.f * float64(b.med), medianGoal, b.med}, {"p99", float64(r.p99), r.f * float64(b.p99), p99Goal, b.p99}} {
			err := benchgoal.Report(os.Stdout, benchgoal.Row{Name: fmt.Sprintf("instance %s, f %g, %s: %s off f times unthrottled", r.method, r.f, r.shape, g.what),
				Got: math.Abs(g.got/g.want - 1), Op: "<=", Goal: g.goal,
				Basis: fmt.Sprintf("bench/instance: %d requests of %s; %.2f ms against %.2f x %.2f ms", *requests, *work, msOf(time.Duration(g.got)), r.f, msOf(g.unthrottle))})
			if err != nil {
				fail("%v", err)
			}
		}
	}
}

// newGroup makes a cpu cgroup and registers its removal at once (under the cleanup lock, so that
// an interrupt between the two cannot leave it behind).
func newGroup(name string, make func(string) (*cgroup.CPU, error)) *cgroup.CPU {
	var c *cgroup.CPU
	err := track(func() (func(), error) {
		var err error
		c, err = make(name)
		if err != nil {
			return nil, err
		}
		dir := c.Dir
		return func() { cgroup.Remove(dir) }, nil
	})
	if err != nil {
		fail("%v", err)
	}
	return c
}

// spinner is the weight method's busy process, stopped by its process id.
type spinner struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once it has exited and been waited for
	once   sync.Once
}

func (sp *spinner) stop() {
	sp.once.Do(func() {
		sp.cmd.Process.Kill()
		<-sp.exited
	})
}

// startSpinner makes the two sibling groups of the weight method for f (the app's of weight 1,
// the spinner's of f-1) and starts the spinner, pinned to cpu, in its own; it returns the app's
// group and the spinner. The groups are removed by their recorded paths.
func startSpinner(self string, f float64, cpu int) (*cgroup.CPU, *spinner) {
	name := fmt.Sprintf("persistlab-bench-instance-%d-weight-%g", os.Getpid(), f)
	app := newGroup(name+"-app", func(n string) (*cgroup.CPU, error) { return cgroup.NewCPUWeight(n, 1, workDir) })
	group := newGroup(name+"-spinner", func(n string) (*cgroup.CPU, error) { return cgroup.NewCPUWeight(n, f-1, workDir) })
	argv := append(group.Wrap(), self, "--"+spinnerFlag, "--cpu", strconv.Itoa(cpu))
	sp := &spinner{cmd: exec.Command(argv[0], argv[1:]...), exited: make(chan struct{})}
	sp.cmd.Stderr = os.Stderr
	err := track(func() (func(), error) {
		if err := sp.cmd.Start(); err != nil {
			return nil, err
		}
		go func() {
			sp.cmd.Wait()
			close(sp.exited)
		}()
		return sp.stop, nil
	})
	if err != nil {
		fail("the spinner: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // busy before the first request
	return app, sp
}

// stopSpinner stops the spinner once its rows are measured; one that exited by itself before
// leaves them unmeasured (the app had the CPU to itself for part of them).
func stopSpinner(sp *spinner) {
	select {
	case <-sp.exited:
		fail("the spinner exited while its rows were measured: %v", sp.cmd.ProcessState)
	default:
	}
	sp.stop()
}

// spin keeps one thread busy forever.
func spin() {
	runtime.GOMAXPROCS(1)
	var x uint64
	for {
		x = x*6364136223846793005 + 1
	}
}

// runIn runs the child in cgroup c (none: unthrottled), pinned to cpu (-1: not), and returns its
// requests' latencies.
func runIn(c *cgroup.CPU, self, shape string, requests, iters int, slowed time.Duration, cpu int) []time.Duration {
	argv := []string{self, "--" + childFlag, shape, "--requests", strconv.Itoa(requests), "--iterations", strconv.Itoa(iters), "--slowed", slowed.String(), "--cpu", strconv.Itoa(cpu)}
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

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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

// cpuModel is the CPU's name from /proc/cpuinfo, read through a size limit up to its first
// "model name" line.
func cpuModel() string {
	f, err := readfile.Open("/proc/cpuinfo", 16<<20)
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// cleanups remove what the benchmark made (its spinner, its cgroups, its directory), last first,
// also when it fails or is interrupted.
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

// track makes something and registers its removal under the cleanup lock: an interrupt waits for
// both, so nothing made is left unregistered.
func track(make func() (undo func(), err error)) error {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	undo, err := make()
	if err == nil {
		cleanups = append(cleanups, undo)
	}
	return err
}

func cleanup() {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

// fail removes what the benchmark made and exits; a second failure meanwhile (a child killed by
// the cleanup) waits for the first's exit instead of reporting its own.
func fail(format string, args ...any) {
	failing.Do(func() {
		cleanup()
		fmt.Fprintf(os.Stderr, "bench/instance: "+format+"\n", args...)
		os.Exit(1)
	})
	select {}
}

var failing sync.Once
