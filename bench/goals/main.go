// Command goals prints, as one table, every goal row the benchmarks of a `make bench` run
// gathered (internal/benchgoal), so the figures issue 23 asks for read in one place.
package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"persistlab/internal/benchgoal"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goals ROWS.tsv (the file make bench names in "+benchgoal.FileEnv+")")
		os.Exit(2)
	}
	rows, err := benchgoal.Load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "goals:", err)
		os.Exit(1)
	}
	met := 0
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tmeasured\tgoal\t\tbasis")
	for _, r := range rows {
		if r.Met() {
			met++
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%s %.3f\t%s\t%s\n", r.Name, r.Got, r.Op, r.Goal, r.Verdict(), r.Basis)
	}
	tw.Flush()
	fmt.Printf("\n%d of %d goals met\n", met, len(rows))
}
