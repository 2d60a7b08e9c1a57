package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"persistlab/app/counter"
	"persistlab/internal/proc"
	"persistlab/param"
	"persistlab/runner"
	wcounter "persistlab/workload/counter"
)

// cmdApp serves app counter (seed 000's counter on SQLite) or app hello (a trivial handler, for
// driver benchmarks) until SIGINT or SIGTERM, which it catches only once it serves: during its
// set-up a signal ends it at once.
func cmdApp(ctx context.Context, which string, args []string) error {
	fs := newFlags("app " + which)
	db := fs.String("db", "", "SQLite database file (created if missing)")
	listen := fs.String("listen", "127.0.0.1:8080", "loopback address to serve on; port 0 picks a free one")
	cpus := fs.Int("cpus", 0, "pin the app to this many CPUs (the last ones online); 0 leaves it unpinned")
	maxConns := fs.Int("max-conns", counter.DefaultMaxConns, "SQLite connection pool size (Rails' default pool is 5)")
	threads := fs.Int("threads", 0, "requests served at once, the rest wait as in Puma's queue (Rails 8's puma.rb: 3); 0: no limit")
	gvl := fs.Bool("gvl", false, "one lock over each request's CPU work and SQLite statement, as Ruby's GVL (sqlite3-ruby holds it while stepping)")
	cpuPerRequest := fs.Duration("cpu-per-request", 0, "CPU work per POST besides SQLite's, like a framework's own cost (e.g. 4.7ms for the seed's Rails app)")
	useMySQL := fs.Bool("mysql", false, "keep the counter on the MySQL server whose DSN (go-sql-driver's form) is in $"+counter.DSNEnv+", as on Cloud SQL, instead of SQLite; --db and --pragma are then refused")
	prepare := fs.Bool("prepare", false, "create the database and its schema, close it and exit (like `bin/rails db:prepare` in a Rails 8 container's entrypoint)")
	var pragmas listFlag
	fs.Var(&pragmas, "pragma", "override a Rails 8 default pragma, name=value (repeatable), e.g. journal_mode=DELETE")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	if err := checkFlagParams(fs, append(slices.Clone(wcounter.Params), runner.Knobs...), counterFlagParams); err != nil {
		return err
	}
	if err := checkLoopback("--listen", *listen); err != nil {
		return err
	}
	if *cpus != 0 {
		cpuSet, _, err := proc.SplitCPUs(*cpus)
		if err != nil {
			return fmt.Errorf("--cpus: %w", err)
		}
		if err := proc.PinSelf(cpuSet); err != nil {
			return err
		}
		runtime.GOMAXPROCS(max(minAppProcs, len(cpuSet)))
	}

	var handler http.Handler
	if which == "hello" {
		body := []byte(`{"count":1}`)
		handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	} else {
		var overrides []counter.Pragma
		for _, p := range pragmas {
			pr, err := counter.ParsePragma(p)
			if err != nil {
				return fmt.Errorf("--pragma: %w", err)
			}
			overrides = append(overrides, pr)
		}
		opts := counter.Options{DBPath: *db, Pragmas: counter.WithOverrides(counter.RailsPragmas, overrides), MaxConns: *maxConns,
			Work: counter.CalibrateWork(*cpuPerRequest), Threads: *threads, GVL: *gvl}
		if *useMySQL {
			if *db != "" || len(pragmas) > 0 {
				return errors.New("--mysql: the counter keeps no SQLite file there: leave out --db and --pragma")
			}
			if opts.DSN = os.Getenv(counter.DSNEnv); opts.DSN == "" {
				return fmt.Errorf("--mysql: $%s is empty: want the server's DSN, like root@tcp(127.0.0.1:3306)/", counter.DSNEnv)
			}
			opts.DBPath, opts.Pragmas = "", nil
		}
		a, err := counter.Open(opts)
		if err != nil {
			return err
		}
		if *prepare {
			return a.Close()
		}
		defer a.Close()
		if eff, err := a.EffectivePragmas(); err == nil && !*useMySQL {
			fmt.Fprintf(os.Stderr, "pragmas in effect: %v\n", eff)
		}
		handler = a.Handler()
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Printf("%shttp://%s\n", counter.ListeningMarker, ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// minAppProcs is the app's least GOMAXPROCS, whatever it is pinned to. With one P, Go's scheduler
// let a fresh app's new connections wait for seconds at 20 VUs while six others were served: each
// request hands off to the next goroutine through the P's runnext slot (its thread slot, the GVL,
// net/http's background read), and goroutines queued behind that chain are not run until it breaks
// (golang/go#52934). A second P steals them, as Linux's fair scheduler runs Puma's threads on one
// vCPU; the app stays on its pinned CPUs. Measured in docs/design.md, "persistlab's own stall".
const minAppProcs = 2

// counterFlagParams are the flags of `app counter` that are the counter workload's parameters or
// the runner's (flag: parameter): bounded by the same definitions, the app takes what a scenario
// may give it.
var counterFlagParams = map[string]string{"cpus": "cpus", "max-conns": "max_conns", "threads": "threads", "cpu-per-request": "cpu_per_request", "gvl": "gvl"}

// checkFlagParams checks each flag's value, set or default, by its parameter's definition.
func checkFlagParams(fs *flag.FlagSet, params []param.Param, flagParams map[string]string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name, ok := flagParams[f.Name]
		if !ok || err != nil {
			return
		}
		i := slices.IndexFunc(params, func(p param.Param) bool { return p.Name == name })
		if i < 0 {
			err = fmt.Errorf("--%s: no parameter %s to check it by", f.Name, name)
			return
		}
		err = params[i].Check("--"+f.Name, f.Value.String())
	})
	return err
}

// checkLoopback refuses addresses off this machine: persistlab serves and loads loopback only.
func checkLoopback(flagName, hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT on loopback, e.g. 127.0.0.1:8080", flagName, hostport)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s %q: persistlab only uses loopback (127.0.0.0/8, ::1, localhost)", flagName, hostport)
	}
	return nil
}
