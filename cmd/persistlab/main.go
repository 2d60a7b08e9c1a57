// Command persistlab runs storage experiments: where should an application's data live, how fast
// is it there, and what does it cost.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// command is one of persistlab's commands. The usage text and the dispatch both come from
// commands(): a command is listed as it is run.
type command struct {
	name    string // "run", or a command and its subcommand: "lab serve"
	args    string // what follows the name, for the usage
	summary string
	run     func(ctx context.Context, args []string) error
	// signals: ctx ends at the first SIGINT or SIGTERM (the command serves until then). The others
	// get a ctx no signal ends: a command that must stop cleanly arms its own handling at the
	// moment it needs it (run: after its work directory is locked, to exit 130 or 143; app
	// counter: once it serves; lab volume: SIGHUP too, and again while the mount is busy), and
	// until then a signal ends it as it ends any program.
	signals bool
	hidden  bool // not in the usage: app hello, a trivial handler for driver benchmarks
	// examples for its help (-h), and its exit statuses where they are not exitStatuses.
	examples []string
	exits    string
}

// commands are persistlab's commands, in the order the usage lists them.
func commands() []command {
	return []command{
		{name: "run", args: "SCENARIO|FILE.yaml [flags]", summary: "run an experiment and print its tables", run: cmdRun, exits: runExitStatuses, examples: []string{
			"persistlab run cloudrun-sqlite-rails --quick          # seed 000's app on gcsfuse and Litestream, a short plan",
			"persistlab run my-app.yaml --threshold 'p95_ms < 200ms'  # your own app; exits 4 if a row is slower",
			"persistlab run ebs-git --shard 0/7 --shard-by backend --out shard-0.json",
			"persistlab run gcsfuse-cache --quick --format json > summary.json   # a summary for scripts on stdout, the rest on stderr",
			"persistlab run cloudrun-sqlite --quick --samples samples.jsonl --openmetrics metrics.txt",
			"persistlab run gcsfuse-cache --quick --fio-json fio-reports/   # fio's own JSON of every cell, for fio's tools",
		}},
		{name: "advise", args: "--rate N --require EXPR... [flags]", summary: "where should my app's data live: every storage design measured at your rate, ranked by your requirements and the bill", run: cmdAdvise, exits: adviseExitStatuses, examples: []string{
			"persistlab advise --rate 50 --require 'p95 < 100ms' --require 'lost_acked == 0' --require 'usd_per_month < 30'",
			"persistlab advise --app rails --rate 20 --require 'p95 < 200ms' --require 'lost_acked <= 1s'   # the seed's Rails app on Cloud Run",
			"persistlab advise --platform n1-standard-2 --rate 100 --require 'p99 < 50ms' --dry-run   # the candidates and the plan on a GCE VM",
		}},
		{name: "scenarios", args: "[show NAME [--provenance [--profile F]]]", summary: "list the built-in scenarios, print one, or where its figures come from", run: withoutCtx(cmdScenarios), examples: []string{
			"persistlab scenarios show cloudrun-sqlite > my-app.yaml   # a scenario to edit",
			"persistlab scenarios show gcsfuse-cache --provenance",
		}},
		{name: "backends", args: "[--markdown]", summary: "every backend and its options: kind, default, unit, what each does", run: toStdout(cmdBackends)},
		{name: "workloads", args: "[--markdown]", summary: "every workload: its parameters, sections and metrics", run: toStdout(cmdWorkloads)},
		{name: "report", args: "RESULTS.json|SHARD.json... [--format json|markdown] [flags]", summary: "tables again, a JSON summary or Markdown, a seed's scoreboard; HTML, CSV, samples, OpenMetrics", run: withoutCtx(cmdReport), exits: runExitStatuses, examples: []string{
			"persistlab report results.json --html results.html",
			"persistlab report results.json --threshold 'error_rate < 1%'",
			"persistlab report results.json --format json | jq '.rows[] | {backend, point, p95: .median.p95_ms}'",
			"persistlab report results.json --format markdown > comment.md   # the tables for a pull request's comment",
			"persistlab report results.json --samples samples.jsonl   # one {metric, value, unit, labels, timestamp} per line",
			"persistlab report results.json --openmetrics metrics.txt   # a gauge per metric, for a CI dashboard",
			"persistlab report --scoreboard --format markdown docs/runs/ebs-git-def3e16/shard-*.json   # a seed's scoreboard from a run's shards, as docs/fidelity.md holds it",
		}},
		{name: "compare", args: "A.json B.json", summary: "B against A, cell by cell, with verdicts where runs allow", run: withoutCtx(cmdCompare), examples: []string{
			"persistlab compare before.json after.json",
		}},
		{name: "merge", args: "SHARD.json... --out F", summary: "join the results of a run's shards (run --shard I/N)", run: withoutCtx(cmdMerge), examples: []string{
			"persistlab merge shard-*.json --out all.json",
		}},
		{name: "version", args: "[--json]", summary: "persistlab's commit and Go, and the versions of the programs it drives", run: toStdout(cmdVersion), examples: []string{
			"persistlab version",
			"persistlab version --json | jq -r .programs.fio.version",
		}},
		{name: "clean", args: "[DIR...] [--dry-run]", summary: "remove what killed runs left (mounts, processes, work dirs) and killed bucket probes' objects", run: withoutCtx(cmdClean), examples: []string{
			"persistlab clean --dry-run        # what killed runs left in the temporary directory",
			"persistlab clean /scratch/run-1   # a run's --workdir elsewhere",
		}},
		{name: "app counter", args: "--db PATH [flags]", summary: "run the counter app (the system under test)", run: appCmd("counter")},
		{name: "app gitcommit", args: "--dir DIR [flags]", summary: "seed 004's loop alone: write, git add, git commit, per change", run: withoutCtx(cmdAppGitcommit)},
		{name: "app hello", args: "[flags]", summary: "a trivial handler, for driver benchmarks", run: appCmd("hello"), hidden: true},
		{name: "load", args: "--url URL [flags]", summary: "drive HTTP load at any endpoint on loopback", run: cmdLoad, signals: true, examples: []string{
			"persistlab load --url http://127.0.0.1:8080/count_up --vus 8 --duration 30s",
			"persistlab load --url http://127.0.0.1:8080/ --method GET --rate 200 --duration 1m   # open loop",
		}},
		{name: "lab serve", args: "[flags]", summary: "run the emulated GCS bucket alone", run: cmdLabServe, signals: true, examples: []string{
			"persistlab lab serve --listen 127.0.0.1:4443 --bucket mybucket   # then gcsfuse --custom-endpoint=http://localhost:4443/storage/v1/",
		}},
		{name: "lab volume", args: "--type T --size S --mount DIR", summary: "an emulated cloud volume for your own tools", run: cmdLabVolume, examples: []string{
			"persistlab lab volume --type gp3 --size 100GiB --mount /mnt/gp3   # Ctrl-C unmounts it",
			"persistlab lab volume --type st1 --size 500GiB --mount /mnt/st1 --credit-scale 0.01",
		}},
		{name: "lab volumes", args: "[--probe 512MiB]", summary: "which volume types the emulator gives at their published maximum here", run: cmdLabVolumes},
		{name: "calibrate bucket", args: "--bucket NAME [--endpoint URL] [flags]", summary: "measure a real bucket with a small probe: a profile for run --profile", run: cmdCalibrateBucket, signals: true, examples: []string{
			"persistlab calibrate bucket --bucket my-bucket --out my-bucket.yaml   # on a VM in the bucket's region, with its service account",
			"persistlab calibrate bucket --bucket my-bucket --key-file key.json --max-usd 0.01",
			"persistlab calibrate bucket --endpoint http://localhost:4443/storage/v1/ --bucket persistlab   # a lab serve",
		}},
		{name: "calibrate volume", args: "--dir DIR [--type T] [--long] [flags]", summary: "measure a mounted volume with fio on one file of its own: a profile for run --profile", run: cmdCalibrateVolume, signals: true, examples: []string{
			"persistlab calibrate volume --dir /mnt/data --type gp3 --out my-gp3.yaml   # on the EC2 instance the volume is attached to",
			"persistlab calibrate volume --dir /mnt/disk --type pd-balanced   # on a GCE VM",
			"persistlab calibrate volume --dir /mnt/gp2 --type gp2 --long --drain-max 45m   # until gp2's burst bucket empties too",
		}},
		{name: "calibrate instance", args: "--target PROBE.json [--here PROBE.json] [flags]", summary: "the target's speed against this machine, from its probe and this machine's: a profile for run --profile", run: cmdCalibrateInstance, signals: true, examples: []string{
			"persistlab calibrate instance --target vm-1.json --out vm-1.yaml   # runs the probe here, then compares",
			"persistlab calibrate instance --target cloudrun.json --here lab.json --out cloudrun.yaml",
		}},
		{name: "probe", args: "[--out FILE.json] [--dir DIR] [--fuse-dir DIR] [flags]", summary: "time fixed reference work (CPU, file system calls) on this machine, a target: the probe calibrate instance reads", run: cmdProbe, signals: true, examples: []string{
			"persistlab probe --out vm-1.json   # on the VM your app runs on; then calibrate instance --target vm-1.json here",
			"persistlab probe --dir /mnt/data --out vm-1.json   # the file system calls on the app's volume",
			"persistlab probe --out -   # the probe's JSON on standard output (a Cloud Run job's log)",
		}},
		{name: "lab model", args: "[app|bucket|instance|prices|volume|all] [--markdown] [--profile F]", summary: "each model figure: published, assumed, fitted or measured", run: toStdout(cmdLabModel)},
		{name: "completion", args: "bash|zsh", summary: "a shell completion script for commands, flags and scenarios", run: toStdout(cmdCompletion), examples: []string{
			"source <(persistlab completion bash)   # in ~/.bashrc",
			"source <(persistlab completion zsh)    # in ~/.zshrc, after compinit",
		}},
	}
}

// withoutCtx runs a command that does its work without a context.
func withoutCtx(f func([]string) error) func(context.Context, []string) error {
	return func(_ context.Context, args []string) error { return f(args) }
}

// toStdout runs a command that prints to a writer, for its tests, on standard output.
func toStdout(f func([]string, io.Writer) error) func(context.Context, []string) error {
	return func(_ context.Context, args []string) error { return f(args, os.Stdout) }
}

// appCmd runs app counter or app hello.
func appCmd(which string) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error { return cmdApp(ctx, which, args) }
}

// usage is the usage text, from cmds.
func usage(cmds []command) string {
	var b strings.Builder
	b.WriteString("persistlab: where should an app's data live, and what does that cost?\n\nusage:\n")
	for _, c := range cmds {
		if c.hidden {
			continue
		}
		b.WriteString(usageLine(c) + "\n")
	}
	b.WriteString("\nRun \"persistlab COMMAND -h\" for a command's flags.\n")
	return b.String()
}

// usageLine is a command's line in the usage: its summary at column 46, or 3 spaces after a
// longer invocation.
func usageLine(c command) string {
	invocation := "persistlab " + c.name
	if c.args != "" {
		invocation += " " + c.args
	}
	gap := 44 - len(invocation)
	if gap < 2 {
		gap = 3
	}
	return "  " + invocation + strings.Repeat(" ", gap) + c.summary
}

// find is the command args name, with the arguments that follow its name; ok false when args name
// none (an unknown command, or a command's missing or unknown subcommand).
func find(cmds []command, args []string) (c command, rest []string, ok bool) {
	for _, c := range cmds {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], true
		}
	}
	return command{}, nil, false
}

func main() {
	cmds := commands()
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage(cmds))
		os.Exit(2)
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Print(usage(cmds))
		return
	}
	cmd, args, ok := find(cmds, os.Args[1:])
	if !ok && len(os.Args) > 2 && helpAt(os.Args[2:3]) == 0 && writeGroupHelp(os.Stdout, cmds, name) {
		return // lab -h, app -h
	}
	if i := helpAt(args); ok && i >= 0 {
		if err := writeHelp(os.Stdout, cmd, args[:i+1]); err != nil {
			fmt.Fprintf(terminalSafe(os.Stderr), "persistlab %s: %v\n", name, err)
			os.Exit(1)
		}
		return
	}
	if !ok {
		var subs []string
		for _, c := range cmds {
			if strings.HasPrefix(c.name, name+" ") && !c.hidden {
				subs = append(subs, usageLine(c))
			}
		}
		if len(subs) > 0 { // a command whose subcommand is missing or unknown
			fmt.Fprintf(os.Stderr, "persistlab %s: want one of:\n%s\n", name, strings.Join(subs, "\n"))
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "persistlab: unknown command %q\n\n%s", name, usage(cmds))
		os.Exit(2)
	}
	ctx := context.Background()
	if cmd.signals {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	if err := cmd.run(ctx, args); err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if err.Error() != "" { // names in it may come from a file: no control character reaches the terminal
			fmt.Fprintf(terminalSafe(os.Stderr), "persistlab %s: %v\n", cmd.name, err)
		}
		if isFlagMistake(err) {
			fmt.Fprintf(os.Stderr, "(persistlab %s -h lists its flags)\n", cmd.name)
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
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &flagMistake{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// flagMistake is a flag the command does not know, or a value its flag does not parse.
type flagMistake struct{ err error }

func (e *flagMistake) Error() string { return e.err.Error() }
func (e *flagMistake) Unwrap() error { return e.err }

func isFlagMistake(err error) bool {
	var m *flagMistake
	return errors.As(err, &m)
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
