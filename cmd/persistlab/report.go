package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"persistlab/param"
	"persistlab/report"
	_ "persistlab/report/all" // every workload's presenter and seed scores
	"persistlab/results"
	"persistlab/scenario"
)

func cmdReport(args []string) error {
	fs := newFlags("report")
	htmlOut := fs.String("html", "", "also write a self-contained HTML page with charts to this file")
	csvOut := fs.String("csv", "", "also write every cell's summary as CSV to this file")
	exports := addExportFlags(fs)
	force := fs.Bool("force", false, "replace existing --html, --csv, --samples and --openmetrics files")
	view := viewFlags(fs)
	var added listFlag
	fs.Var(&added, "threshold", `judge the file's rows by one more criterion, e.g. "p95 < 200ms" (repeatable); a crossed threshold exits 4, as run does`)
	scoreboard := fs.Bool("scoreboard", false, "print the seed's scoreboard alone (its headline figures beside ours, and the tally) as --format asks: the tables docs/fidelity.md carries")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) == 0 {
		return fmt.Errorf("want a results file, or the files of one run's shards, e.g. persistlab report results.json --html report.html")
	}
	v, err := view()
	if err != nil {
		return err
	}
	if *scoreboard && (v != report.ViewTables || len(added) > 0) {
		return fmt.Errorf("--scoreboard prints the scoreboard alone: want no --brief, --detail or --threshold beside it")
	}
	if err := exports.check(); err != nil {
		return err
	}
	files := append([]output{
		{"--html", *htmlOut, report.WriteHTML},
		{"--csv", *csvOut, report.WriteCSV},
	}, exports.files()...)
	read := map[string]string{"the results file being read": positional[0]}
	if len(positional) > 1 {
		read = map[string]string{}
		for i, p := range positional {
			read[fmt.Sprintf("the results file being read (%d of %d)", i+1, len(positional))] = p
		}
	}
	outputs, err := checkOutputs(files, *force, read)
	if err != nil {
		return err
	}
	r, err := loadResults(positional)
	if err != nil {
		return err
	}
	declareUnits(r)
	if *scoreboard {
		if err := writeScoreboard(terminalSafe(os.Stdout), r, exports.format); err != nil {
			return err
		}
		return writeOutputs(outputs, r, exports.said())
	}
	for _, text := range added {
		t, err := scenario.ParseThreshold(text)
		var fe *param.FieldError
		if errors.As(err, &fe) {
			return &param.FieldError{Field: "--threshold", Value: text, Allowed: fe.Allowed}
		}
		r.Scenario.Thresholds = append(r.Scenario.Thresholds, t)
	}
	for _, j := range report.Judge(r) {
		if j.Err != nil { // a metric this file's rows do not carry: said before any table
			return j.Err
		}
	}
	if err := exports.writeFormat(terminalSafe(os.Stdout), r, v); err != nil {
		return err
	}
	if err := writeOutputs(outputs, r, exports.said()); err != nil {
		return err
	}
	if _, crossed := report.Verdict(r); len(crossed) > 0 {
		return &exitError{code: exitThreshold, err: fmt.Errorf("thresholds crossed:\n  %s", strings.Join(crossed, "\n  "))}
	}
	return nil
}

// loadResults reads a results file, or joins the files of one run's shards in memory as
// persistlab merge would.
func loadResults(paths []string) (*results.Results, error) {
	if len(paths) == 1 {
		r, err := report.Load(paths[0])
		if err != nil {
			return nil, err
		}
		if r.Scenario == nil {
			return nil, fmt.Errorf("%s: the results file records no scenario", paths[0])
		}
		return r, nil
	}
	r, err := results.MergeFiles(paths)
	if err != nil {
		return nil, fmt.Errorf("%d results files: want one file, or the shards of one run: %w", len(paths), err)
	}
	report.Summarize(r)
	return r, nil
}

// writeScoreboard prints the run's scoreboard in format, or says that its scenario scores no seed.
func writeScoreboard(w io.Writer, r *results.Results, format string) error {
	if len(report.Scoreboard(r)) == 0 {
		seed := "no seed"
		if r.Scenario.Seed != "" {
			seed = "seed " + r.Scenario.Seed
		}
		return fmt.Errorf("--scoreboard: %s (%s) has no scoreboard: want a run of a scenario of seed %s", r.Scenario.Name, seed, strings.Join(report.ScoredSeeds(), ", "))
	}
	switch format {
	case "json":
		return report.WriteScoreboardJSON(w, r)
	case "markdown":
		return report.WriteScoreboardMarkdown(w, r)
	}
	var b strings.Builder
	report.WriteScoreboard(&b, r)
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
	return err
}

// writeWhole writes path through a temporary file renamed over it only when write succeeded: a
// failure leaves no empty or half-written file.
func writeWhole(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil { // on disk before it takes the name
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func cmdCompare(args []string) error {
	args, err := parseInterspersed(newFlags("compare"), args)
	if err != nil {
		return err
	}
	if len(args) != 2 {
		return fmt.Errorf("want two results files: persistlab compare BASELINE.json NEW.json")
	}
	a, err := report.Load(args[0])
	if err != nil {
		return err
	}
	b, err := report.Load(args[1])
	if err != nil {
		return err
	}
	report.WriteComparison(terminalSafe(os.Stdout), args[0], args[1], a, b)
	return nil
}

// sameFile says whether a and b name one existing file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// viewFlags declares --brief and --detail; the function it returns is the view they chose.
func viewFlags(fs *flag.FlagSet) func() (report.View, error) {
	brief := fs.Bool("brief", false, "the answer alone (with failures and thresholds): what a CI log or a first look needs")
	detail := fs.Bool("detail", false, "every analysis besides the tables: what still differs from the seed and why, each row bound by this machine, the lab's ceilings")
	return func() (report.View, error) {
		switch {
		case *brief && *detail:
			return 0, fmt.Errorf("--brief and --detail: want one of them (--brief: the answer alone; --detail: every analysis)")
		case *brief:
			return report.ViewBrief, nil
		case *detail:
			return report.ViewDetail, nil
		}
		return report.ViewTables, nil
	}
}
