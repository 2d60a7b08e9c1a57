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
	"persistlab/results"
	"persistlab/scenario"
)

func cmdReport(args []string) error {
	fs := newFlags("report")
	htmlOut := fs.String("html", "", "also write a self-contained HTML page with charts to this file")
	csvOut := fs.String("csv", "", "also write every cell's summary as CSV to this file")
	force := fs.Bool("force", false, "replace existing --html and --csv files")
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
	type output struct {
		flag, path string
		write      func(io.Writer) error
	}
	var outputs []output
	for _, o := range []output{{"--html", *htmlOut, nil}, {"--csv", *csvOut, nil}} {
		if o.path == "" {
			continue
		}
		if sameFile(o.path, positional[0]) {
			return fmt.Errorf("%s %s is the results file being read: want another path for the output", o.flag, o.path)
		}
		if o.path, err = results.OutputPath(o.flag, o.path, *force); err != nil {
			return err
		}
		for _, other := range outputs {
			if other.path == o.path {
				return fmt.Errorf("%s and %s name one file, %s: want a file each", other.flag, o.flag, o.path)
			}
		}
		outputs = append(outputs, o)
	}
	r, err := report.Load(positional[0])
	if err != nil {
		return err
	}
	if r.Scenario == nil {
		return fmt.Errorf("%s: the results file records no scenario", positional[0])
	}
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
	report.WriteView(terminalSafe(os.Stdout), r, v)
	for _, o := range outputs {
		write := func(w io.Writer) error { return report.WriteHTML(w, r) }
		if o.flag == "--csv" {
			write = func(w io.Writer) error { return report.WriteCSV(w, r) }
		}
		if err := writeWhole(o.path, write); err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		fmt.Printf("wrote %s\n", o.path)
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
