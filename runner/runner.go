// Package runner executes a scenario's plan: for every cell it starts the backend and the system
// under test, drives the workload, collects what the backend counted, stops everything, and saves
// the results file before moving on, so an interrupted run keeps every finished cell.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"persistlab/backend"
	_ "persistlab/backend/gcsfuse"    // registers itself
	_ "persistlab/backend/litestream" // registers itself
	_ "persistlab/backend/local"      // registers itself
	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/report"
	"persistlab/scenario"
	"persistlab/workload/counter"
)

// Known is what this build can run, for scenario validation.
func Known() scenario.Known {
	return scenario.Known{Workloads: []string{"counter"}, Backends: backend.Names()}
}

// Options of one run.
type Options struct {
	Out      string    // results.json path
	WorkDir  string    // scratch space; each cell gets a fresh subdirectory
	Self     string    // the persistlab executable, run as the system under test
	Progress io.Writer // nil: quiet
	Command  []string  // as typed, for the results file
}

// Run executes spec. It returns the results (also written to opts.Out) and the first error that
// stopped the run; cells that fail on their own are recorded and the run goes on.
func Run(ctx context.Context, spec *scenario.Spec, opts Options) (*report.Results, error) {
	if err := spec.Validate(Known()); err != nil {
		return nil, err
	}
	res := &report.Results{
		Schema: report.Schema, Status: report.StatusRunning, Command: opts.Command,
		Started: time.Now().UTC(), Scenario: spec, Versions: sysinfo.Versions(),
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	res.Machine = sysinfo.Describe(opts.WorkDir)
	if cpus := spec.Workload.App.CPUs; cpus > 0 {
		app, rest, err := proc.SplitCPUs(cpus)
		if err != nil {
			return nil, &scenario.FieldError{Scenario: spec.Name, Field: "workload.app.cpus", Value: strconv.Itoa(cpus), Allowed: err.Error()}
		}
		res.Placement = report.Placement{AppCPUs: app, DriverCPUs: rest}
		if len(rest) > 0 {
			if err := proc.PinSelf(rest); err != nil {
				return nil, err
			}
		}
	}
	if err := res.Save(opts.Out); err != nil {
		return nil, err
	}

	cells := spec.Plan()
	progress := newProgress(opts.Progress, len(cells))
	var runErr error
	var killAfter map[int]time.Duration
	if spec.Crash != nil {
		killAfter = crashDraws(spec, cells)
	}
	for _, cell := range cells {
		if ctx.Err() != nil {
			break
		}
		progress.start(cell)
		if spec.Crash != nil {
			c := runCrashCell(ctx, spec, cell, killAfter[cell.Index], res, opts)
			if ctx.Err() != nil && c.Failure != "" {
				break
			}
			res.Crashes = append(res.Crashes, c)
		} else {
			run := runCell
			if spec.Workload.Instances > 1 {
				run = runInstancesCell
			}
			c := run(ctx, spec, cell, res, opts)
			if ctx.Err() != nil && c.Failure != "" {
				break // interrupted mid-cell: what it measured is partial, so it is not kept
			}
			res.Cells = append(res.Cells, c)
		}
		if err := res.Save(opts.Out); err != nil {
			runErr = err
			break
		}
	}
	progress.done()
	res.Finished = time.Now().UTC()
	switch {
	case ctx.Err() != nil:
		res.Status, res.Error = report.StatusInterrupted, context.Cause(ctx).Error()
		runErr = errors.Join(runErr, fmt.Errorf("interrupted after %d of %d cells", len(res.Cells)+len(res.Crashes), len(cells)))
	case runErr != nil:
		res.Status, res.Error = report.StatusFailed, runErr.Error()
	default:
		res.Status = report.StatusComplete
	}
	if err := res.Save(opts.Out); err != nil {
		runErr = errors.Join(runErr, err)
	}
	return res, runErr
}

// runCell measures one cell; whatever fails is recorded in the cell, and everything it started is
// stopped before it returns.
func runCell(ctx context.Context, spec *scenario.Spec, cell scenario.Cell, res *report.Results, opts Options) (out report.Cell) {
	out = report.Cell{Cell: cell, Started: time.Now().UTC()}
	fail := func(err error) report.Cell { out.Failure = err.Error(); return out }

	be, cellDir, err := newCellBackend(spec, cell, res, opts)
	if err != nil {
		return fail(err)
	}
	defer stopCellBackend(ctx, be, &out.Failure)
	target, err := be.Start(ctx)
	if err != nil {
		return fail(err)
	}
	res.Machine.FileSystems[target.Dir] = sysinfo.FileSystemOf(target.Dir)

	app, err := StartApp(opts.Self, filepath.Join(target.Dir, backend.DBFile), filepath.Join(cellDir, "app.log"), spec.Workload.App)
	if err != nil {
		return fail(err)
	}
	defer withCleanupDeadline(ctx, app.Stop)

	drive := counter.Config{
		URL: app.URL + spec.Workload.Path, Method: spec.Workload.Method, Mode: spec.Workload.Mode,
		VUs: cell.VUs, Rate: spec.Workload.Rate, Timeout: time.Duration(spec.Workload.Timeout),
	}
	if spec.Warmup > 0 {
		warm := drive
		warm.Duration = time.Duration(spec.Warmup)
		if _, err := counter.Run(ctx, warm); err != nil {
			return fail(err)
		}
	}
	before, err := app.Count()
	if err != nil {
		return fail(fmt.Errorf("read count before run: %w", err))
	}
	statsBefore := be.Stats()
	cpuBefore, _ := proc.CPUTime(app.Child.Pid())
	drive.Duration = time.Duration(spec.Duration)
	r, err := counter.Run(ctx, drive)
	if err != nil {
		return fail(err)
	}
	cpuAfter, _ := proc.CPUTime(app.Child.Pid())
	if ctx.Err() != nil {
		return fail(context.Cause(ctx))
	}
	after, err := app.Count()
	if err != nil {
		return fail(fmt.Errorf("read count after run: %w", err))
	}

	out.ElapsedS = r.Elapsed.Seconds()
	out.Summary = r.Latency.Summarize(r.Elapsed)
	if out.Histogram, err = r.Latency.Encode(); err != nil {
		return fail(err)
	}
	if spec.Workload.Mode == counter.ModeOpen {
		svc := r.Service.Summarize(r.Elapsed)
		out.Service = &svc
	}
	out.OK, out.Errors, out.Statuses = r.OK, r.Errors(), r.Statuses
	out.TransportErrors, out.ErrorSamples, out.MaxAcked = r.TransportErrors, r.ErrorSamples, r.MaxAcked
	out.CountDelta = after - before
	out.AppCPUSeconds = (cpuAfter - cpuBefore).Seconds()
	out.AppCPUUtil = appCPUUtil(out.AppCPUSeconds, r.Elapsed, res)
	out.BackendStats = statsDelta(statsBefore, be.Stats())
	if lr, ok := be.(backend.LagReporter); ok && !r.LastAck.IsZero() {
		if lag, err := lr.ReplicationLag(ctx, r.LastAck); err == nil {
			out.ReplicationLagMs = float64(lag) / float64(time.Millisecond)
		} else {
			out.ErrorSamples = append(out.ErrorSamples, "replication lag: "+err.Error())
		}
	}
	return out
}

// appCPUUtil is CPU seconds over elapsed as a share of the CPUs the app was pinned to (all CPUs
// when it was not pinned).
func appCPUUtil(cpuSeconds float64, elapsed time.Duration, res *report.Results) float64 {
	cpus := len(res.Placement.AppCPUs)
	if cpus == 0 {
		cpus = res.Machine.Cores
	}
	if elapsed <= 0 || cpus == 0 {
		return 0
	}
	return cpuSeconds / elapsed.Seconds() / float64(cpus)
}

// statsDelta is what the backend counted during the measured run.
func statsDelta(before, after backend.Stats) map[string]float64 {
	if len(after) == 0 {
		return nil
	}
	out := make(map[string]float64, len(after))
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

// withCleanupDeadline runs stop with a context that outlives a cancelled ctx (Ctrl-C must still
// unmount and stop processes) but not forever.
func withCleanupDeadline(ctx context.Context, stop func(context.Context) error) error {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return stop(c)
}

// App is a running counter app.
type App struct {
	Child *proc.Child
	URL   string // http://127.0.0.1:PORT
}

// StartApp prepares the database as a Rails 8 container's entrypoint does (`bin/rails db:prepare`:
// create, migrate, close), then runs `persistlab app counter` on it, bound to a free loopback port.
func StartApp(self, dbPath, logPath string, spec scenario.AppSpec) (*App, error) {
	prepare := exec.Command(self, "app", "counter", "--db", dbPath, "--prepare")
	if out, err := prepare.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("prepare %s: %v: %s", dbPath, err, out)
	}
	args := []string{self, "app", "counter", "--db", dbPath, "--listen", "127.0.0.1:0"}
	if spec.CPUs > 0 {
		args = append(args, "--cpus", strconv.Itoa(spec.CPUs))
	}
	if spec.CPUPerRequest > 0 {
		args = append(args, "--cpu-per-request", time.Duration(spec.CPUPerRequest).String())
	}
	if spec.MaxConns > 0 {
		args = append(args, "--max-conns", strconv.Itoa(spec.MaxConns))
	}
	for _, p := range spec.Pragmas {
		args = append(args, "--pragma", p)
	}
	child, line, err := proc.StartAndWaitFor("counter app", logPath, os.Environ(), ListeningMarker, 30*time.Second, args...)
	if err != nil {
		return nil, err
	}
	return &App{Child: child, URL: line[len(ListeningMarker):]}, nil
}

// ListeningMarker starts the line the app prints once it accepts requests; the URL follows.
const ListeningMarker = "persistlab app listening on "

// Count reads the counter through the app (GET /count).
func (a *App) Count() (int64, error) {
	resp, err := http.Get(a.URL + "/count")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var v struct {
		Count *int64 `json:"count"`
	}
	if err := decodeJSON(resp, &v); err != nil {
		return 0, err
	}
	if v.Count == nil {
		return 0, errors.New(`GET /count: no "count" in the answer`)
	}
	return *v.Count, nil
}

// Stop stops the app by its process id.
func (a *App) Stop(ctx context.Context) error { return a.Child.Stop(ctx) }

// stopCellBackend stops a cell's backend, recording a failure to stop unless the cell already failed.
func stopCellBackend(ctx context.Context, be backend.Backend, failure *string) {
	if err := withCleanupDeadline(ctx, be.Stop); err != nil && *failure == "" {
		*failure = "backend stop: " + err.Error()
	}
}

// newCellBackend makes the backend of a cell in a fresh directory of its own.
func newCellBackend(spec *scenario.Spec, cell scenario.Cell, res *report.Results, opts Options) (backend.Backend, string, error) {
	entry, ok := spec.BackendByID(cell.Backend)
	if !ok {
		return nil, "", fmt.Errorf("cell %d names backend %q, which the scenario lacks", cell.Index, cell.Backend)
	}
	cellDir := filepath.Join(opts.WorkDir, fmt.Sprintf("cell-%03d-%s-vus%d-r%d", cell.Index, cell.Backend, cell.VUs, cell.Repeat))
	if err := os.MkdirAll(cellDir, 0o755); err != nil {
		return nil, "", err
	}
	be, err := backend.New(entry.Name, backend.Env{WorkDir: cellDir, CPUs: res.Placement.AppCPUs, Options: entry.Options})
	if err != nil {
		return nil, "", err
	}
	for k, v := range be.Versions() {
		res.Versions[k] = v
	}
	return be, cellDir, nil
}
