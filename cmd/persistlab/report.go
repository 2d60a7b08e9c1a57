package main

import (
	"flag"
	"fmt"
	"os"

	"persistlab/report"
)

func cmdReport(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	htmlOut := fs.String("html", "", "also write a self-contained HTML page with charts to this file")
	csvOut := fs.String("csv", "", "also write every cell's summary as CSV to this file")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return fmt.Errorf("want one results file, e.g. persistlab report results.json --html report.html")
	}
	r, err := report.Load(positional[0])
	if err != nil {
		return err
	}
	report.WriteTables(os.Stdout, r)
	for _, out := range []struct {
		path  string
		write func(*os.File) error
	}{
		{*htmlOut, func(f *os.File) error { return report.WriteHTML(f, r) }},
		{*csvOut, func(f *os.File) error { return report.WriteCSV(f, r) }},
	} {
		if out.path == "" {
			continue
		}
		if sameFile(out.path, positional[0]) {
			return fmt.Errorf("%s is the results file being read: want another path for the output", out.path)
		}
		f, err := os.Create(out.path)
		if err != nil {
			return err
		}
		if err := out.write(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", out.path, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Printf("wrote %s\n", out.path)
	}
	return nil
}

func cmdCompare(args []string) error {
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
	report.WriteComparison(os.Stdout, args[0], args[1], a, b)
	return nil
}

// sameFile says whether a and b name one existing file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
