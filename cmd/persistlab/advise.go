package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"persistlab/advise"
	"persistlab/internal/proc"
	"persistlab/lab/network"
	"persistlab/param"
	"persistlab/profile"
	"persistlab/results"
	"persistlab/runner"
	"persistlab/scenario"
	"persistlab/workload/httpapp"
)

// adviseApps are the built-in apps: the scenario whose workload each is.
// (the crash scenarios': their workloads also say what the app acknowledged and how to read what
// persisted).
var adviseApps = map[string]string{
	"counter": "cloudrun-sqlite",              // the Go counter, Rails-sized CPU per request
	"rails":   "cloudrun-sqlite-rails-crash",  // the seed's Rails app under Puma (scripts/setup --for rails)
	"python":  "cloudrun-sqlite-python-crash", // the Python counter
	"git":     "ebs-git",                      // seed 004's crawler committing each change to git
}

type adviseFlags struct {
	app, platform, memory, db, dir, format, profile, candidates string
	html, bucket, k6Script                                      string
	force                                                       bool
	cpus, rate                                                  float64
	crashes, connections, files, instances                      int
	budget, cloudSQLRTT                                         time.Duration
	require                                                     listFlag
	dryRun, noRun                                               bool
	// section names the flags whose values came from the app file's advise: section, and file
	// that file, so an error names the field where the value was written.
	section map[string]string
	file    string
}

func cmdAdvise(ctx context.Context, args []string) error {
	f, err := parseAdviseFlags(args)
	if err != nil {
		return err
	}
	plan, err := f.plan()
	if err != nil {
		return f.inSection(err)
	}
	if f.html != "" {
		if _, err := os.Lstat(f.html); err == nil && !f.force {
			return &param.FieldError{Field: "--html", Value: f.html, Allowed: "a file that does not exist yet (or --force to replace it)"}
		}
	}
	if f.dir == "" {
		f.dir = filepath.Join("out", fmt.Sprintf("advise-%s-%s", safeName(plan.App.Name), strings.ReplaceAll(fmt.Sprint(plan.Rate), ".", "_")))
	}
	if len(f.section) > 0 {
		var from []string
		for _, field := range f.section {
			from = append(from, field)
		}
		slices.Sort(from)
		fmt.Fprintf(os.Stderr, "from %s's advise section: %s (a flag replaces any)\n", f.file, strings.Join(from, ", "))
	}
	writeAdvisePlan(os.Stderr, plan, f.dir)
	if f.dryRun {
		fmt.Fprintln(os.Stderr, "nothing was run (--dry-run)")
		return nil
	}
	if f.noRun {
		if st, err := os.Stat(f.dir); err != nil || !st.IsDir() {
			return &param.FieldError{Field: "--dir", Value: f.dir, Allowed: "with --no-run, the directory of an earlier advise run"}
		}
	} else if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	ctx, caught, stop := catchSignals(ctx)
	defer stop()
	figs, runErr := f.measureAll(ctx, plan)
	a := plan.Advise(figs, adviseTrust(plan, f.profile))
	err = f.present(a)
	if sig := caught(); sig != nil {
		code := 130
		if sig == syscall.SIGTERM {
			code = 143
		}
		return &exitError{code: code, err: fmt.Errorf("interrupted by %v: the ranking above holds only the candidates measured", sig)}
	}
	if err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("a candidate's runs failed (the ranking above marks what they could not tell):\n%w", runErr)
	}
	if !a.Met() {
		return &exitError{code: advise.ExitNoneMeets}
	}
	return nil
}

// parseAdviseFlags declares and reads advise's flags.
func parseAdviseFlags(args []string) (*adviseFlags, error) {
	fs := newFlags("advise")
	f := &adviseFlags{}
	fs.StringVar(&f.app, "app", "counter", "the app: counter (the Go counter with Rails-sized CPU per request), rails (the seed's Rails app), python, git (seed 004's crawler committing each change), or a scenario file whose workload is your app")
	fs.StringVar(&f.platform, "platform", "", "where it runs: cloudrun, or a VM type ("+strings.Join(advise.VMTypes(), ", ")+"); default cloudrun, c4.large for git")
	fs.IntVar(&f.files, "files", 0, "git: the files the crawler keeps, a repository each (default the seed's 5,000)")
	fs.Float64Var(&f.cpus, "cpus", 0, "Cloud Run's vCPUs, whole, 1 to 8 (default 1)")
	fs.StringVar(&f.memory, "memory", "", "Cloud Run's memory, like 512MiB (default 512MiB)")
	fs.StringVar(&f.bucket, "bucket", "", "the object store a bucket design writes to, for its bill: gcs, s3 or r2 (default: the platform's own cloud's, S3 on EC2, else GCS); gcsfuse mounts GCS alone, and every bucket runs on the lab's GCS model")
	fs.StringVar(&f.k6Script, "k6-script", "", "your own k6 script as the steady runs' load: its default function's iterations start at --rate a second (k6's constant-arrival-rate, --connections its VUs), with the app's URL in __ENV."+httpapp.URLVariable+"; the crash runs keep persistlab's driver, which reads every acknowledgement (an http app: rails, python or your scenario's)")
	fs.Float64Var(&f.rate, "rate", 0, "the request rate to serve, requests/s; for git, the changes committed per second (required)")
	fs.StringVar(&f.db, "db-size", "100MiB", "the database's size, for the storage bill, a volume's size and whether it fits a Cloud Run instance's memory")
	fs.Var(&f.require, "require", `a requirement, like "p95 < 100ms", "lost_acked == 0", "lost_acked <= 1s" (no acknowledged write older than that lost), "usd_per_month < 30" (repeatable)`)
	fs.DurationVar(&f.budget, "time", 15*time.Minute, "the time the measurements may take: each candidate's cells are sized to fit it")
	fs.IntVar(&f.connections, "connections", 0, "keep-alive connections the load comes over (k6's preallocated VUs; default: the rate times the tightest latency required, at least 2): an app server that waits on an idle keep-alive connection, as Puma does, answers slower with more of them")
	fs.IntVar(&f.crashes, "crashes", advise.DefaultCrashes, "crash runs per candidate: the instance lost at a random moment of load, and what it acknowledged checked")
	fs.StringVar(&f.dir, "dir", "", "where each candidate's scenarios and results go; a candidate whose scenario is unchanged and whose results are complete there is not run again (default out/advise-APP-RATE)")
	fs.StringVar(&f.candidates, "candidates", "", "comma-separated candidates to consider (default: every one the platform offers)")
	fs.StringVar(&f.profile, "profile", "", "a profile persistlab calibrate wrote: its measured figures replace the model's defaults")
	fs.IntVar(&f.instances, "instances", 1, fmt.Sprintf("Cloud Run instances serving at once, the load split between them (1 to %d): only a design that keeps the data off the instances (cloud-sql) can serve several", advise.MaxInstances))
	fs.DurationVar(&f.cloudSQLRTT, "cloudsql-rtt", 0, "the network round trip between the app's instance and Cloud SQL, added to each exchange with the server (no published figure: 0 by default; one you measured in your region, like 1ms)")
	fs.StringVar(&f.format, "format", "text", "text, markdown or json")
	fs.StringVar(&f.html, "html", "", "also write the advice as a self-contained HTML page with the frontier chart to this file")
	fs.BoolVar(&f.force, "force", false, "replace an existing --html file")
	fs.BoolVar(&f.noRun, "no-run", false, "run nothing: rank from what --dir holds (a candidate whose scenario there is missing or differs from this plan's is not measured)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the candidates and the plan, run nothing")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(positional) > 0 {
		return nil, fmt.Errorf("unexpected argument %q: advise takes flags only (--app, --rate, --require)", positional[0])
	}
	if !slices.Contains([]string{"text", "markdown", "json"}, f.format) {
		return nil, &param.FieldError{Field: "--format", Value: f.format, Allowed: "text, markdown or json"}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	f.fromSection(set)
	return f, nil
}

// fromSection takes, for each flag the command line left unset, the value the app file's advise:
// section gives it (paths there relative to the file).
func (f *adviseFlags) fromSection(set map[string]bool) {
	if _, builtin := adviseApps[f.app]; builtin {
		return
	}
	spec, err := scenario.Load(f.app)
	if err != nil || spec.Advise == nil {
		return // adviseApp says what is wrong with the file
	}
	a, dir := spec.Advise, filepath.Dir(f.app)
	f.section, f.file = map[string]string{}, f.app
	take := func(flag, field string, given bool, apply func()) {
		if given && !set[flag] {
			apply()
			f.section["--"+flag] = field
		}
	}
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	take("platform", "platform", a.Platform != "", func() { f.platform = a.Platform })
	take("cpus", "cpus", a.CPUs != 0, func() { f.cpus = a.CPUs })
	take("memory", "memory", a.Memory != "", func() { f.memory = a.Memory })
	take("bucket", "bucket", a.Bucket != "", func() { f.bucket = a.Bucket })
	take("rate", "rate", a.Rate != 0, func() { f.rate = a.Rate })
	take("require", "require", len(a.Require) > 0, func() { f.require = append(listFlag(nil), a.Require...) })
	take("db-size", "db_size", a.DBSize != "", func() { f.db = a.DBSize })
	take("time", "time", a.Time != 0, func() { f.budget = time.Duration(a.Time) })
	take("crashes", "crashes", a.Crashes != 0, func() { f.crashes = a.Crashes })
	take("connections", "connections", a.Connections != 0, func() { f.connections = a.Connections })
	take("candidates", "candidates", len(a.Candidates) > 0, func() { f.candidates = strings.Join(a.Candidates, ",") })
	take("files", "files", a.Files != 0, func() { f.files = a.Files })
	take("instances", "instances", a.Instances != 0, func() { f.instances = a.Instances })
	take("cloudsql-rtt", "cloudsql_rtt", a.CloudSQLRTT != 0, func() { f.cloudSQLRTT = time.Duration(a.CloudSQLRTT) })
	take("k6-script", "k6_script", a.K6Script != "", func() { f.k6Script = rel(a.K6Script) })
	take("profile", "profile", a.Profile != "", func() { f.profile = rel(a.Profile) })
}

// inSection names the field of the advise: section an input error's value came from, where it
// came from there rather than the command line.
func (f *adviseFlags) inSection(err error) error {
	var fe *param.FieldError
	if errors.As(err, &fe) {
		if field, ok := f.section[fe.Field]; ok {
			fe.Field = "advise." + field + " (" + f.file + ")"
		}
	}
	return err
}

// measureAll measures every runnable candidate, or reuses what --dir holds, until interrupted.
func (f *adviseFlags) measureAll(ctx context.Context, plan *advise.Plan) (map[string]advise.Figures, error) {
	if plan.App.Kind == advise.KindChanges {
		return f.measureGit(ctx, plan)
	}
	figs := map[string]advise.Figures{}
	var runErr error
	for _, c := range plan.Runnable() {
		steady, steadyFile, err := f.measure(ctx, plan, c, "steady")
		if err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("%s: %w", c.Name, err))
		}
		var crash *results.Results
		var crashFile string
		if ctx.Err() == nil && plan.Crashes > 0 {
			if crash, crashFile, err = f.measure(ctx, plan, c, "crash"); err != nil {
				runErr = errors.Join(runErr, fmt.Errorf("%s crash runs: %w", c.Name, err))
			}
		}
		figs[c.Name] = plan.Measured(c, steady, steadyFile, crash, crashFile)
		if ctx.Err() != nil {
			break
		}
	}
	return figs, runErr
}

// measureGit runs the crash runs first, once per group, then the steady cells of every candidate
// whose group's crash runs meet the crash requirements.
func (f *adviseFlags) measureGit(ctx context.Context, plan *advise.Plan) (map[string]advise.Figures, error) {
	type crashRun struct {
		res  *results.Results
		file string
	}
	crashes := map[string]crashRun{}
	var runErr error
	for _, c := range plan.CrashRuns() {
		if ctx.Err() != nil {
			break
		}
		res, file, err := f.measure(ctx, plan, c, "crash")
		if err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("%s crash runs: %w", c.Name, err))
		}
		crashes[c.Name] = crashRun{res, file}
	}
	figs := map[string]advise.Figures{}
	for _, c := range plan.Runnable() {
		from := c.Name
		if c.CrashFrom != "" {
			from = c.CrashFrom
		}
		cr := crashes[from]
		if plan.Crashes > 0 && plan.FailsCrash(plan.Measured(c, nil, "", cr.res, cr.file)) {
			fmt.Fprintf(os.Stderr, "%s steady: not run: the crash runs of %s already fail a crash requirement\n", c.Name, from)
			figs[c.Name] = plan.Measured(c, nil, "", cr.res, cr.file)
			continue
		}
		var steady *results.Results
		var steadyFile string
		if ctx.Err() == nil {
			var err error
			if steady, steadyFile, err = f.measure(ctx, plan, c, "steady"); err != nil {
				runErr = errors.Join(runErr, fmt.Errorf("%s: %w", c.Name, err))
			}
		}
		figs[c.Name] = plan.Measured(c, steady, steadyFile, cr.res, cr.file)
	}
	return figs, runErr
}

// present writes the advice in --format, and the --html page.
func (f *adviseFlags) present(a advise.Advice) error {
	out := terminalSafe(os.Stdout)
	var err error
	switch f.format {
	case "json":
		err = a.WriteJSON(out)
	case "markdown":
		err = a.WriteMarkdown(out)
	default:
		err = a.WriteText(out)
	}
	if f.html != "" && err == nil {
		err = writeAdviceHTML(f.html, a)
	}
	return err
}

// writeAdviceHTML writes the page to a temporary file beside path and renames it into place.
func writeAdviceHTML(path string, a advise.Advice) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".advise-*.html")
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := a.WriteHTML(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("--html: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	fmt.Fprintf(os.Stderr, "page: %s\n", path)
	return nil
}

// plan reads the flags into the advise plan, every input checked before anything runs.
func (f *adviseFlags) plan() (*advise.Plan, error) {
	if f.rate == 0 {
		return nil, &param.FieldError{Field: "--rate", Value: "(unset)", Allowed: "the request rate to serve, like --rate 50"}
	}
	var memory int64
	if f.memory != "" {
		m, err := param.ParseSize(f.memory)
		if err != nil {
			return nil, &param.FieldError{Field: "--memory", Value: f.memory, Allowed: "a size like 512MiB or 2GiB"}
		}
		memory = m
	}
	app, err := adviseApp(f.app)
	if err != nil {
		return nil, err
	}
	if f.k6Script != "" {
		if app, err = withK6Script(app, f.k6Script); err != nil {
			return nil, err
		}
	}
	if f.platform == "" {
		f.platform = "cloudrun"
		if app.Kind == advise.KindChanges {
			f.platform = "c4.large" // seed 004's instance
		}
	}
	platform, err := advise.ParsePlatform(f.platform, f.cpus, memory)
	if err != nil {
		return nil, err
	}
	if platform, err = platform.WithBucket(f.bucket); err != nil {
		return nil, err
	}
	if f.cloudSQLRTT < 0 || f.cloudSQLRTT > network.MaxRTT {
		return nil, &param.FieldError{Field: "--cloudsql-rtt", Value: f.cloudSQLRTT.String(), Allowed: "a round trip from 0 to " + network.MaxRTT.String() + ", like 1ms"}
	}
	platform.CloudSQLRTT = f.cloudSQLRTT
	if platform, err = platform.WithInstances(f.instances); err != nil {
		return nil, err
	}
	// The app runs pinned to as many of this machine's online CPUs as the platform has vCPUs, as
	// the runner places it (git runs unpinned): more than the machine has cannot run here.
	here := runtime.NumCPU()
	if online, err := proc.OnlineCPUs(); err == nil {
		here = len(online)
	}
	if app.Kind != advise.KindChanges && platform.CPUs > float64(here) {
		field, value := "--platform", f.platform
		if f.cpus != 0 {
			field, value = "--cpus", fmt.Sprint(f.cpus)
		}
		return nil, &param.FieldError{Field: field, Value: value, Allowed: fmt.Sprintf("at most %d vCPUs here, this machine's CPUs: the app runs on CPUs of its own, one per vCPU (%s has %g)", here, platform, platform.CPUs)}
	}
	if f.files != 0 {
		if app.Kind != advise.KindChanges {
			return nil, &param.FieldError{Field: "--files", Value: fmt.Sprint(f.files), Allowed: "only with --app git"}
		}
		if f.files < 1 || f.files > 1_000_000 {
			return nil, &param.FieldError{Field: "--files", Value: fmt.Sprint(f.files), Allowed: "1 to 1000000"}
		}
		if app.Workload.Params == nil {
			app.Workload.Params = map[string]string{}
		}
		app.Workload.Params["files"] = fmt.Sprint(f.files)
	}
	db, err := param.ParseSize(f.db)
	if err != nil || db <= 0 || db > 64<<40 {
		return nil, &param.FieldError{Field: "--db-size", Value: f.db, Allowed: "a size above 0 and at most 64TiB, like 1GiB"}
	}
	var reqs []advise.Requirement
	maxUSD := 0.0
	for _, text := range f.require {
		r, err := advise.ParseRequirement(text, app.Metrics)
		if err != nil {
			return nil, err
		}
		if r.Where == advise.Bill && (r.Op == "<" || r.Op == "<=") && (maxUSD == 0 || r.Value < maxUSD) {
			maxUSD = r.Value
		}
		reqs = append(reqs, r)
	}
	if app.Kind == advise.KindChanges && !math.IsNaN(f.rate) && f.rate > 0 {
		r, err := advise.KeepsUp(f.rate, app.Metrics)
		if err != nil {
			return nil, err
		}
		reqs = append([]advise.Requirement{r}, reqs...)
	}
	if f.budget <= 0 || f.budget > 24*time.Hour {
		return nil, &param.FieldError{Field: "--time", Value: f.budget.String(), Allowed: "a duration above 0 and at most 24h, like 15m"}
	}
	cands := advise.Candidates(app, platform, f.rate, db, maxUSD)
	if f.candidates != "" {
		var names []string
		for _, c := range cands {
			names = append(names, c.Name)
		}
		var chosen []advise.Candidate
		for _, name := range strings.Split(f.candidates, ",") {
			i := slices.IndexFunc(cands, func(c advise.Candidate) bool { return c.Name == strings.TrimSpace(name) })
			if i < 0 {
				return nil, &param.FieldError{Field: "--candidates", Value: name, Allowed: "candidates on " + platform.String() + ": " + strings.Join(names, ", ")}
			}
			c := cands[i]
			c.Dominated = "" // named: run
			chosen = append(chosen, c)
		}
		cands = chosen
	}
	plan, err := advise.NewPlan(app, platform, f.rate, db, reqs, f.budget, f.crashes, f.connections, cands)
	if err != nil {
		return nil, err
	}
	return plan, checkAdviseScenarios(plan)
}

// checkAdviseScenarios plans every scenario advise would run, so that a mistake in one is said
// before the first runs.
func checkAdviseScenarios(p *advise.Plan) error {
	for _, c := range p.Runnable() {
		for _, kind := range p.KindsOf(c) {
			data, err := p.YAML(c, kind)
			if err != nil {
				return err
			}
			spec, err := scenario.Parse(data, c.Name+"."+kind+".yaml")
			if err != nil {
				return fmt.Errorf("advise's %s scenario for %s: %w", kind, c.Name, err)
			}
			spec.Workload.Dir = p.App.Workload.Dir
			if _, err := scenario.NewPlan(spec, runner.Known()); err != nil {
				return fmt.Errorf("advise's %s scenario for %s: %w", kind, c.Name, err)
			}
		}
	}
	return nil
}

// adviseApp is the app under test: a built-in's workload, or a scenario file's.
func adviseApp(name string) (advise.App, error) {
	src, builtin := adviseApps[name]
	if !builtin {
		if _, err := os.Stat(name); err != nil {
			return advise.App{}, &param.FieldError{Field: "--app", Value: name, Allowed: "counter, rails, python, git, or a scenario file whose workload is your app (counter, http or gitcommit)"}
		}
		src = name
	}
	spec, err := scenario.Load(src)
	if err != nil {
		return advise.App{}, fmt.Errorf("--app: %w", err)
	}
	w := spec.Workload
	if w.Type == "gitcommit" {
		app := advise.App{Name: name, Workload: w, Kind: advise.KindChanges, Crashable: true, Metrics: runner.Known().Metrics[w.Type]}
		if !builtin {
			app.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		}
		return app, nil
	}
	if w.Type != "counter" && w.Type != "http" {
		return advise.App{}, &param.FieldError{Field: "--app", Value: name, Allowed: "an app serving HTTP requests (a scenario whose workload is counter or http) or committing to git (gitcommit), not " + w.Type}
	}
	_, keepsSQLite := w.Params["sqlite"]
	_, namesServer := w.Sections["mysql_env"] // an http app told a server's address where a backend names one
	speaksMySQL := (w.Type == "counter" && w.Sections["pragmas"] == nil) || (w.Type == "http" && namesServer)
	app := advise.App{Name: name, Workload: w, SQLite: w.Type == "counter" || keepsSQLite, Pragmas: w.Type == "counter", MySQL: speaksMySQL, Metrics: runner.Known().Metrics[w.Type],
		Crashable: w.Type == "counter" || (w.Params["ack"] != "" && w.Params["recover"] != ""), K6Script: w.Params["k6_script"]}
	if !builtin {
		app.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	return app, nil
}

// withK6Script has the user's k6 script drive app's steady runs: an http app's, read as k6
// reads it before anything runs, its path made absolute so that the scenarios advise writes
// run it from anywhere.
func withK6Script(app advise.App, path string) (advise.App, error) {
	if app.Workload.Type != "http" {
		return app, &param.FieldError{Field: "--k6-script", Value: path, Allowed: "a script for an http app (rails, python or a scenario whose workload is http): " + app.Name + "'s workload is " + app.Workload.Type + ", driven by persistlab alone"}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return app, &param.FieldError{Field: "--k6-script", Value: path, Allowed: "a path: " + err.Error()}
	}
	if err := httpapp.CheckScript(context.Background(), abs); err != nil {
		return app, &param.FieldError{Field: "--k6-script", Value: path, Allowed: "a k6 script k6 can read: " + err.Error()}
	}
	app.K6Script = abs
	return app, nil
}

// writeAdvisePlan says what advise will run and about how long, before anything runs.
func writeAdvisePlan(w *os.File, p *advise.Plan, dir string) {
	unit := "requests"
	if p.App.Kind == advise.KindChanges {
		unit = "changes"
	}
	of := ""
	if p.App.K6Script != "" {
		unit, of = "iterations", " of "+filepath.Base(p.App.K6Script)
	}
	fmt.Fprintf(w, "advise: %s at %g %s/s%s on %s; requirements: ", p.App.Name, p.Rate, unit, of, p.Platform)
	var rs []string
	for _, r := range p.Requirements {
		rs = append(rs, r.Text)
	}
	fmt.Fprintf(w, "%s\n", strings.Join(rs, "; "))
	var names, excluded, dominated []string
	for _, c := range p.Candidates {
		switch {
		case c.Excluded != "":
			excluded = append(excluded, c.Name)
		case c.Dominated != "":
			dominated = append(dominated, c.Name)
		default:
			names = append(names, c.Name)
		}
	}
	fmt.Fprintf(w, "candidates: %s", strings.Join(names, ", "))
	if len(excluded) > 0 {
		fmt.Fprintf(w, " (excluded: %s)", strings.Join(excluded, ", "))
	}
	if len(dominated) > 0 {
		fmt.Fprintf(w, " (not run unless named: %s)", strings.Join(dominated, ", "))
	}
	if p.App.Kind == advise.KindChanges {
		var reps []string
		for _, c := range p.CrashRuns() {
			reps = append(reps, c.Name)
		}
		fmt.Fprintf(w, "\nplan: %d crash runs each on %s (each stands for the volumes of its fsync setting; a setting they fail runs no steady cells), then per candidate a prefill and %s paced at %g/s and at %g/s with the write-back timed; about %s in all (budget %s); scenarios and results in %s\n",
			p.Crashes, strings.Join(reps, ", "), p.Duration, p.Rate, 2*p.Rate, p.Estimate().Round(time.Minute), p.Budget, dir)
		return
	}
	crashes := fmt.Sprintf("then %d crash runs", p.Crashes)
	if p.Crashes == 0 {
		crashes = "no crash runs (the app's workload has no ack and recover)"
	}
	load := "open loop"
	if p.App.K6Script != "" {
		load = "the k6 script " + p.App.K6Script + "'s iterations started"
		if p.Crashes > 0 {
			crashes += " from persistlab's driver (" + p.App.CrashRequest() + ")"
		}
	}
	fmt.Fprintf(w, "\nplan: per candidate %s of %s at %g/s and %g/s over %d connections, %s; about %s in all (budget %s); scenarios and results in %s\n",
		p.Duration, load, p.Rate, 2*p.Rate, p.Connections, crashes, p.Estimate().Round(time.Minute), p.Budget, dir)
}

// adviseTrust says how far to trust the answer: where each kind of figure comes from.
func adviseTrust(p *advise.Plan, profilePath string) []string {
	if p.App.Kind == advise.KindChanges {
		return gitTrust(p)
	}
	cpu := "latency and CPU are this machine's: the app's CPU per request runs on this machine's CPU, not the target's (seed 000's Cloud Run instance took about 3.7 times as long per request as this lab: docs/fidelity.md); ratios between candidates carry over better than absolute levels; persistlab calibrate instance measures the target's, and --profile slows the app to it"
	var instance *profile.Profile
	if profilePath != "" {
		if prof, err := profile.Load(profilePath); err == nil && prof.Kind == "instance" {
			instance = prof
		}
	}
	if instance != nil {
		cpu = fmt.Sprintf("the app's CPU is slowed to the target's measured speed (the instance profile %s, measured on %s at %s): its latencies stand for the target's as far as the CPU sets them", profilePath, instance.Measured.Target, instance.Measured.When)
	}
	out := []string{cpu}
	if instance != nil {
		out = append(out, "the bucket's latencies are the lab's assumptions (GCS publishes none); persistlab calibrate bucket measures yours")
	} else if profilePath != "" {
		out = append(out, "the bucket's and volumes' figures the profile "+profilePath+" measured replace the model's (persistlab lab model --profile "+profilePath+" lists them)")
	} else {
		out = append(out, "the bucket's latencies are the lab's assumptions (GCS publishes none); persistlab calibrate bucket measures yours, and --profile uses it")
	}
	if b := p.Platform.Bucket; b != "" && b != "GCS" {
		out = append(out, "the "+b+" bucket is emulated by the lab's GCS model (its latencies, its limits and its API, which Litestream writes to as it would to "+b+"'s): its bill is "+b+"'s list prices, with the egress between clouds at the bytes the runs moved")
	}
	if p.App.K6Script != "" {
		out = append(out, "the steady runs' load is your k6 script "+p.App.K6Script+", its iterations started at the rate (each may make several requests: the bill is at the requests they made); the crash runs' is persistlab's driver ("+p.App.CrashRequest()+"), which reads every acknowledgement: the loss is measured under that load, not the script's mix")
	}
	if n := p.Platform.Instances; n > 1 {
		line := fmt.Sprintf("the %d instances run on this machine's CPUs for one instance (%g), where Cloud Run gives each its own: where the app's CPU is busy they answer slower here than there", n, p.Platform.CPUs)
		if p.Crashes > 0 {
			line += fmt.Sprintf("; the crash runs crash one instance, alone, at its share of the rate (%s requests/s) and of the connections", strconv.FormatFloat(p.Rate/float64(n), 'f', -1, 64))
		}
		out = append(out, line)
	}
	if runsCandidate(p, "cloudsql") {
		reach := "reached over loopback: the network between Cloud Run and the server (a round trip a statement, more through the Cloud SQL Auth Proxy; no published figure) is not added to its latency (--cloudsql-rtt adds one you measured)"
		if rtt := p.Platform.CloudSQLRTT; rtt > 0 {
			reach = "reached through a link that adds " + rtt.String() + " to each round trip (--cloudsql-rtt), as the network between Cloud Run and the server would"
		}
		out = append(out, "Cloud SQL is the real MariaDB with its data on the lab's Cloud SQL SSD disk, in a "+advise.CloudSQLMachine+"'s memory, but on this machine's CPU, and "+reach+"; its bill is the machine and the disk at list price, without a high-availability standby, backups or an IP address")
	}
	out = append(out,
		"volumes follow the providers' published IOPS, throughput and burst rules; prices are list prices with their dated sources in persistlab lab model prices (buckets, Cloud Run) and persistlab lab model volume (disks)",
		fmt.Sprintf("the load comes over %d keep-alive connections (--connections; Cloud Run's front end's to an instance are not published): an app server that serves a connection's requests inline, as Puma does, answers slower with more of them", p.Connections),
		crashTrust(p),
		platformBill(p),
		fmt.Sprintf("the database is not filled to %s: its size prices storage and sizes volumes only", sizeWords(p.DBBytes)))
	return out
}

// gitTrust says how far to trust a git answer.
func gitTrust(p *advise.Plan) []string {
	return []string{
		"git's CPU is this machine's: each commit's processes run on this machine's CPU, not the target's",
		"volumes follow the providers' published IOPS, throughput and burst rules; those with burst credits (gp2, st1, sc1) run dry, as after hours at this rate: a new volume's burst is a transient a crawler leaves",
		fmt.Sprintf("each cell is %s, shorter than this kernel's %s before it writes a dirty page back, so the cell runs at the page cache's speed and the timed write-back after it is the volume's own time to take the cell's changes: the pace judged is the changes made times the cell's length over the longer of the two", p.Duration, advise.DirtyExpire()),
		"before each cell the repositories it will touch are made, outside the volume's model, so a cell measures a running crawler, not git init",
		fmt.Sprintf("each fsync setting's loss rests on %d crashes at random moments on one volume and is assumed for the other types (one emulator: a flushed write is durable on every type alike)", p.Crashes),
		"volumes are sized to sustain twice the rate at an assumed write units per change (4 on SSD, 8 on HDD; each row's volume_write_units in its results says what it took); prices are list prices with their dated sources in persistlab lab model prices (buckets, Cloud Run) and persistlab lab model volume (disks)",
		"the bill is the volume's alone: the VM is the same for every candidate",
	}
}

// runsCandidate says whether the plan measures a candidate on backend.
func runsCandidate(p *advise.Plan, backend string) bool {
	for _, c := range p.Candidates {
		if c.Backend == backend && c.Excluded == "" && c.Dominated == "" {
			return true
		}
	}
	return false
}

// crashTrust says what the loss figures rest on.
func crashTrust(p *advise.Plan) string {
	if p.Crashes == 0 {
		return "no crash runs: the app's workload has no ack and recover, without which a crash run cannot count what was lost (docs/own-app.md)"
	}
	return fmt.Sprintf("each candidate's loss rests on %d crashes at random moments: none lost in %d says a loss is rare, not impossible", p.Crashes, p.Crashes)
}

// platformBill says what the bill assumes of the platform.
func platformBill(p *advise.Plan) string {
	if p.Platform.Kind == "cloudrun" {
		return "the bill assumes one Cloud Run instance, before the free tier: always on and billed instance-based where the data is on the instance (local, Litestream: a single SQLite writer must stay up, and Litestream replicates between requests); on gcsfuse and Cloud SQL, whose data is in the bucket or on the server, the cheaper of that and request-based billing (the time a request is in flight, for Poisson arrivals at the rate each held for the app's mean service time); the bucket's storage is the database's size, Litestream's at least that"
	}
	return "the bill leaves out the VM itself, the same for every candidate; the bucket's storage is the database's size, Litestream's at least that"
}

func sizeWords(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%g GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%g MiB", float64(b)/(1<<20))
}
