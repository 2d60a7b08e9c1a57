// Command shards runs one small plan twice with persistlab's binary: in one process, and as three
// shards merged (persistlab merge), and checks the merged file holds the one-process run's cells
// by identity (index, backend entry, parameters, repeat), each measured once and none failed.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"persistlab/internal/benchgoal"
	"persistlab/results"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	self := flag.String("persistlab", "bin/persistlab", "persistlab binary")
	flag.Parse()
	work, err := os.MkdirTemp("", "persistlab-bench-shards-")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(work)
	plan := []string{"run", "cloudrun-sqlite", "--backend", "local,litestream", "--vus", "1,2,3", "--duration", "1s", "--warmup", "0s", "--repeat", "1"}
	run := func(args ...string) {
		cmd := exec.Command(*self, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			fail("persistlab %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	whole := filepath.Join(work, "whole.json")
	run(append(plan, "--out", whole)...)
	var shards []string
	for i := range 3 {
		out := filepath.Join(work, fmt.Sprintf("shard-%d.json", i))
		run(append(plan, "--shard", fmt.Sprintf("%d/3", i), "--out", out)...)
		shards = append(shards, out)
	}
	merged := filepath.Join(work, "merged.json")
	run(append(append([]string{"merge"}, shards...), "--out", merged)...)

	one, err := results.Load(whole)
	if err != nil {
		fail("%v", err)
	}
	all, err := results.Load(merged)
	if err != nil {
		fail("%v", err)
	}
	identity := func(c results.Cell) string {
		var params []string
		for _, k := range slices.Sorted(maps.Keys(c.Resolved)) {
			params = append(params, k+"="+c.Resolved[k])
		}
		return fmt.Sprintf("%d %s r%d %s", c.Index, c.Backend, c.Repeat, strings.Join(params, " "))
	}
	held := map[string]int{}
	for _, c := range all.Cells {
		if c.Failure == "" {
			held[identity(c)]++
		}
	}
	same := 0
	for _, c := range one.Cells {
		if held[identity(c)] == 1 {
			same++
		}
	}
	fmt.Printf("one process: %d cells; 3 shards merged: %d cells, %d of them the one-process run's by identity\n", len(one.Cells), len(all.Cells), same)
	share := float64(same) / float64(max(len(one.Cells), len(all.Cells)))
	if err := benchgoal.Report(os.Stdout, benchgoal.Row{Name: "shards merged: the one-process run's cells, by identity", Got: share, Op: ">=", Goal: 1,
		Basis: fmt.Sprintf("bench/shards: %s as 3 shards and merged (%d cells)", strings.Join(plan[1:], " "), len(one.Cells))}); err != nil {
		fail("%v", err)
	}
}
