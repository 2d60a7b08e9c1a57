// Command advise times `persistlab advise` answering, at its default budget (issue 37's goal: 15
// minutes), from a fresh directory so that nothing is reused, the Cloud Run question for the seed's
// Rails app (--app rails) or the EBS question for seed 004's git crawler (--app git), and says how
// many candidates it measured and what it answered.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"persistlab/internal/benchgoal"
)

// Goal is issue 37's: an answer within the default budget on this machine.
const Goal = 15 * time.Minute

func main() {
	self := flag.String("persistlab", "bin/persistlab", "persistlab binary")
	app := flag.String("app", "rails", "the app advise measures")
	flag.Parse()
	work, err := os.MkdirTemp("", "persistlab-bench-advise-")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(work)
	question := map[string][]string{
		"git": {"--require", "lost_acked <= 1s", "--require", "usd_per_month < 20"}, // on the seed's c4.large
	}
	requires, ok := question[*app]
	if !ok {
		requires = []string{"--require", "p95 < 100ms", "--require", "lost_acked <= 1s", "--require", "usd_per_month < 80"} // on Cloud Run
	}
	args := append([]string{"advise", "--app", *app, "--rate", "20", "--dir", filepath.Join(work, "advise"), "--format", "json"}, requires...)
	start := time.Now()
	cmd := exec.Command(*self, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 4) {
		fail("persistlab %s: %v", strings.Join(args, " "), err)
	}
	var a struct {
		Answer string            `json:"answer"`
		Ranked []json.RawMessage `json:"ranked"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		fail("advise's JSON: %v", err)
	}
	fmt.Printf("%s: %d candidates ranked in %s\nanswer: %s\n", strings.Join(args[:4], " "), len(a.Ranked), wall.Round(time.Second), a.Answer)
	row := benchgoal.Row{Name: "advise --app " + *app + ": wall minutes", Got: wall.Minutes(), Op: "<=", Goal: Goal.Minutes(),
		Basis: fmt.Sprintf("%d candidates, the default --time 15m, nothing reused", len(a.Ranked))}
	if err := benchgoal.Report(os.Stdout, row); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}
