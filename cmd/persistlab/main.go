// Command persistlab runs storage experiments: where should an application's data live, how fast
// is it there, and what does it cost.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

const usage = `persistlab: where should an app's data live, and what does that cost?

usage:
  persistlab run SCENARIO|FILE.yaml [flags]   run an experiment and print its tables
  persistlab scenarios [show NAME [--provenance]]   list the built-in scenarios, print one, or where its figures come from
  persistlab report RESULTS.json [--html F] [--csv F] [--force]   tables again; an HTML page with charts; CSV
  persistlab compare A.json B.json            B against A, cell by cell, with verdicts where runs allow
  persistlab merge SHARD.json... --out F      join the results of a run's shards (run --shard I/N)
  persistlab clean [DIR...] [--dry-run]       remove what killed runs left: mounts, processes, work dirs
  persistlab app counter --db PATH [flags]    run the counter app (the system under test)
  persistlab app gitcommit --dir DIR [flags]  seed 004's loop alone: write, git add, git commit, per change
  persistlab load --url URL [flags]           drive HTTP load at any endpoint on loopback
  persistlab lab serve [flags]                run the emulated GCS bucket alone
  persistlab lab volume --type T --size S --mount DIR   an emulated cloud volume for your own tools
  persistlab lab model [app|bucket|prices|volume|all] [--markdown]   each model figure: published, assumed or fitted

Run "persistlab COMMAND -h" for a command's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	commands := map[string]func([]string) error{
		"run":       cmdRun,
		"scenarios": cmdScenarios,
		"report":    cmdReport,
		"merge":     cmdMerge,
		"app":       cmdApp,
		"load":      cmdLoad,
		"lab":       cmdLab,
		"compare":   cmdCompare,
		"clean":     cmdClean,
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Print(usage)
		return
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "persistlab: unknown command %q\n\n%s", name, usage)
		os.Exit(2)
	}
	if err := cmd(os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if err.Error() != "" { // names in it may come from a file: no control character reaches the terminal
			fmt.Fprintf(terminalSafe(os.Stderr), "persistlab %s: %v\n", name, err)
		}
		os.Exit(code)
	}
}

// Exit statuses of `persistlab run` besides 0 (complete) and 1 (could not run: bad input, set-up).
const (
	exitCellsFailed = 3 // some cells failed; the others' results were kept
	exitThreshold   = 4 // every cell ran, but a row crossed a threshold (thresholds:, --threshold, max_error_rate)
)

// exitError carries an exit status: 3, 4, or 128 + the signal that interrupted the run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// parseInterspersed parses flags that may come before or after positional arguments, as in
// `persistlab run cloudrun-sqlite --vus 2,4`, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
