package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	_ "persistlab/backend/all" // every backend
	"persistlab/internal/leftover"
	"persistlab/internal/proc"
	"persistlab/param"
	"persistlab/report"
	"persistlab/results"
	"persistlab/runner"
	"persistlab/scenario"
	_ "persistlab/workload/all" // every workload
)

func cmdRun(ctx context.Context, args []string) error {
	f, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	c := &runCmd{f: f}
	if err := c.makePlans(); err != nil {
		return err
	}
	if f.dryRun {
		return writeDryRun(terminalSafe(os.Stdout), c.plan, c.besidePlan, f.scenario, f.o)
	}
	if err := checkPausePageOut(f.pausePageOut); err != nil {
		return err
	}
	release, err := c.claimOutputs()
	if err != nil {
		return err
	}
	defer release()
	if err := writePlan(terminalSafe(os.Stderr), c.plan, c.besidePlan, f.scenario, f.o); err != nil {
		return err
	}
	lock, err := c.lockWorkDir()
	if err != nil {
		return err
	}
	defer lock.Release()
	proc.NotifyStarts(lock.Record)
	defer proc.NotifyStarts(nil)
	ctx, caught, stop := catchSignals(ctx)
	defer stop()
	if f.pausePageOut {
		if err := c.pausePageOut(); err != nil {
			return err
		}
		defer restorePageOut(c.dir) // a second restore does nothing: this one is for a panic
	}
	c.progress, c.progressWidth = progressTo(os.Stderr)
	failed, crossed, runErr, exportErr, err := c.runAndJudge(ctx)
	if err != nil {
		return err
	}
	var restoreErr error
	if len(c.paused) > 0 {
		restoreErr = restorePageOut(c.dir)
	}
	c.leaveWorkDir(lock, failed > 0 || restoreErr != nil)
	return runExit(ctx, caught(), c.dir, failed, crossed, runErr, restoreErr, exportErr)
}

// runAndJudge runs the plan beside a --beside plan, if any, and then the plan itself, and counts
// the cells whose thresholds failed (both plans') and names the thresholds the plan crossed. err
// is a failure before the plan's first cell; runErr and exportErr come after cells were measured.
func (c *runCmd) runAndJudge(ctx context.Context) (failed int, crossed []string, runErr, exportErr, err error) {
	besideRes, err := c.runBeside(ctx)
	if err != nil {
		return 0, nil, nil, nil, err
	}
	if besideRes != nil {
		failed, _ = report.Verdict(besideRes)
	}
	res, runErr, exportErr := c.runPlan(ctx, besideRes)
	if res != nil {
		var failedHere int
		failedHere, crossed = report.Verdict(res)
		failed += failedHere
	}
	return failed, crossed, runErr, exportErr, nil
}

// runFlags are run's flags as given, and the scenario they name.
type runFlags struct {
	o                               scenario.Overrides
	scenario                        string // the one argument: a built-in's name or a YAML file
	backends, out, htmlOut, workDir string
	shard, shardBy, beside, fioJSON string
	profile                         string
	// workloadDir replaces the directory a scenario file's relative paths resolve against (advise
	// writes its scenarios apart from the user's app scenario they take the workload from).
	workloadDir              string
	sets, sweeps, thresholds listFlag
	maxErrorRate             float64
	force, keep, dryRun      bool
	pausePageOut             bool
	view                     func() (report.View, error)
	exports                  *exportFlags
}

// newRunFlags declares run's flags.
func newRunFlags() (*flag.FlagSet, *runFlags) {
	fs, f := newFlags("run"), &runFlags{}
	o := &f.o
	fs.StringVar(&f.backends, "backend", "", "comma-separated backends to run (replaces the scenario's list)")
	fs.StringVar(&o.VUs, "vus", "", "virtual users: a list 2,4,8 or a range 2..20/2 (shorthand for --sweep vus=...)")
	fs.Var(&f.thresholds, "threshold", `a criterion every row must meet, like k6's, e.g. "p95_ms < 200ms", "error_rate < 1%", "lost_acked == 0" (repeatable; added to the scenario's thresholds; a crossed one exits 4)`)
	fs.Var(&f.sets, "set", "fix a workload parameter, NAME=VALUE (repeatable), e.g. --set bs=1M")
	fs.Var(&f.sweeps, "sweep", "sweep a workload parameter, NAME=VALUES (repeatable), e.g. --sweep rw=read,randread")
	fs.StringVar(&o.Duration, "duration", "", "measured time per run, e.g. 120s")
	fs.StringVar(&o.Warmup, "warmup", "", "unmeasured load before each run, e.g. 2s")
	fs.IntVar(&o.Repeat, "repeat", 0, "runs per cell; rows show each metric's median over runs")
	fs.Float64Var(&o.Rate, "rate", 0, "switch to an open loop at this many requests/s")
	fs.StringVar(&o.CPUPerRequest, "cpu-per-request", "", "CPU work per request in the app besides SQLite's, e.g. 4.7ms (Rails-sized) or 0s")
	fs.IntVar(&o.Crashes, "crash", 0, "crash runs: lose the instance this many times per backend and VU level, and recover")
	fs.StringVar(&o.CrashAfter, "crash-after", "", "crash runs: kill at a random moment in this range of load, e.g. 1s..4s")
	fs.BoolVar(&o.Quick, "quick", false, "the scenario's short variant (for demos and smoke tests)")
	fs.BoolVar(&o.ShareBackend, "share-backend", false, "start each backend once per repeat and run its cells on it in order (later cells find earlier ones' cache)")
	fs.StringVar(&f.out, "out", "", "results file, rewritten as cells finish and at the end (an existing one only with --force; default: a new out/SCENARIO-TIME.json)")
	fs.BoolVar(&f.force, "force", false, "replace an existing results file, and the --html, --samples and --openmetrics files")
	fs.StringVar(&f.htmlOut, "html", "", "also write the results as a self-contained HTML page with charts to this file at the end (persistlab report FILE --html does it later)")
	f.view = viewFlags(fs)
	fs.Float64Var(&f.maxErrorRate, "max-error-rate", -1, "share of failed requests above which a row is marked and the run exits 4 (default: the scenario's, else 0.01)")
	fs.StringVar(&f.workDir, "workdir", "", "scratch directory for databases and logs (default: a new temporary one, removed after unless a cell failed)")
	fs.BoolVar(&f.keep, "keep", false, "keep the scratch directory (logs, databases) after the run")
	fs.StringVar(&f.shard, "shard", "", "run this machine's share I/N of the plan (I from 0, as a Kubernetes Indexed Job's JOB_COMPLETION_INDEX); persistlab merge joins the shards' files")
	fs.StringVar(&f.shardBy, "shard-by", scenario.ShardByPoint, "how --shard deals the plan out: point (every backend of a sweep point on one machine) or backend (every cell of a backend entry)")
	fs.StringVar(&f.beside, "beside", "", "first run this scenario too, with the same flags, and compare the two (e.g. cloudrun-sqlite beside cloudrun-sqlite-rails); its results go to OUT's name with .beside")
	f.exports = addExportFlags(fs)
	fs.StringVar(&f.fioJSON, "fio-json", "", "keep fio's own JSON report (json+) of every cell in this directory, as CELL.json named like the cell's work directory (cell-003-local-r1.json); each cell's facts.fio_json names its file")
	fs.BoolVar(&f.pausePageOut, "pause-host-pageout", false, "for a machine's owner: turn off this machine's running DAMON page-out policies (kdamonds with a pageout scheme) before the first cell and on again after the run (persistlab clean does it after a kill); recorded in the results; needs root. Never done without this flag")
	fs.StringVar(&f.profile, "profile", "", "a profile persistlab calibrate wrote: its measured figures replace the model's defaults for every backend entry that does not set the option itself (replaces the scenario's profile:)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (cells, backends, sweep, estimated length) and exit without running anything")
	return fs, f
}

// parseRunFlags reads run's arguments: the flags, checked against each other, and the scenario.
func parseRunFlags(args []string) (*runFlags, error) {
	fs, f := newRunFlags()
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if err := f.exports.check(); err != nil {
		return nil, err
	}
	if f.beside != "" && !f.exports.text() {
		return nil, &param.FieldError{Field: "--format", Value: f.exports.format, Allowed: "text with --beside (its comparison is a table of two runs): run report --format " + f.exports.format + " on each results file"}
	}
	if len(positional) != 1 {
		return nil, fmt.Errorf("want one scenario name or YAML file (built-ins: %s)", strings.Join(scenario.Builtins(), ", "))
	}
	f.scenario = positional[0]
	o := &f.o
	o.Set, o.Sweep, o.Thresholds = f.sets, f.sweeps, f.thresholds
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "repeat":
			o.RepeatSet = true
		case "rate":
			o.RateSet = true
		case "crash":
			o.CrashesSet = true
		case "max-error-rate":
			o.MaxErrorRate = &f.maxErrorRate
		}
	})
	if f.backends != "" {
		for _, b := range strings.Split(f.backends, ",") {
			o.Backends = append(o.Backends, strings.TrimSpace(b))
		}
	}
	return f, nil
}

// runCmd is one run command's state, as its steps fill it in.
type runCmd struct {
	f                *runFlags
	spec, besideSpec *scenario.Spec
	plan, besidePlan *scenario.Plan
	view             report.View
	// outPath and besideOut are the results files, locked; outputs the other files to write.
	outPath, besideOut string
	outputs            []output
	toolOutputDir      string // --fio-json's directory, absolute
	self, dir          string // the persistlab executable, and the run's work directory
	temporary          bool   // dir is a new temporary directory (no --workdir)
	progress           io.Writer
	progressWidth      int
	paused             []string // the page-out policies this run paused, restored after it
}

// makePlans reads the scenario, applies the flags and plans it (this machine's share with
// --shard), then the scenario run beside it: everything is checked before anything runs.
func (c *runCmd) makePlans() error {
	f := c.f
	spec, err := scenario.Load(f.scenario)
	if err != nil {
		return err
	}
	if f.workloadDir != "" {
		spec.Workload.Dir = f.workloadDir
	}
	if err := spec.Apply(f.o); err != nil {
		return err
	}
	if _, err := useProfile(spec, f.profile, terminalSafe(os.Stderr)); err != nil {
		return err
	}
	if f.o.Quick && spec.Quick.Derived {
		fmt.Fprintf(os.Stderr, "--quick: %s has no quick section: every sweep point runs once, for at most %s each\n", spec.Name, scenario.QuickDuration)
	}
	c.spec = spec
	if c.plan, err = scenario.NewPlan(spec, runner.Known()); err != nil {
		return err
	}
	if f.shard != "" {
		share, err := scenario.ParseShard(f.shard, f.shardBy)
		if err != nil {
			return err
		}
		if f.beside != "" {
			return &param.FieldError{Field: "--beside", Value: f.beside, Allowed: "no --beside with --shard: run the other scenario's shards and merge them apart"}
		}
		if c.plan, err = c.plan.Share(share); err != nil {
			return err
		}
	}
	if c.view, err = f.view(); err != nil {
		return err
	}
	return c.makeBesidePlan()
}

// makeBesidePlan reads, applies the flags to and plans the scenario run beside this one, whose
// cells must measure what this one's do.
func (c *runCmd) makeBesidePlan() error {
	beside := c.f.beside
	if beside == "" {
		return nil
	}
	spec, err := scenario.Load(beside)
	if err != nil {
		return fmt.Errorf("--beside: %w", err)
	}
	if err := spec.Apply(c.f.o); err != nil {
		return fmt.Errorf("--beside: %w", err)
	}
	if _, err := useProfile(spec, c.f.profile, terminalSafe(os.Stderr)); err != nil {
		return fmt.Errorf("--beside: %w", err)
	}
	c.besideSpec = spec
	if c.besidePlan, err = scenario.NewPlan(spec, runner.Known()); err != nil {
		return fmt.Errorf("--beside: %w", err)
	}
	if !report.Comparable(spec.Workload.Type, c.spec.Workload.Type) {
		return &param.FieldError{Field: "--beside", Value: beside, Allowed: "a scenario whose cells measure what " + c.spec.Name + "'s do (workload " + c.spec.Workload.Type + ", not " + spec.Workload.Type + ")"}
	}
	return nil
}

// claimOutputs checks and locks every file the run writes (results, the beside scenario's, the
// --html and export files, --fio-json's directory) before it starts; release unlocks them.
func (c *runCmd) claimOutputs() (release func(), err error) {
	f := c.f
	var unlocks []func()
	unlockAll := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	defer func() {
		if err != nil {
			unlockAll()
		}
	}()
	out := f.out
	if out == "" {
		name := c.spec.Name
		if f.shard != "" { // shards of one plan on one machine write apart
			name += "-shard-" + strings.ReplaceAll(f.shard, "/", "-of-")
		}
		out = defaultOut(name, time.Now())
	}
	if c.outPath, err = results.OutPath(out, f.force); err != nil {
		return nil, err
	}
	unlockOut, err := results.Lock(c.outPath)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", out, err)
	}
	unlocks = append(unlocks, unlockOut)
	if f.beside != "" {
		if c.besideOut, err = results.OutPath(strings.TrimSuffix(c.outPath, ".json")+".beside.json", f.force); err != nil {
			return nil, fmt.Errorf("--beside: %w", err)
		}
		unlockBeside, err := results.Lock(c.besideOut)
		if err != nil {
			return nil, fmt.Errorf("--beside %s: %w", c.besideOut, err)
		}
		unlocks = append(unlocks, unlockBeside)
	}
	return unlockAll, c.checkOtherOutputs()
}

// checkOtherOutputs checks the files besides the results: --html, the exports and --fio-json's
// directory.
func (c *runCmd) checkOtherOutputs() (err error) {
	f := c.f
	taken := map[string]string{"--out": c.outPath}
	if c.besideOut != "" {
		taken["--beside's results"] = c.besideOut
	}
	if c.outputs, err = checkOutputs(append([]output{{"--html", f.htmlOut, report.WriteHTML}}, f.exports.files()...), f.force, taken); err != nil {
		return err
	}
	if f.fioJSON != "" {
		if c.toolOutputDir, err = fioJSONDir(f.fioJSON, c.spec, f.force); err != nil {
			return err
		}
	}
	return nil
}

// lockWorkDir makes and locks the run's work directory, after warning of earlier runs' leftovers.
func (c *runCmd) lockWorkDir() (*leftover.Lock, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c.self = self
	if err := warnOfLeftovers(c.f.workDir); err != nil {
		return nil, err
	}
	lock, err := makeWorkDir(c.f.workDir, c.spec.Name, leftover.Run{PID: os.Getpid(), Out: c.outPath, Started: time.Now().UTC()})
	if err != nil {
		return nil, err
	}
	c.dir, c.temporary = lock.Dir(), c.f.workDir == ""
	return lock, nil
}

// catchSignals is ctx, cancelled by SIGINT or SIGTERM; caught says which came, and stop stops
// listening.
func catchSignals(parent context.Context) (ctx context.Context, caught func() os.Signal, stop func()) {
	// A reader that went away (run ... | head) must not kill the run before it cleans up: writes
	// to it fail instead, and the run goes on to its end. (Notify, not Ignore: an ignored signal
	// stays ignored in every program the run starts.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	var sig os.Signal
	go func() {
		if s, ok := <-signals; ok {
			sig = s
			cancel(fmt.Errorf("interrupted by %v", s))
		}
	}()
	return ctx, func() os.Signal { return sig }, func() { signal.Stop(signals); cancel(nil) }
}

// progressTo is where the progress line goes, and the terminal's width: a terminal's standard
// error, outside CI; nil elsewhere.
func progressTo(f *os.File) (io.Writer, int) {
	if isTerminal(f) && os.Getenv("CI") == "" {
		return f, terminalWidth(f)
	}
	return nil, 0
}

// options are the runner's options for a plan writing out, working in dir.
func (c *runCmd) options(out, dir, toolOutputDir string) runner.Options {
	return runner.Options{Out: out, WorkDir: dir, Self: c.self, Progress: c.progress, ProgressWidth: c.progressWidth, Command: os.Args, Keep: c.f.keep, Derive: report.Summarize, ToolOutputDir: toolOutputDir,
		PausedPageOut: c.paused}
}

// runBeside runs the scenario beside this one first, in a directory of its own inside the run's;
// its failure is said and the run goes on.
func (c *runCmd) runBeside(ctx context.Context) (*results.Results, error) {
	if c.besideSpec == nil {
		return nil, nil
	}
	besideDir := filepath.Join(c.dir, "beside") // inside the run's own directory: its cells apart
	if err := os.Mkdir(besideDir, 0o700); err != nil {
		return nil, err
	}
	besideTools := ""
	if c.toolOutputDir != "" {
		besideTools = filepath.Join(c.toolOutputDir, "beside") // its cells' names are the run's own
		if err := os.MkdirAll(besideTools, 0o755); err != nil {
			return nil, fmt.Errorf("--fio-json: %w", err)
		}
	}
	res, err := runner.RunPlan(ctx, c.besidePlan, c.options(c.besideOut, besideDir, besideTools))
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(terminalSafe(os.Stderr), "persistlab run: --beside %s: %v\n", c.f.beside, err)
	}
	return res, nil
}

// runPlan runs the plan, unless the run was interrupted beside it (then what the beside scenario
// measured is shown), and shows and writes what it measured.
func (c *runCmd) runPlan(ctx context.Context, besideRes *results.Results) (res *results.Results, runErr, exportErr error) {
	runErr = context.Cause(ctx)
	if ctx.Err() == nil {
		res, runErr = runner.RunPlan(ctx, c.plan, c.options(c.outPath, c.dir, c.toolOutputDir))
	} else if besideRes != nil { // interrupted beside: what it measured is all there is
		report.WriteView(terminalSafe(os.Stdout), besideRes, c.view)
		fmt.Printf("\nresults: %s\n", c.besideOut)
	}
	if res != nil {
		exportErr = c.present(res, besideRes, runErr)
	}
	return res, runErr, exportErr
}

// present writes what the run measured in the --format asked for and to the other files, the
// comparison with the scenario run beside it, and where the results are.
func (c *runCmd) present(res, besideRes *results.Results, runErr error) error {
	exports := c.f.exports
	var exportErr error
	if err := exports.writeFormat(terminalSafe(os.Stdout), res, c.view); err != nil {
		exportErr = fmt.Errorf("--format %s: %w", exports.format, err)
	}
	if err := writeOutputs(c.outputs, res, exports.said()); err != nil && exportErr == nil {
		exportErr = err
	}
	var saveErr *runner.SaveError
	if besideRes != nil {
		fmt.Printf("\n%s beside %s\n", c.spec.Name, c.besideSpec.Name)
		report.WriteComparison(terminalSafe(os.Stdout), c.besideOut, c.outPath, besideRes, res)
	}
	if _, err := os.Stat(c.outPath); err == nil && !errors.As(runErr, &saveErr) {
		fmt.Fprintf(exports.said(), "\nresults: %s\n", c.outPath)
		if besideRes != nil {
			fmt.Printf("beside: %s\n", c.besideOut)
		}
		if c.view == report.ViewBrief {
			fmt.Fprintf(exports.said(), "tables: persistlab report %s (--detail for every analysis)\n", report.ShellWord(c.outPath))
		}
	}
	return exportErr
}

// leaveWorkDir removes the run's temporary work directory, or says where it is kept: with --keep
// or --workdir, after a failed cell or page-out policy not restored, or while a mount or loop device is still attached to it (a
// backend that failed to stop), which keeps the directory and its lock for clean: RemoveAll must
// never walk into it.
func (c *runCmd) leaveWorkDir(lock *leftover.Lock, failed bool) {
	keepDir := c.f.keep || !c.temporary || failed
	if keepDir || lock.Release() {
		fmt.Fprintf(c.f.exports.said(), "logs and databases: %s\n", c.dir)
	} else {
		os.RemoveAll(c.dir)
	}
}

// runExit is run's error and exit status: an interruption, the run's error, a page-out policy not
// restored, an export's, failed cells (their logs in dir), crossed thresholds, in that order.
func runExit(ctx context.Context, caught os.Signal, dir string, failed int, crossed []string, runErr, restoreErr, exportErr error) error {
	switch {
	case ctx.Err() != nil:
		code := 130
		if caught == syscall.SIGTERM {
			code = 143
		}
		return &exitError{code: code, err: runErr}
	case runErr != nil:
		return runErr
	case restoreErr != nil:
		return restoreErr
	case exportErr != nil:
		return exportErr
	case failed > 0:
		return &exitError{code: exitCellsFailed, err: fmt.Errorf("%d cell(s) failed; their logs are in %s", failed, dir)}
	case len(crossed) > 0:
		return &exitError{code: exitThreshold, err: fmt.Errorf("thresholds crossed:\n  %s", strings.Join(crossed, "\n  "))}
	}
	return nil
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
