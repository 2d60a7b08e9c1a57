package main

import (
	"fmt"
	"os"

	"persistlab/report"
)

func cmdReport(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want one results file, e.g. persistlab report results.json")
	}
	r, err := report.Load(args[0])
	if err != nil {
		return err
	}
	report.WriteTables(os.Stdout, r)
	return nil
}
