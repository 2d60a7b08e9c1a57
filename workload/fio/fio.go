package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"persistlab/backend"
	"persistlab/internal/disk"
	"persistlab/internal/tools"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// Name is the workload's name in scenarios.
const Name = "fio"

// Layouts of the files a job works on.
const (
	LayoutShared = "shared"  // one file every job shares (seed 002's -filename)
	LayoutPerJob = "per_job" // a file per job, $jobname.$jobnum.$filenum (gcsfuse's benchmark, seed 003)
)

// Params are fio's options as persistlab exposes them; anything else goes through `extra`.
var Params = []param.Param{
	{Name: "rw", Kind: param.KindEnum, Default: "read", Allowed: RWModes, Help: "fio rw="},
	{Name: "bs", Kind: param.KindSize, Default: "4KiB", Min: 512, Max: 256 << 20, Help: "block size"},
	{Name: "layout", Kind: param.KindEnum, Default: LayoutShared, Allowed: []string{LayoutShared, LayoutPerJob},
		Help: "shared: one file all jobs share (seed 002); per_job: a file per job (seed 003)"},
	{Name: "file_size", Kind: param.KindSize, Default: "10MiB", Min: 1, Max: 1 << 40, Help: "size of each file"},
	{Name: "size", Kind: param.KindSize, Default: "0", Min: 0, Max: 1 << 40, Help: "bytes each job moves (0: the file size, fio's default)"},
	{Name: "nrfiles", Kind: param.KindInt, Default: "1", Min: 1, Max: 100000, Help: "files per job (per_job layout)"},
	{Name: "numjobs", Kind: param.KindInt, Default: "1", Min: 1, Max: 4096, Help: "jobs (processes, or threads with thread) running the job at once"},
	{Name: "iodepth", Kind: param.KindInt, Default: "1", Min: 1, Max: 65536, Help: "I/Os each job keeps in flight (with an asynchronous engine)"},
	{Name: "direct", Kind: param.KindBool, Default: "false", Help: "O_DIRECT"},
	{Name: "engine", Kind: param.KindEnum, Default: "psync", Allowed: Engines, Help: "ioengine"},
	{Name: "runtime", Kind: param.KindDuration, Default: "0s", Min: 0, Max: 86400, Help: "stop after this long (0: when size is done)"},
	{Name: "ramp_time", Kind: param.KindDuration, Default: "0s", Min: 0, Max: 3600, Help: "run this long before measuring"},
	{Name: "time_based", Kind: param.KindBool, Default: "false", Help: "run for the whole runtime, repeating the file"},
	{Name: "fsync", Kind: param.KindInt, Default: "0", Min: 0, Max: 1 << 30, Help: "fsync after every N writes (0: never)"},
	{Name: "thread", Kind: param.KindBool, Default: "false", Help: "jobs as threads, not processes"},
	{Name: "invalidate", Kind: param.KindBool, Default: "true", Help: "drop the file's page cache before the job"},
	{Name: "fadvise_hint", Kind: param.KindBool, Default: "true", Help: "tell the kernel the access pattern (posix_fadvise)"},
	{Name: "allrandrepeat", Kind: param.KindBool, Default: "false", Help: "the same random offsets on every run"},
	{Name: "servers", Kind: param.KindInt, Default: "0", Min: 0, Max: 64, Help: "run the job on this many fio servers on loopback (client/server mode), each the whole job"},
	{Name: "prefill", Kind: param.KindBool, Default: "false", Help: "lay the files out and sync them in a fio run of their own (create_only) before the measured one, so their write-back stays out of the measured seconds"},
	{Name: "job_file", Kind: param.KindString, Default: "", Help: "a fio job file of your own, run on the backend's directory instead of the job the other parameters build"},
}

// Metrics are what a fio cell reports; latencies are total (fio's lat_ns), in ms.
var Metrics = append([]workload.Metric{
	{Name: "mib_s", Unit: "MiB/s", HigherBetter: true, Help: "read + write bandwidth"},
	{Name: "iops", Unit: "IOPS", HigherBetter: true},
	{Name: workload.ReadMiBs, Unit: "MiB/s", HigherBetter: true}, {Name: workload.WriteMiBs, Unit: "MiB/s", HigherBetter: true},
	{Name: "read_iops", Unit: "IOPS", HigherBetter: true}, {Name: "write_iops", Unit: "IOPS", HigherBetter: true},
	{Name: "lat_avg_ms", Unit: "ms", Help: "mean latency over both directions, weighted by I/Os"},
	{Name: "read_lat_avg_ms", Unit: "ms"}, {Name: "read_lat_p99_ms", Unit: "ms"},
	{Name: "write_lat_avg_ms", Unit: "ms"}, {Name: "write_lat_p99_ms", Unit: "ms"},
	{Name: "fsync_avg_ms", Unit: "ms"}, {Name: "fsyncs", Unit: "count"},
	{Name: "bytes", Unit: "bytes", HigherBetter: true, Help: "bytes read and written"},
	{Name: "cpu_util", Unit: "share", Help: "fio's own CPU (usr + sys) per job"},
	{Name: "read_bytes", Unit: "bytes", HigherBetter: true}, {Name: "write_bytes", Unit: "bytes", HigherBetter: true},
	{Name: "ios", Unit: "count", Help: "I/Os read and written"},
	{Name: "jobs", Unit: "count", Help: "fio jobs that reported, over every server"},
	{Name: "servers", Unit: "count", Help: "fio servers that reported (client/server mode)"},
}, latencyMetrics()...)

// latencyMetrics are each direction's latency percentiles and maximum, as fio's JSON gives them.
func latencyMetrics() []workload.Metric {
	var out []workload.Metric
	for _, dir := range []string{"read", "write"} {
		for _, p := range []string{"p50", "p90", "p95", "p99.9", "max"} {
			out = append(out, workload.Metric{Name: dir + "_lat_" + p + "_ms", Unit: "ms"})
		}
	}
	return out
}

func init() {
	workload.Register(workload.Info{
		Name:        Name,
		Description: "the real fio (Debian's) on the backend's directory, from parameters; results from fio's JSON",
		Params:      Params,
		Metrics:     Metrics,
		Needs:       backend.Needs{},
		New:         New,
		Length:      length,
		Sections:    map[string]string{"extra": "a mapping of further fio options, like {rwmixread: 70}"},
	})
}

// length is what a cell's job does as its parameters tell: its runtime and ramp time bound the
// measured I/O (a job whose size is done stops sooner); a job that reads (or prefill) lays its
// files out first, written through the backend; a job that writes closes its files after, once
// per job sharing one. A job file of the user's is fio's to read: nothing is known of it.
func length(p workload.Params) workload.Length {
	if p["job_file"] != "" {
		return workload.Length{}
	}
	j, set, err := (&Workload{}).job(p, checkDir)
	if err != nil {
		return workload.Length{}
	}
	var l workload.Length
	if j.Runtime > 0 {
		l.Bound, l.BoundBy = j.RampTime+j.Runtime, "runtime"
		if j.RampTime > 0 {
			l.BoundBy = "ramp time and runtime"
		}
	}
	reads := j.RW != "write" && j.RW != "randwrite"
	writes := j.RW != "read" && j.RW != "randread"
	if reads || set.Prefill {
		l.LayoutBytes = j.LaidOut()
	}
	if !writes {
		return l
	}
	runs := max(set.Servers, 1) // each fio server runs the whole job on the same files
	if j.FilenameFormat == "" {
		l.WrittenFiles, l.ClosesPerFile = 1, j.NumJobs*runs
		l.ClosedBytes = j.Size
	} else {
		l.WrittenFiles, l.ClosesPerFile = j.NumJobs*max(j.NrFiles, 1), runs
		l.ClosedBytes = j.FileSize
	}
	// Random writes reach the whole file, and so does a job its size ends; a sequential writer
	// that its runtime stops got as far as its speed took it.
	if random := j.RW == "randwrite" || j.RW == "randrw"; !random && (j.Runtime > 0 || j.TimeBased) {
		l.ClosedBytes = 0
	}
	return l
}

// settings are one cell's parameters, read.
type settings struct {
	RW            string        `param:"rw"`
	BS            int64         `param:"bs"`
	Layout        string        `param:"layout"`
	FileSize      int64         `param:"file_size"`
	Size          int64         `param:"size"`
	NrFiles       int           `param:"nrfiles"`
	NumJobs       int           `param:"numjobs"`
	IODepth       int           `param:"iodepth"`
	Direct        bool          `param:"direct"`
	Engine        string        `param:"engine"`
	Runtime       time.Duration `param:"runtime"`
	RampTime      time.Duration `param:"ramp_time"`
	TimeBased     bool          `param:"time_based"`
	Fsync         int           `param:"fsync"`
	Thread        bool          `param:"thread"`
	Invalidate    bool          `param:"invalidate"`
	FadviseHint   bool          `param:"fadvise_hint"`
	AllRandRepeat bool          `param:"allrandrepeat"`
	Servers       int           `param:"servers"`
	Prefill       bool          `param:"prefill"`
}

// Workload is fio, found and configured.
type Workload struct {
	bin     string
	version string
	extra   [][2]string
}

var _ workload.Workload = (*Workload)(nil)

// New finds fio and reads the one section: extra, further fio options passed verbatim.
func New(spec scenario.Workload) (workload.Workload, error) {
	bin, err := Find()
	if err != nil {
		return nil, &param.FieldError{Field: "workload.type", Value: Name, Allowed: "a workload whose program is installed: " + err.Error()}
	}
	w := &Workload{bin: bin, version: Version(bin)}
	for name, section := range spec.Sections {
		if name != "extra" {
			return nil, &param.FieldError{Field: "workload." + name, Value: fmt.Sprint(section), Allowed: "extra (a mapping of further fio options), or a parameter"}
		}
		m, ok := section.(map[string]any)
		if !ok {
			return nil, &param.FieldError{Field: "workload.extra", Value: fmt.Sprint(section), Allowed: "a mapping of fio options to values, like {norandommap: \"\"}"}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same scenario gives the same job file
		for _, k := range keys {
			value := ""
			if m[k] != nil {
				value = fmt.Sprint(m[k])
			}
			if err := checkExtra(k, value); err != nil {
				return nil, err
			}
			w.extra = append(w.extra, [2]string{k, value})
		}
	}
	return w, nil
}

// Versions implements workload.Workload.
func (w *Workload) Versions() map[string]string { return map[string]string{"fio": w.version} }

// job builds the fio job of one cell's parameters in dir.
func (w *Workload) job(p workload.Params, dir string) (Job, settings, error) {
	var s settings
	if err := param.Decode(Params, p, &s); err != nil {
		return Job{}, s, param.Under("workload.", err)
	}
	j := Job{Name: "persistlab", Directory: dir, RW: s.RW, BS: s.BS, NumJobs: s.NumJobs, IODepth: s.IODepth,
		Direct: s.Direct, Engine: s.Engine, Runtime: s.Runtime, RampTime: s.RampTime,
		TimeBased: s.TimeBased, Fsync: s.Fsync, Thread: s.Thread, AllRandRepeat: s.AllRandRepeat,
		GroupReporting: true, Extra: w.extra}
	j.Invalidate, j.FadviseHint = &s.Invalidate, &s.FadviseHint
	switch s.Layout {
	case LayoutShared:
		// Named by its size, like the blog's test10k and test1g: on a shared backend each size
		// keeps its own file (and cache).
		j.Filename = "fio-" + param.FormatSize(s.FileSize) + ".data"
		j.Size = s.FileSize
		if s.Size > 0 {
			j.Extra = append([][2]string{{"io_size", strconv.FormatInt(s.Size, 10)}}, j.Extra...)
		}
	default:
		j.FilenameFormat = "$jobname.$jobnum.$filenum"
		j.NrFiles, j.FileSize = s.NrFiles, s.FileSize
		j.Size = s.Size
		if j.Size == 0 {
			j.Size = s.FileSize * int64(j.NrFiles)
		}
	}
	if j.TimeBased && j.Runtime == 0 {
		return Job{}, s, &param.FieldError{Field: "workload.runtime", Value: p["runtime"], Allowed: "a runtime above 0 when time_based is true"}
	}
	return j, s, j.Validate()
}

// checkDir stands for the backend's directory in Check: fio --parse-only does not look at it.
const checkDir = "/nonexistent/persistlab-fio-check"

// checkExtra refuses an extra option persistlab sets itself or that is off its list.
func checkExtra(name, value string) error {
	canonical, problem, ofValue := checkOption(name, value)
	if _, ok := fieldOf[canonical]; ok && problem == "" {
		problem = "an option persistlab's job does not set already: it writes " + canonical + " itself, from a parameter or the backend"
	}
	if problem == "" {
		return nil
	}
	shown := name
	if ofValue {
		shown = name + "=" + value
	}
	return &param.FieldError{Field: "workload.extra", Value: quote(shown), Allowed: problem}
}

// Check implements workload.Workload: persistlab's own checks, then fio's reading of the job
// (`fio --parse-only`), so an option fio rejects is refused with fio's words before any cell.
func (w *Workload) Check(ctx context.Context, p workload.Params) error {
	if path := p["job_file"]; path != "" {
		// The job file says what fio does: a parameter set beside it would be silently ignored.
		for _, d := range Params {
			if v := p[d.Name]; d.Name != "job_file" && !sameValue(d, v, d.Default) {
				return &param.FieldError{Field: "workload." + d.Name, Value: v,
					Allowed: "its default (" + d.Default + ") with a job_file of your own: the job file says what fio does"}
			}
		}
		if len(w.extra) > 0 {
			return &param.FieldError{Field: "workload.extra", Value: w.extra[0][0], Allowed: "no extra options with a job_file of your own: put them in the file"}
		}
		text, err := UserJob(path, checkDir)
		if err != nil {
			return err
		}
		if err := CheckFile(ctx, w.bin, text); err != nil {
			return &param.FieldError{Field: "workload.job_file", Value: path, Allowed: "a job file fio accepts: " + err.Error()}
		}
		return nil
	}
	j, _, err := w.job(p, checkDir)
	if err != nil {
		return err
	}
	return Check(ctx, w.bin, j)
}

// wrapScript writes a script into dir that runs bin behind the command prefix wrap (same
// arguments, same pid once running), and says where it is.
func wrapScript(dir string, wrap []string, bin string) (string, error) {
	quoted := make([]string, 0, len(wrap)+1)
	for _, a := range append(append([]string{}, wrap...), bin) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	path := filepath.Join(dir, "fio-in-instance")
	script := "#!/bin/sh\nexec " + strings.Join(quoted, " ") + ` "$@"` + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", err
	}
	return path, nil
}

// sameValue says whether two texts of a parameter mean the same value (4k and 4KiB, 0 and 0s,
// off and false), each read as the parameter's kind.
func sameValue(p param.Param, a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := p.Number(a)
	y, err2 := p.Number(b)
	return err1 == nil && err2 == nil && x == y
}

// SpaceNeed implements workload.SpaceNeeder: the job's files, on the target. A job file of the
// user's is fio's to lay out: nothing is known of it here.
func (w *Workload) SpaceNeed(p workload.Params) (target, cellDir int64, err error) {
	if p["job_file"] != "" {
		return 0, 0, nil
	}
	j, _, err := w.job(p, checkDir)
	if err != nil {
		return 0, 0, err
	}
	return j.LaidOut(), 0, nil
}

// Start builds the cell's job on the target; fio lays its files out when the job runs, or here
// with prefill.
func (w *Workload) Start(ctx context.Context, env workload.Env) (workload.Instance, error) {
	// In an emulated instance (Target.Wrap), and on the cell's CPUs (the runner's cpus), fio runs
	// through a script that puts it there.
	bin := w.bin
	if wrap := tools.Pinned(env.CPUs, env.Target.Wrap...); len(wrap) > 0 {
		var err error
		if bin, err = wrapScript(env.CellDir, wrap, w.bin); err != nil {
			return nil, err
		}
	}
	if path := env.Params["job_file"]; path != "" {
		text, err := UserJob(path, env.Target.Dir)
		if err != nil {
			return nil, err
		}
		return &instance{w: w, bin: bin, userJob: text, dir: env.CellDir, keepDir: env.ToolOutputDir}, nil
	}
	j, cell, err := w.job(env.Params, env.Target.Dir)
	if err != nil {
		return nil, err
	}
	if err := disk.Room(env.Target.Dir, j.LaidOut(), "the job's files"); err != nil {
		return nil, err
	}
	in := &instance{w: w, bin: bin, job: j, dir: env.CellDir, keepDir: env.ToolOutputDir}
	if cell.Prefill {
		if err := Prefill(ctx, bin, j, env.CellDir); err != nil {
			return nil, err
		}
	}
	for i := 0; i < cell.Servers; i++ {
		port, err := FreePort()
		if err == nil {
			var s *Server
			s, err = StartServer(ctx, bin, port, filepath.Join(env.CellDir, fmt.Sprintf("fio-server-%d.log", i+1)))
			if err == nil {
				in.servers = append(in.servers, s)
			}
		}
		if err != nil {
			in.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return in, nil
}

type instance struct {
	w       *Workload
	bin     string // fio, or the script that runs it in the emulated instance
	job     Job
	userJob string // a user's own job file, pointed at the target; "" for job
	dir     string
	keepDir string // where fio's JSON is kept beyond the work directory (run --fio-json); "" for none
	servers []*Server
}

// Drive runs the job to its end (fio's runtime or size) and reads fio's report.
func (in *instance) Drive(ctx context.Context, _ time.Duration) (*workload.Result, error) {
	start := time.Now()
	var out *Output
	var raw []byte
	var err error
	switch {
	case in.userJob != "":
		out, raw, err = RunFile(ctx, in.bin, in.userJob, in.dir)
	case len(in.servers) == 0:
		out, raw, err = Run(ctx, in.bin, in.job, in.dir)
	default:
		var addrs []string
		for _, s := range in.servers {
			addrs = append(addrs, s.Addr())
		}
		out, raw, err = RunClients(ctx, in.w.bin, in.job, in.dir, addrs)
	}
	var kept string
	var keepErr error
	if len(raw) > 0 {
		_ = os.WriteFile(filepath.Join(in.dir, "fio.json"), raw, 0o644) // kept with --keep, for fio's own tools
		if in.keepDir != "" {
			kept = filepath.Join(in.keepDir, filepath.Base(in.dir)+".json")
			keepErr = keepJSON(kept, raw)
		}
	}
	if err != nil {
		return nil, err
	}
	res := Result(out)
	res.Elapsed = time.Since(start)
	switch {
	case keepErr != nil: // the measurement stands; the copy's loss is said with it
		res.Errors = append(res.Errors, "--fio-json: "+keepErr.Error())
	case kept != "":
		res.Facts["fio_json"] = kept
	}
	res.Facts["job"] = in.job.File()
	if in.userJob != "" {
		res.Facts["job"] = in.userJob
	}
	return res, nil
}

// Result turns fio's report into a workload result.
func Result(out *Output) *workload.Result {
	res := workload.NewResult()
	a := out.Aggregate
	const mib = 1 << 20
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	m := res.Metrics
	m[workload.ReadMiBs], m[workload.WriteMiBs] = a.Read.BandwidthBytesPerSec/mib, a.Write.BandwidthBytesPerSec/mib
	m["mib_s"] = m[workload.ReadMiBs] + m[workload.WriteMiBs]
	m["read_iops"], m["write_iops"] = a.Read.IOPS, a.Write.IOPS
	m["iops"] = a.Read.IOPS + a.Write.IOPS
	m["read_bytes"], m["write_bytes"] = float64(a.Read.IOBytes), float64(a.Write.IOBytes)
	m["bytes"] = m["read_bytes"] + m["write_bytes"]
	m["ios"] = float64(a.Read.IOs + a.Write.IOs)
	for _, d := range []struct {
		name string
		dir  Direction
	}{{"read", a.Read}, {"write", a.Write}} {
		if d.dir.IOs == 0 {
			continue
		}
		m[d.name+"_lat_avg_ms"] = ms(d.dir.Lat.Mean)
		m[d.name+"_lat_max_ms"] = ms(d.dir.Lat.Max)
		for _, p := range d.dir.Lat.Percentiles {
			switch p.P {
			case 50, 90, 95, 99, 99.9:
				m[d.name+"_lat_p"+strconv.FormatFloat(p.P, 'f', -1, 64)+"_ms"] = ms(p.Value)
			}
		}
		if d.dir.Lat.UpperBound {
			res.Facts[d.name+"_percentiles"] = "upper bound: the largest of several jobs' percentiles (fio gave no histogram to merge)"
		}
	}
	if ios := a.Read.IOs + a.Write.IOs; ios > 0 {
		m["lat_avg_ms"] = (ms(a.Read.Lat.Mean)*float64(a.Read.IOs) + ms(a.Write.Lat.Mean)*float64(a.Write.IOs)) / float64(ios)
	}
	if a.Sync.Count > 0 {
		m["fsyncs"] = float64(a.Sync.Count)
		m["fsync_avg_ms"] = ms(a.Sync.Mean)
	}
	m["cpu_util"] = (a.UsrCPU + a.SysCPU) / 100
	m["jobs"] = float64(len(out.Jobs))
	if len(out.Clients) > 0 {
		m["servers"] = float64(len(out.Clients))
	}
	res.Facts["fio_version"] = out.FioVersion
	if a.Error != 0 {
		res.Errors = append(res.Errors, fmt.Sprintf("fio reported error %d", a.Error))
	}
	return res
}

// Stop stops the fio servers this cell started; fio itself has ended with Drive.
func (in *instance) Stop(ctx context.Context) error {
	var errs []error
	for _, s := range in.servers {
		errs = append(errs, s.Stop(ctx))
	}
	in.servers = nil
	return errors.Join(errs...)
}

// keepJSON writes fio's report to path as fio's own tools read it: from its first '{', without
// the notes fio may print before the JSON.
func keepJSON(path string, raw []byte) error {
	if i := bytes.IndexByte(raw, '{'); i > 0 {
		raw = raw[i:]
	}
	return os.WriteFile(path, raw, 0o644)
}
