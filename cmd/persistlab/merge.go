package main

import (
	"fmt"
	"os"

	"persistlab/report"
	"persistlab/results"
)

// cmdMerge joins the results files of one run's shards (run --shard I/N on several machines)
// into the file one machine would have written.
func cmdMerge(args []string) error {
	fs := newFlags("merge")
	out := fs.String("out", "", "the merged results file to write")
	force := fs.Bool("force", false, "replace an existing --out file")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) == 0 || *out == "" {
		return fmt.Errorf("want the shards' results files and --out, e.g. persistlab merge shard-0.json shard-1.json --out all.json")
	}
	path, err := results.OutPath(*out, *force)
	if err != nil {
		return err
	}
	for _, p := range positional {
		if sameFile(p, path) {
			return fmt.Errorf("--out %s is one of the shards being read: want another path", *out)
		}
	}
	merged, err := results.MergeFiles(positional)
	if err != nil {
		return err
	}
	merged.Command = os.Args
	unlock, err := results.Lock(path)
	if err != nil {
		return fmt.Errorf("--out %s: %w", *out, err)
	}
	defer unlock()
	if err := merged.Save(path, report.Summarize); err != nil {
		return err
	}
	fmt.Printf("merged %d shards of %s: %d of %d cells, %s\nresults: %s\n", len(positional), merged.Scenario.Name,
		len(merged.Cells)+len(merged.Crashes), merged.PlanCells, merged.Status, path)
	if merged.Status != results.StatusComplete {
		return fmt.Errorf("merge: %s", merged.Error)
	}
	return nil
}
