package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"persistlab/report"
	_ "persistlab/report/all" // every workload's presenter and seed scores
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
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return fmt.Errorf("want one results file, e.g. persistlab report results.json --html report.html")
	}
	v, err := view()
	if err != nil {
		return err
	}
	if err := exports.check(); err != nil {
		return err
	}
	files := append([]output{
		{"--html", *htmlOut, report.WriteHTML},
		{"--csv", *csvOut, report.WriteCSV},
	}, exports.files()...)
	outputs, err := checkOutputs(files, *force, map[string]string{"the results file being read": positional[0]})
	if err != nil {
		return err
	}
	r, err := report.Load(positional[0])
	if err != nil {
		return err
	}
	if r.Scenario == nil {
		return fmt.Errorf("%s: the results file records no scenario", positional[0])
	}
	declareUnits(r)
	for _, text := range added {
		t, err := scenario.ParseThreshold(text)
		var fe *scenario.FieldError
		if errors.As(err, &fe) {
			return &scenario.FieldError{Field: "--threshold", Value: text, Allowed: fe.Allowed}
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
