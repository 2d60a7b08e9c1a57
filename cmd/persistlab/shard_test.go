package main

import (
	"path/filepath"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
)

// Two shards of one plan, run as two machines would run them and merged, hold every cell of the
// plan once; the merged file reports like any other.
func TestShardsRunAndMerge(t *testing.T) {
	work := t.TempDir()
	common := []string{"run", "cloudrun-sqlite", "--backend", "local", "--vus", "1,2,3", "--duration", "1s", "--warmup", "0s", "--repeat", "1"}
	var files []string
	for i, share := range []string{"0/2", "1/2"} {
		out := filepath.Join(work, "shard-"+share[:1]+".json")
		if stdout, stderr, err := persistlab(t, append(common, "--shard", share, "--out", out)...); err != nil {
			t.Fatalf("shard %d: %v\n%s\n%s", i, err, stdout, stderr)
		}
		files = append(files, out)
	}
	all := filepath.Join(work, "all.json")
	stdout, stderr, err := persistlab(t, "merge", files[0], files[1], "--out", all)
	if err != nil || !strings.Contains(stdout, "3 of 3 cells, complete") {
		t.Fatalf("merge: %v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(all)
	if err != nil || r.Status != results.StatusComplete || len(r.Cells) != 3 || len(r.Merged) != 2 || len(r.Aggregates) != 3 {
		t.Fatalf("merged file: %v, %+v", err, r)
	}
	for i, c := range r.Cells {
		if c.Index != i || c.Failure != "" || c.M("ok") <= 0 {
			t.Errorf("cell %d: %+v", i, c.Cell)
		}
	}
	if stdout, _, err := persistlab(t, "report", all); err != nil || !strings.Contains(stdout, "vus") || !strings.Contains(stdout, "merged from 2 shards (split by point)") {
		t.Errorf("report of the merged file: %v\n%s", err, stdout)
	}
	if stdout, _, err := persistlab(t, "report", files[1]); err != nil || !strings.Contains(stdout, "shard 1/2 by point: 1 of the plan's 3 cells") {
		t.Errorf("report of a shard: %v\n%s", err, stdout)
	}
	// One shard alone is refused, naming the missing one; so is a share the plan cannot deal.
	if _, stderr, err := persistlab(t, "merge", files[0], "--out", filepath.Join(work, "half.json")); err == nil || !strings.Contains(stderr, "1/2") {
		t.Errorf("a missing shard: %v\n%s", err, stderr)
	}
	if _, stderr, err := persistlab(t, append(common, "--shard", "0/4", "--out", filepath.Join(work, "x.json"))...); err == nil || !strings.Contains(stderr, "at most 3 shards") {
		t.Errorf("more shards than sweep points: %v\n%s", err, stderr)
	}
}
