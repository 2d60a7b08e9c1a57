package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	_ "persistlab/backend/all" // every backend
	"persistlab/internal/damon"
	"persistlab/internal/leftover"
	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/report"
	"persistlab/results"
	"persistlab/runner"
	"persistlab/scenario"
	_ "persistlab/workload/all" // every workload
)

func cmdRun(ctx context.Context, args []string) error {
	fs := newFlags("run")
	var o scenario.Overrides
	backends := fs.String("backend", "", "comma-separated backends to run (replaces the scenario's list)")
	fs.StringVar(&o.VUs, "vus", "", "virtual users: a list 2,4,8 or a range 2..20/2 (shorthand for --sweep vus=...)")
	var sets, sweeps, thresholds listFlag
	fs.Var(&thresholds, "threshold", `a criterion every row must meet, like k6's, e.g. "p95_ms < 200ms", "error_rate < 1%", "lost_acked == 0" (repeatable; added to the scenario's thresholds; a crossed one exits 4)`)
	fs.Var(&sets, "set", "fix a workload parameter, NAME=VALUE (repeatable), e.g. --set bs=1M")
	fs.Var(&sweeps, "sweep", "sweep a workload parameter, NAME=VALUES (repeatable), e.g. --sweep rw=read,randread")
	fs.StringVar(&o.Duration, "duration", "", "measured time per run, e.g. 120s")
	fs.StringVar(&o.Warmup, "warmup", "", "unmeasured load before each run, e.g. 2s")
	fs.IntVar(&o.Repeat, "repeat", 0, "runs per cell; rows show each metric's median over runs")
	fs.Float64Var(&o.Rate, "rate", 0, "switch to an open loop at this many requests/s")
	fs.StringVar(&o.CPUPerRequest, "cpu-per-request", "", "CPU work per request in the app besides SQLite's, e.g. 4.7ms (Rails-sized) or 0s")
	fs.IntVar(&o.Crashes, "crash", 0, "crash runs: lose the instance this many times per backend and VU level, and recover")
	fs.StringVar(&o.CrashAfter, "crash-after", "", "crash runs: kill at a random moment in this range of load, e.g. 1s..4s")
	fs.BoolVar(&o.Quick, "quick", false, "the scenario's short variant (for demos and smoke tests)")
	fs.BoolVar(&o.ShareBackend, "share-backend", false, "start each backend once per repeat and run its cells on it in order (later cells find earlier ones' cache)")
	out := fs.String("out", "", "results file, rewritten as cells finish and at the end (an existing one only with --force; default: a new out/SCENARIO-TIME.json)")
	force := fs.Bool("force", false, "replace an existing results file, and the --html, --samples and --openmetrics files")
	htmlOut := fs.String("html", "", "also write the results as a self-contained HTML page with charts to this file at the end (persistlab report FILE --html does it later)")
	view := viewFlags(fs)
	maxErrorRate := fs.Float64("max-error-rate", -1, "share of failed requests above which a row is marked and the run exits 4 (default: the scenario's, else 0.01)")
	workDir := fs.String("workdir", "", "scratch directory for databases and logs (default: a new temporary one, removed after unless a cell failed)")
	keep := fs.Bool("keep", false, "keep the scratch directory (logs, databases) after the run")
	shardFlag := fs.String("shard", "", "run this machine's share I/N of the plan (I from 0, as a Kubernetes Indexed Job's JOB_COMPLETION_INDEX); persistlab merge joins the shards' files")
	shardBy := fs.String("shard-by", scenario.ShardByPoint, "how --shard deals the plan out: point (every backend of a sweep point on one machine) or backend (every cell of a backend entry)")
	beside := fs.String("beside", "", "first run this scenario too, with the same flags, and compare the two (e.g. cloudrun-sqlite beside cloudrun-sqlite-rails); its results go to OUT's name with .beside")
	exports := addExportFlags(fs)
	fioJSON := fs.String("fio-json", "", "keep fio's own JSON report (json+) of every cell in this directory, as CELL.json named like the cell's work directory (cell-003-local-r1.json); each cell's facts.fio_json names its file")
	pausePageOut := fs.Bool("pause-host-pageout", false, "for a machine's owner: turn off this machine's running DAMON page-out policies (kdamonds with a pageout scheme) before the first cell and on again after the run (persistlab clean does it after a kill); recorded in the results; needs root. Never done without this flag")
	profileFlag := fs.String("profile", "", "a profile persistlab calibrate wrote: its measured figures replace the model's defaults for every backend entry that does not set the option itself (replaces the scenario's profile:)")
	dryRun := fs.Bool("dry-run", false, "print the plan (cells, backends, sweep, estimated length) and exit without running anything")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := exports.check(); err != nil {
		return err
	}
	if *beside != "" && !exports.text() {
		return &scenario.FieldError{Field: "--format", Value: exports.format, Allowed: "text with --beside (its comparison is a table of two runs): run report --format " + exports.format + " on each results file"}
	}
	if len(positional) != 1 {
		return fmt.Errorf("want one scenario name or YAML file (built-ins: %s)", strings.Join(scenario.Builtins(), ", "))
	}
	o.Set, o.Sweep, o.Thresholds = sets, sweeps, thresholds
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "repeat":
			o.RepeatSet = true
		case "rate":
			o.RateSet = true
		case "crash":
			o.CrashesSet = true
		case "max-error-rate":
			o.MaxErrorRate = maxErrorRate
		}
	})
	if *backends != "" {
		for _, b := range strings.Split(*backends, ",") {
			o.Backends = append(o.Backends, strings.TrimSpace(b))
		}
	}
	spec, err := scenario.Load(positional[0])
	if err != nil {
		return err
	}
	if err := spec.Apply(o); err != nil {
		return err
	}
	if _, err := useProfile(spec, *profileFlag, terminalSafe(os.Stderr)); err != nil {
		return err
	}
	if o.Quick && spec.Quick.Derived {
		fmt.Fprintf(os.Stderr, "--quick: %s has no quick section: every sweep point runs once, for at most %s each\n", spec.Name, scenario.QuickDuration)
	}
	plan, err := scenario.NewPlan(spec, runner.Known())
	if err != nil {
		return err
	}
	if *shardFlag != "" {
		share, err := scenario.ParseShard(*shardFlag, *shardBy)
		if err != nil {
			return err
		}
		if *beside != "" {
			return &scenario.FieldError{Field: "--beside", Value: *beside, Allowed: "no --beside with --shard: run the other scenario's shards and merge them apart"}
		}
		if plan, err = plan.Share(share); err != nil {
			return err
		}
	}
	v, err := view()
	if err != nil {
		return err
	}
	// The scenario run beside this one: read, checked and given a results file before either runs.
	var besideSpec *scenario.Spec
	var besidePlan *scenario.Plan
	var besideOut string
	if *beside != "" {
		if besideSpec, err = scenario.Load(*beside); err != nil {
			return fmt.Errorf("--beside: %w", err)
		}
		if err := besideSpec.Apply(o); err != nil {
			return fmt.Errorf("--beside: %w", err)
		}
		if _, err := useProfile(besideSpec, *profileFlag, terminalSafe(os.Stderr)); err != nil {
			return fmt.Errorf("--beside: %w", err)
		}
		if besidePlan, err = scenario.NewPlan(besideSpec, runner.Known()); err != nil {
			return fmt.Errorf("--beside: %w", err)
		}
		if !report.Comparable(besideSpec.Workload.Type, spec.Workload.Type) {
			return &scenario.FieldError{Field: "--beside", Value: *beside, Allowed: "a scenario whose cells measure what " + spec.Name + "'s do (workload " + spec.Workload.Type + ", not " + besideSpec.Workload.Type + ")"}
		}
	}
	if *dryRun {
		return writeDryRun(terminalSafe(os.Stdout), plan, besidePlan, positional[0], o)
	}
	if *pausePageOut {
		if err := damon.Check(sysinfo.DamonAdmin, os.Geteuid()); err != nil {
			return fmt.Errorf("--pause-host-pageout: %w", err)
		}
	}
	if *out == "" {
		name := spec.Name
		if *shardFlag != "" { // shards of one plan on one machine write apart
			name += "-shard-" + strings.ReplaceAll(*shardFlag, "/", "-of-")
		}
		*out = defaultOut(name, time.Now())
	}
	outPath, err := results.OutPath(*out, *force)
	if err != nil {
		return err
	}
	unlockOut, err := results.Lock(outPath)
	if err != nil {
		return fmt.Errorf("--out %s: %w", *out, err)
	}
	defer unlockOut()
	if *beside != "" {
		if besideOut, err = results.OutPath(strings.TrimSuffix(outPath, ".json")+".beside.json", *force); err != nil {
			return fmt.Errorf("--beside: %w", err)
		}
		unlockBeside, err := results.Lock(besideOut)
		if err != nil {
			return fmt.Errorf("--beside %s: %w", besideOut, err)
		}
		defer unlockBeside()
	}
	taken := map[string]string{"--out": outPath}
	if besideOut != "" {
		taken["--beside's results"] = besideOut
	}
	outputs, err := checkOutputs(append([]output{{"--html", *htmlOut, report.WriteHTML}}, exports.files()...), *force, taken)
	if err != nil {
		return err
	}
	var toolOutputDir string
	if *fioJSON != "" {
		if toolOutputDir, err = fioJSONDir(*fioJSON, spec, *force); err != nil {
			return err
		}
	}
	if err := writePlan(terminalSafe(os.Stderr), plan, besidePlan, positional[0], o); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := warnOfLeftovers(*workDir); err != nil {
		return err
	}
	lock, err := makeWorkDir(*workDir, spec.Name, leftover.Run{PID: os.Getpid(), Out: outPath, Started: time.Now().UTC()})
	if err != nil {
		return err
	}
	defer lock.Release()
	dir, temporary := lock.Dir(), *workDir == ""
	proc.NotifyStarts(lock.Record)
	defer proc.NotifyStarts(nil)
	// A reader that went away (run ... | head) must not kill the run before it cleans up: writes
	// to it fail instead, and the run goes on to its end. (Notify, not Ignore: an ignored signal
	// stays ignored in every program the run starts.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	var caught os.Signal
	go func() {
		if sig, ok := <-signals; ok {
			caught = sig
			cancel(fmt.Errorf("interrupted by %v", sig))
		}
	}()
	var paused []string // the page-out policies this run paused, restored after it
	if *pausePageOut {
		rec, err := damon.Pause(sysinfo.DamonAdmin, dir)
		if _, left := damon.Recorded(dir); err != nil && left {
			return fmt.Errorf("--pause-host-pageout: %w (persistlab clean %s turns on what it turned off)", err, dir)
		} else if err != nil {
			return fmt.Errorf("--pause-host-pageout: %w", err)
		}
		paused = rec.Policies()
		defer restorePageOut(dir) // a second restore does nothing: this one is for a panic
		if len(paused) == 0 {
			fmt.Fprintln(os.Stderr, "persistlab run: --pause-host-pageout: no DAMON page-out policy runs on this machine: nothing paused")
		} else {
			fmt.Fprintf(terminalSafe(os.Stderr), "persistlab run: --pause-host-pageout: paused until the run ends: %s\n", strings.Join(paused, "; "))
		}
	}
	var progress io.Writer
	var progressWidth int
	if isTerminal(os.Stderr) && os.Getenv("CI") == "" {
		progress, progressWidth = os.Stderr, terminalWidth(os.Stderr)
	}
	failed, crossed := 0, []string(nil)
	var besideRes *results.Results
	if besideSpec != nil {
		besideDir := filepath.Join(dir, "beside") // inside the run's own directory: its cells apart
		if err := os.Mkdir(besideDir, 0o700); err != nil {
			return err
		}
		var besideErr error
		besideTools := ""
		if toolOutputDir != "" {
			besideTools = filepath.Join(toolOutputDir, "beside") // its cells' names are the run's own
			if err := os.MkdirAll(besideTools, 0o755); err != nil {
				return fmt.Errorf("--fio-json: %w", err)
			}
		}
		besideRes, besideErr = runner.RunPlan(ctx, besidePlan, runner.Options{Out: besideOut, WorkDir: besideDir, Self: self, Progress: progress, ProgressWidth: progressWidth, Command: os.Args, Keep: *keep, Derive: report.Summarize, ToolOutputDir: besideTools, PausedPageOut: paused})
		if besideRes != nil {
			failed, _ = report.Verdict(besideRes)
		}
		if besideErr != nil && ctx.Err() == nil {
			fmt.Fprintf(terminalSafe(os.Stderr), "persistlab run: --beside %s: %v\n", *beside, besideErr)
		}
	}
	var res *results.Results
	runErr := context.Cause(ctx)
	if ctx.Err() == nil {
		res, runErr = runner.RunPlan(ctx, plan, runner.Options{Out: outPath, WorkDir: dir, Self: self, Progress: progress, ProgressWidth: progressWidth, Command: os.Args, Keep: *keep, Derive: report.Summarize, ToolOutputDir: toolOutputDir, PausedPageOut: paused})
	} else if besideRes != nil { // interrupted beside: what it measured is all there is
		report.WriteView(terminalSafe(os.Stdout), besideRes, v)
		fmt.Printf("\nresults: %s\n", besideOut)
	}
	var restoreErr error
	if len(paused) > 0 {
		restoreErr = restorePageOut(dir)
	}
	var exportErr error
	if res != nil {
		if err := exports.writeFormat(terminalSafe(os.Stdout), res, v); err != nil {
			exportErr = fmt.Errorf("--format %s: %w", exports.format, err)
		}
		if err := writeOutputs(outputs, res, exports.said()); err != nil && exportErr == nil {
			exportErr = err
		}
		var saveErr *runner.SaveError
		if besideRes != nil {
			fmt.Printf("\n%s beside %s\n", spec.Name, besideSpec.Name)
			report.WriteComparison(terminalSafe(os.Stdout), besideOut, outPath, besideRes, res)
		}
		if _, err := os.Stat(outPath); err == nil && !errors.As(runErr, &saveErr) {
			fmt.Fprintf(exports.said(), "\nresults: %s\n", outPath)
			if besideRes != nil {
				fmt.Printf("beside: %s\n", besideOut)
			}
			if v == report.ViewBrief {
				fmt.Fprintf(exports.said(), "tables: persistlab report %s (--detail for every analysis)\n", report.ShellWord(outPath))
			}
		}
		var failedHere int
		failedHere, crossed = report.Verdict(res)
		failed += failedHere
	}
	// A mount or loop device still attached (a backend that failed to stop) keeps the directory
	// and its lock, for clean: RemoveAll must never walk into it.
	keepDir := *keep || !temporary || failed > 0 || restoreErr != nil
	if keepDir || lock.Release() {
		fmt.Fprintf(exports.said(), "logs and databases: %s\n", dir)
	} else {
		os.RemoveAll(dir)
	}
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

// restorePageOut turns on again the page-out policies the run paused (recorded in dir), says so,
// and says how to finish it if it cannot.
func restorePageOut(dir string) error {
	done, err := damon.Restore(dir)
	for _, line := range done {
		fmt.Fprintf(terminalSafe(os.Stderr), "persistlab run: --pause-host-pageout: %s\n", line)
	}
	if err != nil {
		return fmt.Errorf("--pause-host-pageout: not every page-out policy could be restored: %w (persistlab clean %s tries again)", err, dir)
	}
	return nil
}

// fioJSONDir checks and makes run --fio-json's directory: for a fio scenario, a new or empty
// directory, or one with files only with --force (the cells' files replace those of their
// names). It returns the directory's absolute path, which the cells' facts record.
func fioJSONDir(dir string, spec *scenario.Spec, force bool) (string, error) {
	if spec.Workload.Type != "fio" {
		return "", &scenario.FieldError{Field: "--fio-json", Value: dir, Allowed: "a fio scenario's flag (" + spec.Name + "'s workload is " + spec.Workload.Type + ", which writes no fio report)"}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--fio-json %s: %w", dir, err)
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return "", fmt.Errorf("--fio-json %s: %w", dir, err)
		}
	case err != nil:
		return "", fmt.Errorf("--fio-json %s: %w (want a directory)", dir, err)
	case len(entries) > 0 && !force:
		return "", fmt.Errorf("--fio-json %s: the directory holds %d file(s): want a new or empty directory, or --force to replace the cells' files", dir, len(entries))
	}
	return abs, nil
}

// makeWorkDir creates the run's own work directory and locks it: a new temporary directory, or
// --workdir itself when it does not exist yet, or a new directory inside --workdir when it does
// (what a directory held before the run is never persistlab's to remove).
func makeWorkDir(workDir, scenarioName string, run leftover.Run) (*leftover.Lock, error) {
	pattern := "persistlab-" + safeName(scenarioName) + "-"
	if workDir == "" {
		if tmp := os.TempDir(); strings.ContainsAny(tmp, ";#\n\r\x00") {
			return nil, fmt.Errorf("TMPDIR %q: want a path without ';', '#' or control characters (fio and MariaDB read them as the end of a value), or --workdir", tmp)
		}
		return leftover.CreateTemp("", pattern, run)
	}
	if strings.ContainsAny(workDir, ";#\n\r\x00") {
		// fio's job files and MariaDB's option files end a line's value at ';' or '#': a path
		// holding one would point them at another directory.
		return nil, fmt.Errorf("--workdir %q: want a path without ';', '#' or control characters (fio and MariaDB read them as the end of a value)", workDir)
	}
	if leftover.Live(workDir) {
		return nil, fmt.Errorf("--workdir %s is in use by another persistlab run", workDir)
	}
	if abs, err := filepath.Abs(workDir); err == nil {
		for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
			if _, err := os.Lstat(filepath.Join(dir, leftover.LockName)); err == nil {
				return nil, fmt.Errorf("--workdir %s: inside %s, another persistlab run's work directory (clean removes that whole): want a directory outside it", workDir, dir)
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	st, err := os.Stat(workDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(workDir), 0o755); err != nil {
			return nil, fmt.Errorf("--workdir %s: %w", workDir, err)
		}
		lock, err := leftover.Create(workDir, run)
		if err != nil {
			return nil, fmt.Errorf("--workdir %s: %w", workDir, err)
		}
		return lock, nil
	case err != nil:
		return nil, fmt.Errorf("--workdir %s: %w", workDir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("--workdir %s: not a directory", workDir)
	}
	lock, err := leftover.CreateTemp(workDir, pattern, run)
	if err != nil {
		return nil, fmt.Errorf("--workdir %s: %w", workDir, err)
	}
	fmt.Fprintf(os.Stderr, "persistlab: --workdir %s exists; this run works in %s\n", workDir, lock.Dir())
	return lock, nil
}

// safeName keeps a name's letters, digits, dots, dashes and underscores for a directory name.
func safeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// defaultOut is a results file no earlier run wrote: out/NAME-TIME.json, NAME the scenario's
// (safeName).
func defaultOut(name string, now time.Time) string {
	safe := strings.TrimLeft(safeName(name), ".")
	if safe == "" {
		safe = "run"
	}
	return filepath.Join("out", safe+"-"+now.UTC().Format("20060102-150405")+".json")
}

// writePlan says, before a run starts, how many cells it runs and about how long it takes (the
// scenario run beside it first), and for a long run how to shorten it.
func writePlan(w io.Writer, plan, besidePlan *scenario.Plan, name string, o scenario.Overrides) error {
	var total time.Duration
	known := true
	for _, p := range []*scenario.Plan{besidePlan, plan} {
		if p == nil {
			continue
		}
		e, err := runner.EstimatePlan(p)
		if err != nil {
			return err
		}
		if besidePlan != nil {
			fmt.Fprintf(w, "%s: ", p.Spec.Name)
		}
		fmt.Fprintln(w, e)
		total += e.Total()
		known = known && e.Known()
	}
	if known && total <= runner.LongRun {
		return nil
	}
	if !plan.Spec.QuickRun && plan.Shard == nil {
		if quick, derived, err := quickEstimate(name, o); err == nil && (quick.Total() < total || !known) {
			variant := "the scenario's short variant"
			if derived {
				variant = fmt.Sprintf("every point once, for at most %s each", scenario.QuickDuration)
			}
			fmt.Fprintf(w, "a shorter run: --quick, %s (%s)\n", variant, quick.Brief())
			return nil
		}
	}
	hint := "a shorter run: fewer cells with --backend, --sweep or --repeat 1"
	if plan.Spec.Crash != nil {
		hint = "a shorter run: fewer crash runs with --crash N, an earlier --crash-after, or fewer cells with --backend or --sweep"
	}
	if e, err := runner.EstimatePlan(plan); err == nil && e.Timed && plan.Spec.Crash == nil {
		hint += ", or a shorter --duration"
	}
	fmt.Fprintln(w, hint)
	return nil
}

// quickEstimate is the estimate of the scenario name with o and --quick, and whether its quick
// variant is derived (the scenario has no quick section).
func quickEstimate(name string, o scenario.Overrides) (e runner.Estimate, derived bool, err error) {
	spec, err := scenario.Load(name)
	if err != nil {
		return e, false, err
	}
	o.Quick = true
	if err := spec.Apply(o); err != nil {
		return e, false, err
	}
	plan, err := scenario.NewPlan(spec, runner.Known())
	if err != nil {
		return e, false, err
	}
	e, err = runner.EstimatePlan(plan)
	return e, spec.Quick != nil && spec.Quick.Derived, err
}

// writeDryRun prints what run would do, and nothing is run: the plan, its backends and sweep.
func writeDryRun(w io.Writer, plan, besidePlan *scenario.Plan, name string, o scenario.Overrides) error {
	if err := writePlan(w, plan, besidePlan, name, o); err != nil {
		return err
	}
	for _, p := range []*scenario.Plan{besidePlan, plan} {
		if p == nil {
			continue
		}
		var backends []string
		for _, b := range p.Spec.Backends {
			backends = append(backends, b.ID())
		}
		fmt.Fprintf(w, "%s: backends %s", p.Spec.Name, strings.Join(backends, ", "))
		if len(p.Spec.Sweep) > 0 {
			fmt.Fprintf(w, "; sweep %s", sweepSummary(p.Spec.Sweep))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "nothing was run (--dry-run)")
	return nil
}
