package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	_ "persistlab/backend/all" // every backend
	"persistlab/report"
	"persistlab/runner"
	"persistlab/scenario"
	_ "persistlab/workload/all" // every workload
)

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var o scenario.Overrides
	backends := fs.String("backend", "", "comma-separated backends to run (replaces the scenario's list)")
	fs.StringVar(&o.VUs, "vus", "", "virtual users: a list 2,4,8 or a range 2..20/2 (shorthand for --sweep vus=...)")
	var sets, sweeps listFlag
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
	out := fs.String("out", "results.json", "results file, rewritten after every cell")
	workDir := fs.String("workdir", "", "scratch directory for databases and logs (default: a new temporary one, removed after)")
	keep := fs.Bool("keep", false, "keep the scratch directory (logs, databases) after the run")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return fmt.Errorf("want one scenario name or YAML file (built-ins: %s)", strings.Join(scenario.Builtins(), ", "))
	}
	o.Set, o.Sweep = sets, sweeps
	if *backends != "" {
		o.Backends = strings.Split(*backends, ",")
	}
	spec, err := scenario.Load(positional[0])
	if err != nil {
		return err
	}
	if err := spec.Apply(o); err != nil {
		return err
	}
	if err := spec.Validate(runner.Known()); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir := *workDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "persistlab-"+spec.Name+"-"); err != nil {
			return err
		}
		if !*keep {
			defer os.RemoveAll(dir)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var progress io.Writer
	if isTerminal(os.Stderr) && os.Getenv("CI") == "" {
		progress = os.Stderr
	}
	res, runErr := runner.Run(ctx, spec, runner.Options{Out: *out, WorkDir: dir, Self: self, Progress: progress, Command: os.Args})
	if res != nil {
		report.WriteTables(os.Stdout, res)
		fmt.Printf("\nresults: %s\n", *out)
		if *keep || *workDir != "" {
			fmt.Printf("logs and databases: %s\n", dir)
		}
	}
	return runErr
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
