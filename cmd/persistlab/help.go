package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpFlags is the flag set the command asked for help last declared (newFlags): what its help
// lists.
var helpFlags *flag.FlagSet

// newFlags is a command's flag set. It prints nothing: help goes to standard output, a mistake to
// standard error, both from main.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	helpFlags = fs
	return fs
}

// helpAt is the index of a -h, -help or --help in args (before a "--"), or -1.
func helpAt(args []string) int {
	for i, a := range args {
		switch a {
		case "--":
			return -1
		case "-h", "-help", "--help":
			return i
		}
	}
	return -1
}

// exitStatuses of every command but run's.
const exitStatuses = `  0  done
  1  it could not be done: a mistake in a flag, an argument or a file (said on standard error)`

// runExitStatuses of persistlab run (and report's thresholds).
const runExitStatuses = `  0  every cell ran and every row met its thresholds
  1  the run could not start: a mistake in the scenario, a flag or the machine (said on standard error)
  3  some cells failed; the others' results were kept, with the failed cells' logs
  4  every cell ran, but a row crossed a threshold (thresholds:, --threshold, max_error_rate)
  130, 143  interrupted by SIGINT or SIGTERM; what was measured was kept`

const adviseExitStatuses = `  0  some candidate meets every requirement
  1  advise could not start (a mistake in a flag, said on standard error), or a candidate's runs failed (the ranking marks what they could not tell)
  4  every candidate ran, and none meets every requirement
  130, 143  interrupted by SIGINT or SIGTERM; the ranking holds the candidates measured`

// writeHelp prints c's help: its usage line and summary, its flags, examples and exit statuses.
// The flags are those c declares when it parses args (up to and with the -h), which it does
// before anything else.
func writeHelp(w io.Writer, c command, args []string) error {
	helpFlags = nil
	if err := c.run(context.Background(), args); err != nil && !errors.Is(err, flag.ErrHelp) {
		return err
	}
	fmt.Fprintf(w, "%s\n\n%s\n", strings.TrimSpace("usage: persistlab "+c.name+" "+c.args), c.summary)
	if helpFlags != nil {
		var b strings.Builder
		helpFlags.SetOutput(&b)
		helpFlags.PrintDefaults()
		if b.Len() > 0 {
			fmt.Fprintf(w, "\nflags:\n%s", b.String())
		}
	}
	if len(c.examples) > 0 {
		fmt.Fprintf(w, "\nexamples:\n")
		for _, e := range c.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	statuses := exitStatuses
	if c.exits != "" {
		statuses = c.exits
	}
	fmt.Fprintf(w, "\nexit status:\n%s\n", statuses)
	return nil
}

// writeGroupHelp prints the subcommands of a command that has only subcommands (lab, app).
func writeGroupHelp(w io.Writer, cmds []command, group string) bool {
	var subs []string
	for _, c := range cmds {
		if strings.HasPrefix(c.name, group+" ") && !c.hidden {
			subs = append(subs, usageLine(c))
		}
	}
	if len(subs) == 0 {
		return false
	}
	fmt.Fprintf(w, "usage: persistlab %s SUBCOMMAND [flags]\n\n%s\n\nRun \"persistlab %s SUBCOMMAND -h\" for a subcommand's flags.\n", group, strings.Join(subs, "\n"), group)
	return true
}
