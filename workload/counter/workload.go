// Package counter is seed 000's workload: the Rails-style counter app (persistlab app counter) on
// SQLite in the backend's directory, or on the MySQL server the backend names (Cloud SQL), under
// persistlab's HTTP load (workload/httpload), with the count it holds read before and after the
// load.
package counter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	appcounter "persistlab/app/counter"
	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
	"persistlab/workload/httpload"
)

// Name is the workload's name in scenarios.
const Name = "counter"

// DBFile is the database the app keeps in the backend's directory.
const DBFile = "counter.db"

// Params are the counter's parameters: the load (httpload's, sending seed 000's request) and the
// app (seed 000's Rails app).
var Params = []param.Param{
	httpload.Param("vus"), httpload.Param("mode"), httpload.Param("rate"),
	seedRequest("method", "POST"), seedRequest("path", "/count_up"),
	httpload.Param("timeout"),
	{Name: "cpu_per_request", Kind: param.KindDuration, Default: "0s", Min: 0, Max: 1, Help: "the app's own CPU per request besides SQLite's (a framework's cost)"},
	{Name: "max_conns", Kind: param.KindInt, Default: "0", Min: 0, Max: 10000, Help: "SQLite connection pool (0: Rails' 5)"},
	{Name: "threads", Kind: param.KindInt, Default: "0", Min: 0, Max: 10000, Help: "requests the app serves at once, the rest queued as in Puma (Rails 8: 3; 0: no limit)"},
	httpload.Param("network_rtt"),
	{Name: "gvl", Kind: param.KindBool, Default: "false", Help: "one process-wide lock over each request's CPU work and SQLite statement, as Ruby's GVL"},
}

// seedRequest is the load's parameter name with seed 000's value for its default.
func seedRequest(name, seed string) param.Param {
	p := httpload.Param(name)
	p.Default, p.Help = seed, p.Help+" (seed 000: "+seed+")"
	return p
}

// Metrics are what a counter cell reports: the load's, and what the counter's database says,
// lost_updates (after errors) and count_delta (after count).
var Metrics = withDatabaseFigures(httpload.Metrics)

func withDatabaseFigures(load []workload.Metric) []workload.Metric {
	var out []workload.Metric
	for _, m := range load {
		out = append(out, m)
		switch m.Name {
		case "errors":
			out = append(out, workload.Metric{Name: "lost_updates", Unit: "count", Help: "200 answers the counter does not reflect"})
		case "count":
			out = append(out, workload.Metric{Name: "count_delta", Unit: "count", Help: "what the counter grew by over the run, read from the database"})
		}
	}
	return out
}

func init() {
	workload.Register(workload.Info{
		Name:        Name,
		Description: "seed 000's Rails-style counter app on SQLite (or on the MySQL server a backend names: cloudsql, mysql) under k6-style HTTP load",
		Params:      Params,
		Metrics:     Metrics,
		Timed:       true,
		Needs:       backend.Needs{SQLite: DBFile, MySQL: true},
		New:         New,
		Sections:    map[string]string{"pragmas": "a list of SQLite pragmas, like [synchronous=FULL, busy_timeout=5000]"},
	})
}

// Workload is the counter app and its load driver, configured.
type Workload struct {
	pragmas []string
}

var (
	_ workload.Workload        = (*Workload)(nil)
	_ workload.Inspector       = (*Workload)(nil)
	_ workload.ServerInspector = (*Workload)(nil)
	_ workload.Acknowledged    = (*instance)(nil)
	_ workload.Shared          = (*instance)(nil)
	_ workload.Sharer          = (*Workload)(nil)
	_ workload.Merger          = (*Workload)(nil)
)

// New reads the counter's one section: pragmas, SQLite pragmas over Rails 8's defaults.
func New(spec scenario.Workload) (workload.Workload, error) {
	w := &Workload{}
	for name, section := range spec.Sections {
		if name != "pragmas" {
			return nil, &param.FieldError{Field: "workload." + name, Value: fmt.Sprint(section), Allowed: "pragmas (a list of name=value), or a parameter: " + paramNames()}
		}
		list, ok := section.([]any)
		if !ok {
			return nil, &param.FieldError{Field: "workload.pragmas", Value: fmt.Sprint(section), Allowed: "a list of name=value, e.g. [journal_mode=DELETE]"}
		}
		for i, item := range list {
			p := fmt.Sprint(item)
			if _, err := appcounter.ParsePragma(p); err != nil { // the app's own rule, before any cell
				_, allowed, _ := strings.Cut(err.Error(), ": want ")
				return nil, &param.FieldError{Field: fmt.Sprintf("workload.pragmas[%d]", i), Value: p, Allowed: allowed}
			}
			w.pragmas = append(w.pragmas, p)
		}
	}
	return w, nil
}

func paramNames() string {
	var names []string
	for _, p := range Params {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// settings are one cell's parameters, read.
type settings struct {
	httpload.Load
	CPUPerRequest time.Duration `param:"cpu_per_request"`
	MaxConns      int           `param:"max_conns"`
	Threads       int           `param:"threads"`
	GVL           bool          `param:"gvl"`
}

func read(p workload.Params) (settings, error) {
	var s settings
	if err := param.Decode(Params, p, &s); err != nil {
		return s, param.Under("workload.", err)
	}
	if err := httpload.CheckRate(s.Mode, s.Rate, p["rate"]); err != nil {
		return s, err
	}
	if !strings.HasPrefix(s.Path, "/") {
		return s, &param.FieldError{Field: "workload.path", Value: s.Path, Allowed: "a path starting with /"}
	}
	return s, nil
}

// CheckShare implements workload.Sharer: every instance drives at least one VU.
func (w *Workload) CheckShare(p workload.Params, n int) error {
	s, err := read(p)
	if err != nil {
		return err
	}
	return httpload.CheckVUsPerInstance(s.VUs, p["vus"], n)
}

// MergeShares implements workload.Merger: the highest count any instance acknowledged, not their
// sum, and the app's CPU share over the whole cell.
func (w *Workload) MergeShares(merged *workload.Result, parts []*workload.Result) {
	httpload.JoinInstanceFigures(merged, parts)
}

// Check implements workload.Workload.
func (w *Workload) Check(_ context.Context, p workload.Params) error {
	_, err := read(p)
	return err
}

// Versions implements workload.Workload: the app is this persistlab, with SQLite's version.
func (w *Workload) Versions() map[string]string { return nil }

// Inspect implements workload.Inspector: the count and integrity_check of the database in dir
// (or of file), read-only, before anything writes to it.
func (w *Workload) Inspect(dir, file string) workload.Survivor {
	if file == "" {
		file = filepath.Join(dir, DBFile)
	}
	in := appcounter.Inspect(file)
	return workload.Survivor{Exists: in.Exists, Count: in.Count, Counted: true, Integrity: in.Integrity} // no database counts 0
}

// InspectServer implements workload.ServerInspector: the count and CHECK TABLE of the counter's
// database on the server at dsn, before anything writes to it.
func (w *Workload) InspectServer(dsn string) workload.Survivor {
	in := appcounter.InspectMySQL(dsn)
	return workload.Survivor{Exists: in.Exists, Count: in.Count, Counted: true, Integrity: in.Integrity}
}

// Start prepares the database as a Rails 8 container's entrypoint does (`bin/rails db:prepare`:
// create, migrate, close), then runs `persistlab app counter` on it, bound to a free loopback port.
func (w *Workload) Start(ctx context.Context, env workload.Env) (workload.Instance, error) {
	s, err := read(env.Params)
	if err != nil {
		return nil, err
	}
	db := filepath.Join(env.Target.Dir, DBFile)
	where, environ := []string{"--db", db}, os.Environ()
	if env.Target.DSN != "" { // on the backend's server: the DSN in the environment, out of the process list
		if len(w.pragmas) > 0 {
			return nil, &param.FieldError{Field: "workload.pragmas", Value: strings.Join(w.pragmas, ", "), Allowed: "none on a MySQL server (pragmas are SQLite's)"}
		}
		db = "the counter's database on the server"
		where, environ = []string{"--mysql"}, append(environ, appcounter.DSNEnv+"="+env.Target.DSN)
	}
	// In an emulated instance (Target.Wrap), the app and its preparation run there, in a cgroup
	// of their own: whatever they start is stopped with them.
	group, noGroup := httpload.NewAppGroup(env)
	inInstance := func(args ...string) []string { return slices.Concat(env.Target.Wrap, group.Wrap(), args) }
	log, tag := httpload.AppLog(env.CellDir)
	if err := prepare(ctx, inInstance(slices.Concat([]string{env.Self, "app", "counter"}, where, []string{"--prepare"})...), environ, filepath.Join(env.CellDir, "prepare"+tag+".log")); err != nil {
		group.Close(cgroup.GroupWait)
		return nil, fmt.Errorf("prepare %s: %w", db, err)
	}
	args := slices.Concat([]string{env.Self, "app", "counter"}, where, []string{"--listen", "127.0.0.1:0"})
	if len(env.CPUs) > 0 { // the runner's placement: the app takes the same last CPUs
		args = append(args, "--cpus", strconv.Itoa(len(env.CPUs)))
	}
	if s.CPUPerRequest > 0 {
		args = append(args, "--cpu-per-request", s.CPUPerRequest.String())
	}
	if s.MaxConns > 0 {
		args = append(args, "--max-conns", strconv.Itoa(s.MaxConns))
	}
	if s.Threads > 0 {
		args = append(args, "--threads", strconv.Itoa(s.Threads))
	}
	if s.GVL {
		args = append(args, "--gvl")
	}
	for _, p := range w.pragmas {
		args = append(args, "--pragma", p)
	}
	child, line, err := proc.StartAndWaitFor("counter app", log, environ, appcounter.ListeningMarker, 30*time.Second, inInstance(args...)...)
	if err != nil {
		group.Close(cgroup.GroupWait)
		return nil, err
	}
	return &instance{s: s, child: child, group: group, noGroup: noGroup, url: line[len(appcounter.ListeningMarker):], cpus: len(env.CPUs)}, nil
}

// prepareTimeout bounds the database's preparation: a backend that stops answering must not
// hold the start forever.
var prepareTimeout = 10 * time.Minute

// prepare runs the preparation's command line args, its output appended to logPath, for at most
// prepareTimeout: then it is killed with its whole process group.
func prepare(ctx context.Context, args, environ []string, logPath string) error {
	bounded, cancel := context.WithTimeout(ctx, prepareTimeout)
	defer cancel()
	cmd := proc.Command(bounded, args[0], args[1:]...)
	cmd.Env = environ
	err := proc.RunLogged(cmd, logPath, proc.MaxOutputLines)
	if err != nil && ctx.Err() == nil && bounded.Err() != nil {
		return fmt.Errorf("it did not end within %v and was killed with what it started; the end of %s:\n%s", prepareTimeout, logPath, proc.OutputOf(err))
	}
	return err
}

// instance is a running counter app.
type instance struct {
	s     settings
	child *proc.Child
	url   string // http://127.0.0.1:PORT
	cpus  int    // the app's pinned CPUs, 0 if not pinned
	// group holds the app and all it starts; nil where no cgroup could be made (noGroup says why).
	group   *cgroup.Group
	noGroup string
}

func (in *instance) config(d time.Duration, share workload.Share) httpload.Config {
	vus, rate := httpload.Split(in.s.VUs, in.s.Rate, share)
	return httpload.Config{URL: in.url + in.s.Path, Method: in.s.Method, Mode: in.s.Mode, VUs: vus, Rate: rate,
		Duration: d, Timeout: in.s.Timeout, NetworkRTT: in.s.NetworkRTT}
}

// Drive runs the load for d and reads how much the counter grew meanwhile.
func (in *instance) Drive(ctx context.Context, d time.Duration) (*workload.Result, error) {
	before, err := in.Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("read count before run: %w", err)
	}
	cpuBefore, _ := proc.CPUTime(in.child.Pid())
	r, err := httpload.Run(ctx, in.config(d, workload.Share{}))
	if err != nil {
		return nil, err
	}
	cpuAfter, _ := proc.CPUTime(in.child.Pid())
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	after, err := in.Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("read count after run: %w", err)
	}
	out := in.result(r)
	out.Metrics["count_delta"] = float64(after - before)
	out.Metrics["lost_updates"] = float64(max(0, r.OK-(after-before)))
	out.Metrics["app_cpu_s"] = (cpuAfter - cpuBefore).Seconds()
	out.Metrics["app_cpu_util"] = httpload.CPUUtil(cpuAfter-cpuBefore, r.Elapsed, in.cpus)
	httpload.AddGroupFact(out, in.noGroup)
	return out, nil
}

// DriveAcked implements workload.Acknowledged: load with every acknowledgement recorded, until d
// passes or ctx ends (a crash run's kill ends it).
func (in *instance) DriveAcked(ctx context.Context, d time.Duration) (*workload.Result, *measure.AckLog, error) {
	c := in.config(d, workload.Share{})
	c.RecordAcks = true
	r, err := httpload.Run(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	out := in.result(r)
	httpload.AddGroupFact(out, in.noGroup)
	return out, measure.NewAckLog(r.Acks), nil
}

// DriveShare implements workload.Shared: this instance's share of the VUs and of the rate.
func (in *instance) DriveShare(ctx context.Context, d time.Duration, share workload.Share) (*workload.Result, error) {
	cpuBefore, _ := proc.CPUTime(in.child.Pid())
	r, err := httpload.Run(ctx, in.config(d, share))
	if err != nil {
		return nil, err
	}
	cpuAfter, _ := proc.CPUTime(in.child.Pid())
	out := in.result(r)
	out.Metrics["app_cpu_s"] = (cpuAfter - cpuBefore).Seconds()
	out.Metrics["app_cpu_util"] = httpload.CPUUtil(cpuAfter-cpuBefore, r.Elapsed, in.cpus)
	httpload.AddGroupFact(out, in.noGroup)
	return out, nil
}

// result turns the driver's measurements into a workload result.
func (in *instance) result(r *httpload.Result) *workload.Result {
	return httpload.ResultOf(r, in.s.Mode == httpload.ModeOpen)
}

// Kill implements workload.Acknowledged: SIGKILL to every process of the app, without waiting (a
// process blocked in a FUSE call cannot exit until the daemon is gone).
func (in *instance) Kill() {
	in.group.Kill()
	in.child.SignalKill()
}

// Exited implements workload.Acknowledged.
func (in *instance) Exited() <-chan struct{} { return in.child.Done() }

// Count reads the counter through the app (GET /count).
func (in *instance) Count(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.url+"/count", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /count: HTTP %d: %.200s", resp.StatusCode, body)
	}
	var v struct {
		Count *int64 `json:"count"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return 0, fmt.Errorf("GET /count: %w", err)
	}
	if v.Count == nil {
		return 0, errors.New(`GET /count: no "count" in the answer`)
	}
	return *v.Count, nil
}

// Stop stops the app by its process id (SIGTERM, then SIGKILL): it closes its database, as Cloud
// Run's SIGTERM lets it; then whatever is left in its cgroup (SIGKILL), and removes the cgroup.
// One that does not empty is left for clean, a *cgroup.StuckError.
func (in *instance) Stop(ctx context.Context) error {
	return errors.Join(in.child.Stop(ctx), in.group.Close(cgroup.GroupWait))
}
