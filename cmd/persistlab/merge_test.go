package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"persistlab/results"
	"persistlab/scenario"
)

// writeShard saves shard index of 2 of a plan of cells*2 cells, holding every second cell, each
// with a histogram of body bytes.
func writeShard(t *testing.T, path string, index, cells, body int) int64 {
	t.Helper()
	r := &results.Results{Schema: results.Schema, Status: results.StatusComplete, Scenario: &scenario.Spec{Name: "s"},
		Shard: &scenario.Shard{Index: index, Of: 2, By: scenario.ShardByPoint}, PlanCells: 2 * cells, Versions: map[string]string{"fio": "3"}}
	for i := 0; i < cells; i++ {
		r.Cells = append(r.Cells, results.Cell{Cell: scenario.Cell{Index: 2*i + index, Backend: "b"},
			Histograms: map[string]string{"latency": fmt.Sprintf("%0*d", body, i)}})
	}
	if err := r.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// merge checks the shards' headers and cells' identities while it streams them: three copies of
// one shard are refused having held less than one of them, not after loading them all.
func TestMergeChecksShardsBeforeHoldingThem(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "shard-0.json")
	size := writeShard(t, first, 0, 2000, 2000)
	writeShard(t, filepath.Join(dir, "shard-1.json"), 1, 2000, 2000)
	data, _ := os.ReadFile(first)
	args := []string{first}
	for _, name := range []string{"copy-a.json", "copy-b.json"} {
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
		args = append(args, filepath.Join(dir, name))
	}
	args = append(args, filepath.Join(dir, "shard-1.json"), "--out", filepath.Join(dir, "all.json"))
	data = nil
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := cmdMerge(args)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "held by more than one shard") {
		t.Fatalf("three copies of a shard: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n >= uint64(size) {
		t.Errorf("allocated %d bytes before refusing the copies of a %d-byte shard", n, size)
	}
	if want := "cells 0, 2, 4, "; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "("+first+" and "+args[1]+")") {
		t.Errorf("want %q and the two files named: %v", want, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "all.json")); err == nil {
		t.Error("a refused merge wrote its --out")
	}
}

// A hand-edited shard of a few hundred bytes cannot make merge hold its plan or its split: both
// are refused, naming the field, the value and the bound run keeps.
func TestMergeRefusesAHandEditedPlanOrSplit(t *testing.T) {
	dir := t.TempDir()
	write := func(planCells, of int) string {
		p := filepath.Join(dir, fmt.Sprintf("plan-%d-of-%d.json", planCells, of))
		doc := fmt.Sprintf(`{"schema":%q,"status":"complete","scenario":{"name":"s"},"shard":{"index":0,"of":%d,"by":"point"},"plan_cells":%d,"cells":[{"index":0,"backend":"b"}]}`, results.Schema, of, planCells)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "all.json")
	if _, stderr, err := persistlab(t, "merge", write(scenario.MaxCells+1, 2), "--out", out); err == nil || !strings.Contains(stderr, `plan_cells: "100001" is not allowed`) {
		t.Fatalf("a plan of MaxCells+1 cells: %v\n%s", err, stderr)
	}
	for _, c := range []struct {
		path, want string
	}{
		{write(3000000000, 2), `plan_cells: "3000000000" is not allowed: want a plan of 1 to 100000 cells`},
		{write(4, 2000000000), `shard.of: "2000000000" is not allowed: want from 1 to 10000 shards`},
	} {
		if _, stderr, err := persistlab(t, "merge", c.path, "--out", out); err == nil || !strings.Contains(stderr, c.path+": "+c.want) {
			t.Errorf("%s: %v\n%s", c.path, err, stderr)
		}
	}
}
