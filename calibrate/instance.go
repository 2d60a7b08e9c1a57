package calibrate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // the driver the counter app runs SQLite through

	"golang.org/x/sys/unix"

	"persistlab/internal/cgroup"
	"persistlab/internal/sysinfo"
)

// The instance probe (persistlab probe): fixed reference work, timed on the machine it runs on,
// so that two probes, one on the user's target and one here, give the target's speed against this
// machine (persistlab calibrate instance). It reads no network and writes only files of its own,
// in a directory it makes.

// ProbeSchema names the probe file's format; bump it when a field changes meaning.
const ProbeSchema = "persistlab.probe/1"

// MaxProbeFileBytes bounds a probe file: one is a few KiB.
const MaxProbeFileBytes = 256 << 10

// UnitRows are the sizes of the reference unit of CPU work, in rows: the cpu_factor is fitted
// from the smallest and the largest, and the middle one is held out.
var UnitRows = []int{1, 8, 64}

// HeldOutRows is the unit size the fit does not use.
const HeldOutRows = 8

// unitsPerBatch is how many units of each size one timed batch runs: about 0.1 s each on this
// project's machine (an AMD EPYC core). On a target limited to a fraction of a CPU a batch lasts as
// many times longer, so it spans several CFS periods (100 ms in containers), and its time holds
// the limit's average rather than one period's luck.
var unitsPerBatch = map[int]int{1: 8000, 8: 1600, 64: 180}

// The probe's bounds: enough batches for a median, few enough for the probe to stay a probe.
const (
	DefaultProbeRepeats = 7
	MinProbeRepeats     = 3
	MaxProbeRepeats     = 50
	DefaultFSOps        = 200
	DefaultFUSEOps      = 50
	MinFSOps            = 20
	MaxFSOps            = 5000
	DefaultProbeMax     = 3 * time.Minute
	// maxProbeThreads bounds the parallel phase's threads: enough to see the CPUs a container
	// really gets, whatever it claims to have.
	maxProbeThreads = 16
	minProbeThreads = 2
	fsBlock         = 4096 // bytes written per file call
)

// ProbePlan is what the probe does.
type ProbePlan struct {
	Repeats  int           // timed batches per unit size, and of the parallel phase
	FSOps    int           // iterations of the file system calls in Dir
	FUSEOps  int           // the same in FUSEDir
	Dir      string        // a directory to make the probe's own directory in ("": the system's temporary directory)
	FUSEDir  string        // a FUSE mount to probe too ("": none)
	MaxTime  time.Duration // the probe stops with an error past this
	Progress io.Writer
}

// DefaultProbePlan is the probe `persistlab probe` runs unless told otherwise.
func DefaultProbePlan() ProbePlan {
	return ProbePlan{Repeats: DefaultProbeRepeats, FSOps: DefaultFSOps, FUSEOps: DefaultFUSEOps, MaxTime: DefaultProbeMax}
}

// Check says what of the plan is out of bounds, naming the flag.
func (p ProbePlan) Check() error {
	switch {
	case p.Repeats < MinProbeRepeats || p.Repeats > MaxProbeRepeats:
		return fmt.Errorf("--repeats %d: want %d to %d timed batches per unit size", p.Repeats, MinProbeRepeats, MaxProbeRepeats)
	case p.FSOps < MinFSOps || p.FSOps > MaxFSOps:
		return fmt.Errorf("--fs-ops %d: want %d to %d iterations of the file system calls", p.FSOps, MinFSOps, MaxFSOps)
	case p.FUSEDir != "" && (p.FUSEOps < MinFSOps || p.FUSEOps > MaxFSOps):
		return fmt.Errorf("--fuse-ops %d: want %d to %d iterations of the file system calls", p.FUSEOps, MinFSOps, MaxFSOps)
	case p.MaxTime < 10*time.Second || p.MaxTime > time.Hour:
		return fmt.Errorf("--max-time %s: want 10s to 1h", p.MaxTime)
	}
	return nil
}

// Probe is what one probe measured, as the probe file holds it.
type Probe struct {
	Schema  string       `json:"schema"`
	When    string       `json:"when"` // RFC 3339, when it finished
	Commit  string       `json:"persistlab_commit"`
	Machine ProbeMachine `json:"machine"`
	CPU     CPUResult    `json:"cpu"`
	FS      FSResult     `json:"fs"`
	FUSE    *FSResult    `json:"fuse,omitempty"`
	Elapsed float64      `json:"elapsed_s"`
}

// ProbeMachine is the machine the probe ran on.
type ProbeMachine struct {
	Hostname string `json:"hostname"`
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"` // visible to the process (runtime.NumCPU)
	// GoMaxProcs is the Go runtime's default, which follows a cgroup CPU limit.
	GoMaxProcs int `json:"gomaxprocs"`
	// CgroupCPULimit is the CPU bandwidth limit of the probe's cgroup, in CPUs (0: none found),
	// and CgroupCPUMax where it was read ("cpu.max 50000 100000").
	CgroupCPULimit float64 `json:"cgroup_cpu_limit"`
	CgroupCPUMax   string  `json:"cgroup_cpu_max,omitempty"`
	Kernel         string  `json:"kernel"`
	Go             string  `json:"go"`
}

// String is the machine in one phrase: "vm-1 (Intel Xeon, 2 cores, cgroup limit 1 CPU)".
func (m ProbeMachine) String() string {
	s := fmt.Sprintf("%s (%s, %d cores visible", m.Hostname, m.CPUModel, m.Cores)
	if m.CgroupCPULimit > 0 {
		s += fmt.Sprintf(", cgroup limit %s CPUs", strconv.FormatFloat(m.CgroupCPULimit, 'f', -1, 64))
	}
	return s + ")"
}

// CPUResult is the CPU work: each unit size on one thread, then the middle size on several.
type CPUResult struct {
	Unit    string       `json:"unit"` // what one unit does
	Repeats int          `json:"repeats"`
	Sizes   []SizeResult `json:"sizes"`
	// Threads ran the parallel phase: the same total work as one single-thread batch of
	// ParallelRows units, shared between them.
	Threads      int     `json:"threads"`
	ParallelRows int     `json:"parallel_rows"`
	ParallelMs   float64 `json:"parallel_ms_per_unit"` // wall time per unit, median of the batches
	// EffectiveCPUs is the single-thread time per unit over the parallel one: the CPUs' worth
	// of work the machine really did at once.
	EffectiveCPUs float64 `json:"effective_cpus"`
}

// SizeResult is one unit size's single-thread batches.
type SizeResult struct {
	Rows      int       `json:"rows"`
	Units     int       `json:"units_per_batch"`
	Batches   []float64 `json:"batch_ms_per_unit"` // each timed batch's wall time per unit
	MsPerUnit float64   `json:"ms_per_unit"`       // their median
	UnitsPerS float64   `json:"units_per_s"`
}

// FSResult is the file system calls in one directory.
type FSResult struct {
	FileSystem string       `json:"file_system"` // "ext4 on / (/dev/sda1)"
	Ops        int          `json:"ops"`
	Calls      []CallResult `json:"calls"`
}

// Call returns the named call's result.
func (r FSResult) Call(name string) (CallResult, bool) {
	for _, c := range r.Calls {
		if c.Call == name {
			return c, true
		}
	}
	return CallResult{}, false
}

// CallResult is one call's latency.
type CallResult struct {
	Call     string  `json:"call"`
	MedianUs float64 `json:"median_us"`
	P99Us    float64 `json:"p99_us"`
}

// FSCalls are the calls the probe times, in its order, and what each does.
var FSCalls = []struct{ Name, What string }{
	{"create", "create a new file, write 4 KiB, close"},
	{"fsync", "fsync after writing 4 KiB to it again"},
	{"rename", "rename it"},
	{"stat", "stat it"},
	{"unlink", "unlink it"},
}

// unitText says what one unit does.
const unitText = "one transaction of N INSERT OR REPLACE and N SELECT by key in an in-memory SQLite database (mattn/go-sqlite3, as the counter app), then N records encoded to JSON, decoded back, and hashed with SHA-256"

func (p ProbePlan) say(format string, a ...any) {
	if p.Progress != nil {
		fmt.Fprintf(p.Progress, format+"\n", a...)
	}
}

// RunProbe runs the probe. The file system phases write only in a directory of their own,
// which they remove.
func RunProbe(ctx context.Context, plan ProbePlan) (*Probe, error) {
	start := time.Now()
	deadline := start.Add(plan.MaxTime)
	ctx, cancel := context.WithDeadlineCause(ctx, deadline, fmt.Errorf("the probe took longer than --max-time %s: this machine is too slow for its fixed work (raise --max-time)", plan.MaxTime))
	defer cancel()
	p := &Probe{Schema: ProbeSchema, Machine: DescribeProbeMachine()}
	p.Commit = sysinfo.Versions()["persistlab_commit"]
	if p.Commit == "" {
		p.Commit = "unstamped"
	}
	cpu, err := probeCPU(ctx, plan)
	if err != nil {
		return nil, err
	}
	p.CPU = cpu
	dir := plan.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	if p.FS, err = probeFS(ctx, dir, plan.FSOps, plan, "--dir"); err != nil {
		return nil, err
	}
	if plan.FUSEDir != "" {
		fuse, err := probeFS(ctx, plan.FUSEDir, plan.FUSEOps, plan, "--fuse-dir")
		if err != nil {
			return nil, err
		}
		p.FUSE = &fuse
	}
	p.Elapsed = math.Round(time.Since(start).Seconds()*100) / 100
	p.When = time.Now().UTC().Format(time.RFC3339)
	return p, nil
}

// DescribeProbeMachine reads the machine: its CPU, what the process sees of it, and its limit.
func DescribeProbeMachine() ProbeMachine {
	m := sysinfo.Describe()
	orUnknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	limit, where := cgroup.OwnCPULimit()
	return ProbeMachine{Hostname: orUnknown(m.Hostname), CPUModel: orUnknown(m.CPUModel), Cores: runtime.NumCPU(),
		GoMaxProcs: runtime.GOMAXPROCS(0), CgroupCPULimit: limit, CgroupCPUMax: where, Kernel: orUnknown(m.Kernel), Go: runtime.Version()}
}

// cpuWorker is one thread's database and statements.
type cpuWorker struct {
	db       *sql.DB
	ins, sel *sql.Stmt
	seq      int64
	sum      byte     // keeps the hashes live
	recs     []record // reused, unit after unit
}

type record struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Qty  int64  `json:"qty"`
	Note string `json:"note"`
}

// tableRows bounds the in-memory table: ids wrap around it.
const tableRows = 4096

func newCPUWorker() (*cpuWorker, error) {
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one connection, so one database: each :memory: connection has its own
	w := &cpuWorker{db: db}
	if _, err := db.Exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL, note TEXT NOT NULL)`); err != nil {
		db.Close()
		return nil, err
	}
	if w.ins, err = db.Prepare(`INSERT OR REPLACE INTO items (id, name, qty, note) VALUES (?, ?, ?, ?)`); err != nil {
		db.Close()
		return nil, err
	}
	if w.sel, err = db.Prepare(`SELECT id, name, qty, note FROM items WHERE id = ?`); err != nil {
		db.Close()
		return nil, err
	}
	return w, nil
}

func (w *cpuWorker) close() { w.db.Close() }

// unit does one unit of rows rows.
func (w *cpuWorker) unit(rows int) error {
	tx, err := w.db.Begin()
	if err != nil {
		return err
	}
	ins, sel := tx.Stmt(w.ins), tx.Stmt(w.sel)
	first := w.seq
	for i := 0; i < rows; i++ {
		id := (first + int64(i)) % tableRows
		if _, err := ins.Exec(id, "item-"+strconv.FormatInt(id, 10), id*7%101, "a note of a modest length for row "+strconv.FormatInt(id, 10)); err != nil {
			tx.Rollback()
			return err
		}
	}
	if cap(w.recs) < rows {
		w.recs = make([]record, rows)
	}
	recs := w.recs[:rows]
	for i := range recs {
		r := &recs[i]
		if err := sel.QueryRow((first+int64(i))%tableRows).Scan(&r.ID, &r.Name, &r.Qty, &r.Note); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	w.seq += int64(rows)
	data, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	var back []record
	if err := json.Unmarshal(data, &back); err != nil {
		return err
	}
	if len(back) != rows {
		return fmt.Errorf("the JSON of %d records decoded to %d", rows, len(back))
	}
	sum := sha256.Sum256(data)
	w.sum ^= sum[0]
	return nil
}

// batch runs n units and returns the wall time per unit, in ms.
func (w *cpuWorker) batch(ctx context.Context, rows, n int) (float64, error) {
	runtime.GC() // a collection the previous batch left due falls outside this one
	start := time.Now()
	for i := 0; i < n; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		if err := w.unit(rows); err != nil {
			return 0, fmt.Errorf("the CPU work: %w", err)
		}
	}
	return float64(time.Since(start)) / float64(time.Millisecond) / float64(n), nil
}

// probeCPU times the reference unit at each size on one thread, then the middle size shared
// between as many threads as the machine shows CPUs. The sizes take turns, batch by batch, so
// that a moment of other load on the machine falls on every size alike, not on one.
func probeCPU(ctx context.Context, plan ProbePlan) (CPUResult, error) {
	res := CPUResult{Unit: unitText, Repeats: plan.Repeats, ParallelRows: HeldOutRows}
	w, err := newCPUWorker()
	if err != nil {
		return res, fmt.Errorf("the CPU work: %w", err)
	}
	defer w.close()
	// One P: the collector's work falls in the thread's own time, as on a machine with one CPU,
	// rather than on an idle core here and in the quota on a limited target.
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	plan.say("CPU: %d rounds of one batch of each unit size (%s) on one thread ...", plan.Repeats, batchesText())
	batches := make([][]float64, len(UnitRows))
	for r := -1; r < plan.Repeats; r++ { // round -1 warms up: the statements' first steps, the heap's growth
		for i, rows := range UnitRows {
			n := unitsPerBatch[rows]
			if r < 0 {
				n /= 4
			}
			ms, err := w.batch(ctx, rows, n)
			if err != nil {
				return res, err
			}
			if r >= 0 {
				batches[i] = append(batches[i], round4(ms))
			}
		}
	}
	for i, rows := range UnitRows {
		s := SizeResult{Rows: rows, Units: unitsPerBatch[rows], Batches: batches[i]}
		s.MsPerUnit = round4(median(s.Batches))
		s.UnitsPerS = round4(1000 / s.MsPerUnit)
		res.Sizes = append(res.Sizes, s)
	}
	runtime.GOMAXPROCS(prev)
	res.Threads = min(maxProbeThreads, max(minProbeThreads, runtime.NumCPU()))
	total := unitsPerBatch[HeldOutRows]
	plan.say("CPU: %d batches of %d units of %d rows shared by %d threads ...", plan.Repeats, total, HeldOutRows, res.Threads)
	ms, err := parallelBatches(ctx, res.Threads, HeldOutRows, total, plan.Repeats)
	if err != nil {
		return res, err
	}
	res.ParallelMs = round4(ms)
	for _, s := range res.Sizes {
		if s.Rows == HeldOutRows {
			res.EffectiveCPUs = round4(s.MsPerUnit / res.ParallelMs)
		}
	}
	return res, nil
}

// batchesText is the batch of each size: "8000 units of 1 row, ...".
func batchesText() string {
	var parts []string
	for _, rows := range UnitRows {
		parts = append(parts, fmt.Sprintf("%d units of %d rows", unitsPerBatch[rows], rows))
	}
	return strings.Join(parts, ", ")
}

// parallelBatches runs total units shared by threads goroutines, each locked to a thread of its
// own with GOMAXPROCS raised to match, repeats times; it returns the median wall time per unit.
func parallelBatches(ctx context.Context, threads, rows, total, repeats int) (float64, error) {
	prev := runtime.GOMAXPROCS(max(threads, runtime.GOMAXPROCS(0)))
	defer runtime.GOMAXPROCS(prev)
	workers := make([]*cpuWorker, threads)
	for i := range workers {
		w, err := newCPUWorker()
		if err != nil {
			return 0, fmt.Errorf("the CPU work: %w", err)
		}
		defer w.close()
		workers[i] = w
	}
	var perUnit []float64
	for r := -1; r < repeats; r++ { // r -1 warms every worker up, untimed
		runtime.GC()
		var wg sync.WaitGroup
		errs := make([]error, threads)
		start := time.Now()
		for i, w := range workers {
			share := total / threads
			if i < total%threads {
				share++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				for j := 0; j < share; j++ {
					if j%64 == 0 && ctx.Err() != nil {
						errs[i] = context.Cause(ctx)
						return
					}
					if err := w.unit(rows); err != nil {
						errs[i] = fmt.Errorf("the CPU work: %w", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return 0, err
		}
		if r >= 0 {
			perUnit = append(perUnit, float64(time.Since(start))/float64(time.Millisecond)/float64(total))
		}
	}
	return median(perUnit), nil
}

// probeFS times the file system calls in a directory the probe makes under parent, which it
// removes with everything in it it made, error or not. flag names parent in errors.
func probeFS(ctx context.Context, parent string, ops int, plan ProbePlan, flag string) (res FSResult, err error) {
	res = FSResult{FileSystem: sysinfo.FileSystemOf(parent), Ops: ops}
	own := filepath.Join(parent, "persistlab-probe-"+NewProbeID())
	if err := os.Mkdir(own, 0o700); err != nil {
		return res, fmt.Errorf("%s %s: cannot make the probe's directory there: %w", flag, parent, err)
	}
	plan.say("file system: %d rounds of create, fsync, rename, stat and unlink in %s (%s) ...", ops, own, res.FileSystem)
	a, b := filepath.Join(own, "a"), filepath.Join(own, "b")
	defer func() {
		// Only what the probe made: its two names and its directory.
		var errs []error
		for _, f := range []string{a, b} {
			if e := os.Remove(f); e != nil && !errors.Is(e, os.ErrNotExist) {
				errs = append(errs, e)
			}
		}
		if e := os.Remove(own); e != nil {
			errs = append(errs, e)
		}
		if e := errors.Join(errs...); e != nil && err == nil {
			err = fmt.Errorf("%s %s: the probe's directory %s could not be removed: %w", flag, parent, own, e)
		}
	}()
	block := make([]byte, fsBlock)
	for i := range block {
		block[i] = byte(i * 31)
	}
	times := make(map[string][]time.Duration, len(FSCalls))
	for i := 0; i < ops; i++ {
		if ctx.Err() != nil {
			return res, context.Cause(ctx)
		}
		t := time.Now()
		fd, err := unix.Open(a, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return res, fmt.Errorf("%s %s: create: %w", flag, parent, err)
		}
		_, werr := unix.Write(fd, block)
		cerr := unix.Close(fd)
		if err := errors.Join(werr, cerr); err != nil {
			return res, fmt.Errorf("%s %s: write: %w", flag, parent, err)
		}
		times["create"] = append(times["create"], time.Since(t))

		fd, err = unix.Open(a, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return res, fmt.Errorf("%s %s: open: %w", flag, parent, err)
		}
		_, werr = unix.Pwrite(fd, block, 0)
		t = time.Now()
		serr := unix.Fsync(fd)
		times["fsync"] = append(times["fsync"], time.Since(t))
		if err := errors.Join(werr, serr, unix.Close(fd)); err != nil {
			return res, fmt.Errorf("%s %s: fsync: %w", flag, parent, err)
		}

		t = time.Now()
		if err := unix.Rename(a, b); err != nil {
			return res, fmt.Errorf("%s %s: rename: %w", flag, parent, err)
		}
		times["rename"] = append(times["rename"], time.Since(t))

		var st unix.Stat_t
		t = time.Now()
		if err := unix.Stat(b, &st); err != nil {
			return res, fmt.Errorf("%s %s: stat: %w", flag, parent, err)
		}
		times["stat"] = append(times["stat"], time.Since(t))

		t = time.Now()
		if err := unix.Unlink(b); err != nil {
			return res, fmt.Errorf("%s %s: unlink: %w", flag, parent, err)
		}
		times["unlink"] = append(times["unlink"], time.Since(t))
	}
	for _, c := range FSCalls {
		res.Calls = append(res.Calls, CallResult{Call: c.Name, MedianUs: round4(us(Quantile(times[c.Name], 0.5))), P99Us: round4(us(Quantile(times[c.Name], 0.99)))})
	}
	return res, nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// round4 keeps 4 significant digits: what the timings can tell.
func round4(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
