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
var Params = []scenario.Param{
	{Name: "rw", Kind: scenario.KindEnum, Default: "read", Allowed: RWModes, Help: "fio rw="},
	{Name: "bs", Kind: scenario.KindSize, Default: "4KiB", Min: 512, Max: 256 << 20, Help: "block size"},
	{Name: "layout", Kind: scenario.KindEnum, Default: LayoutShared, Allowed: []string{LayoutShared, LayoutPerJob},
		Help: "shared: one file all jobs share (seed 002); per_job: a file per job (seed 003)"},
	{Name: "file_size", Kind: scenario.KindSize, Default: "10MiB", Min: 1, Max: 1 << 40, Help: "size of each file"},
	{Name: "size", Kind: scenario.KindSize, Default: "0", Min: 0, Max: 1 << 40, Help: "bytes each job moves (0: the file size, fio's default)"},
	{Name: "nrfiles", Kind: scenario.KindInt, Default: "1", Min: 1, Max: 100000, Help: "files per job (per_job layout)"},
	{Name: "numjobs", Kind: scenario.KindInt, Default: "1", Min: 1, Max: 4096, Help: "jobs (processes, or threads with thread) running the job at once"},
	{Name: "iodepth", Kind: scenario.KindInt, Default: "1", Min: 1, Max: 65536, Help: "I/Os each job keeps in flight (with an asynchronous engine)"},
	{Name: "direct", Kind: scenario.KindBool, Default: "false", Help: "O_DIRECT"},
	{Name: "engine", Kind: scenario.KindEnum, Default: "psync", Allowed: Engines, Help: "ioengine"},
	{Name: "runtime", Kind: scenario.KindDuration, Default: "0s", Min: 0, Max: 86400, Help: "stop after this long (0: when size is done)"},
	{Name: "ramp_time", Kind: scenario.KindDuration, Default: "0s", Min: 0, Max: 3600, Help: "run this long before measuring"},
	{Name: "time_based", Kind: scenario.KindBool, Default: "false", Help: "run for the whole runtime, repeating the file"},
	{Name: "fsync", Kind: scenario.KindInt, Default: "0", Min: 0, Max: 1 << 30, Help: "fsync after every N writes (0: never)"},
	{Name: "thread", Kind: scenario.KindBool, Default: "false", Help: "jobs as threads, not processes"},
	{Name: "invalidate", Kind: scenario.KindBool, Default: "true", Help: "drop the file's page cache before the job"},
	{Name: "fadvise_hint", Kind: scenario.KindBool, Default: "true", Help: "tell the kernel the access pattern (posix_fadvise)"},
	{Name: "allrandrepeat", Kind: scenario.KindBool, Default: "false", Help: "the same random offsets on every run"},
	{Name: "servers", Kind: scenario.KindInt, Default: "0", Min: 0, Max: 64, Help: "run the job on this many fio servers on loopback (client/server mode), each the whole job"},
	{Name: "prefill", Kind: scenario.KindBool, Default: "false", Help: "lay the files out and sync them in a fio run of their own (create_only) before the measured one, so their write-back stays out of the measured seconds"},
	{Name: "job_file", Kind: scenario.KindString, Default: "", Help: "a fio job file of your own, run on the backend's directory instead of the job the other parameters build"},
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
	j, servers, err := (&Workload{}).job(p, checkDir)
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
	if prefill, _ := scenario.ParseBool(p["prefill"]); reads || prefill {
		l.LayoutBytes = j.LaidOut()
	}
	if !writes {
		return l
	}
	runs := max(servers, 1) // each fio server runs the whole job on the same files
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
		return nil, &scenario.FieldError{Field: "workload.type", Value: Name, Allowed: "a workload whose program is installed: " + err.Error()}
	}
	w := &Workload{bin: bin, version: Version(bin)}
	for name, section := range spec.Sections {
		if name != "extra" {
			return nil, &scenario.FieldError{Field: "workload." + name, Value: fmt.Sprint(section), Allowed: "extra (a mapping of further fio options), or a parameter"}
		}
		m, ok := section.(map[string]any)
		if !ok {
			return nil, &scenario.FieldError{Field: "workload.extra", Value: fmt.Sprint(section), Allowed: "a mapping of fio options to values, like {norandommap: \"\"}"}
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
func (w *Workload) job(p workload.Params, dir string) (Job, int, error) {
	var err error
	size := func(name string) int64 {
		v, e := scenario.ParseSize(p[name])
		if e != nil && err == nil {
			err = &scenario.FieldError{Field: "workload." + name, Value: p[name], Allowed: "a size like 4k or 1GiB"}
		}
		return v
	}
	num := func(name string) int {
		v, e := strconv.Atoi(p[name])
		if e != nil && err == nil {
			err = &scenario.FieldError{Field: "workload." + name, Value: p[name], Allowed: "a whole number"}
		}
		return v
	}
	flag := func(name string) bool { v, _ := scenario.ParseBool(p[name]); return v }
	dur := func(name string) time.Duration { v, _ := time.ParseDuration(p[name]); return v }
	for _, d := range Params { // bounds and enums first: a cell may be given values directly
		if e := d.Check("workload."+d.Name, p[d.Name]); e != nil {
			return Job{}, 0, e
		}
	}
	j := Job{Name: "persistlab", Directory: dir, RW: p["rw"], BS: size("bs"), NumJobs: num("numjobs"), IODepth: num("iodepth"),
		Direct: flag("direct"), Engine: p["engine"], Runtime: dur("runtime"), RampTime: dur("ramp_time"),
		TimeBased: flag("time_based"), Fsync: num("fsync"), Thread: flag("thread"), AllRandRepeat: flag("allrandrepeat"),
		GroupReporting: true, Extra: w.extra}
	invalidate, fadvise := flag("invalidate"), flag("fadvise_hint")
	j.Invalidate, j.FadviseHint = &invalidate, &fadvise
	fileSize, perJob := size("file_size"), size("size")
	switch p["layout"] {
	case LayoutShared:
		// Named by its size, like the blog's test10k and test1g: on a shared backend each size
		// keeps its own file (and cache).
		j.Filename = "fio-" + scenario.FormatSize(fileSize) + ".data"
		j.Size = fileSize
		if perJob > 0 {
			j.Extra = append([][2]string{{"io_size", strconv.FormatInt(perJob, 10)}}, j.Extra...)
		}
	default:
		j.FilenameFormat = "$jobname.$jobnum.$filenum"
		j.NrFiles, j.FileSize = num("nrfiles"), fileSize
		j.Size = perJob
		if j.Size == 0 {
			j.Size = fileSize * int64(j.NrFiles)
		}
	}
	if err != nil {
		return Job{}, 0, err
	}
	if j.TimeBased && j.Runtime == 0 {
		return Job{}, 0, &scenario.FieldError{Field: "workload.runtime", Value: p["runtime"], Allowed: "a runtime above 0 when time_based is true"}
	}
	return j, num("servers"), j.Validate()
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
	return &scenario.FieldError{Field: "workload.extra", Value: quote(shown), Allowed: problem}
}

// Check implements workload.Workload: persistlab's own checks, then fio's reading of the job
// (`fio --parse-only`), so an option fio rejects is refused with fio's words before any cell.
func (w *Workload) Check(ctx context.Context, p workload.Params) error {
	if path := p["job_file"]; path != "" {
		// The job file says what fio does: a parameter set beside it would be silently ignored.
		for _, param := range Params {
			if v := p[param.Name]; param.Name != "job_file" && !sameValue(param, v, param.Default) {
				return &scenario.FieldError{Field: "workload." + param.Name, Value: v,
					Allowed: "its default (" + param.Default + ") with a job_file of your own: the job file says what fio does"}
			}
		}
		if len(w.extra) > 0 {
			return &scenario.FieldError{Field: "workload.extra", Value: w.extra[0][0], Allowed: "no extra options with a job_file of your own: put them in the file"}
		}
		text, err := UserJob(path, checkDir)
		if err != nil {
			return err
		}
		if err := CheckFile(ctx, w.bin, text); err != nil {
			return &scenario.FieldError{Field: "workload.job_file", Value: path, Allowed: "a job file fio accepts: " + err.Error()}
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

// sameValue says whether two texts of a parameter mean the same value (4k and 4KiB, 0 and 0s).
func sameValue(p scenario.Param, a, b string) bool {
	if a == b {
		return true
	}
	switch p.Kind {
	case scenario.KindSize:
		x, err1 := scenario.ParseSize(a)
		y, err2 := scenario.ParseSize(b)
		return err1 == nil && err2 == nil && x == y
	case scenario.KindDuration:
		x, err1 := time.ParseDuration(a)
		y, err2 := time.ParseDuration(b)
		return err1 == nil && err2 == nil && x == y
	case scenario.KindBool:
		x, err1 := strconv.ParseBool(a)
		y, err2 := strconv.ParseBool(b)
		return err1 == nil && err2 == nil && x == y
	}
	return false
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
	j, servers, err := w.job(env.Params, env.Target.Dir)
	if err != nil {
		return nil, err
	}
	if err := disk.Room(env.Target.Dir, j.LaidOut(), "the job's files"); err != nil {
		return nil, err
	}
	in := &instance{w: w, bin: bin, job: j, dir: env.CellDir, keepDir: env.ToolOutputDir}
	if prefill, _ := scenario.ParseBool(env.Params["prefill"]); prefill {
		if err := Prefill(ctx, bin, j, env.CellDir); err != nil {
			return nil, err
		}
	}
	for i := 0; i < servers; i++ {
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
