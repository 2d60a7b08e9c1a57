package results

import (
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"persistlab/scenario"
)

func shardOf(i, of, plan int, status string, indexes ...int) *Results {
	r := &Results{Schema: Schema, Status: status, Scenario: &scenario.Spec{Name: "s"}, Shard: &scenario.Shard{Index: i, Of: of, By: scenario.ShardByPoint},
		PlanCells: plan, Versions: map[string]string{"fio": "3"}, Notes: []string{"a note"}}
	for _, n := range indexes {
		r.Cells = append(r.Cells, Cell{Cell: scenario.Cell{Index: n, Backend: "b"}})
	}
	return r
}

// A shard that did not finish keeps what it measured: the merge is failed and names the cells
// no shard measured; a complete set of shards merges complete, cells in plan order.
func TestMergeKeepsAFailedShardsCells(t *testing.T) {
	m, err := Merge([]*Results{shardOf(1, 2, 4, StatusComplete, 1, 3), shardOf(0, 2, 4, StatusComplete, 0, 2)})
	if err != nil || m.Status != StatusComplete || len(m.Cells) != 4 || m.Cells[0].Index != 0 || m.Cells[3].Index != 3 {
		t.Fatalf("complete: %+v, %v", m, err)
	}
	if len(m.Notes) != 2 || !strings.HasPrefix(m.Notes[0], "shard 1/2 by point: ") {
		t.Errorf("notes %v", m.Notes)
	}
	failed := shardOf(1, 2, 4, StatusInterrupted, 1)
	failed.Error = "interrupted by interrupt"
	m, err = Merge([]*Results{shardOf(0, 2, 4, StatusComplete, 0, 2), failed})
	if err != nil || m.Status != StatusFailed || len(m.Cells) != 3 || !strings.Contains(m.Error, "cells 3 of 4 were not measured") {
		t.Fatalf("a failed shard: %+v, %v", m, err)
	}
	other := shardOf(1, 2, 4, StatusComplete, 1, 3)
	other.Scenario = &scenario.Spec{Name: "s", Repeat: 2}
	if _, err := Merge([]*Results{shardOf(0, 2, 4, StatusComplete, 0, 2), other}); err == nil || !strings.Contains(err.Error(), "different scenario") {
		t.Errorf("another scenario: %v", err)
	}
	if _, err := Merge([]*Results{shardOf(0, 2, 4, StatusComplete, 0, 2), shardOf(1, 3, 4, StatusComplete, 1, 3)}); err == nil || !strings.Contains(err.Error(), "split") {
		t.Errorf("another split: %v", err)
	}
	whole := shardOf(0, 1, 1, StatusComplete, 0)
	whole.Shard = nil
	if _, err := Merge([]*Results{whole}); err == nil || !strings.Contains(err.Error(), "not a shard") {
		t.Errorf("a whole run: %v", err)
	}
}

// A shard's plan and split are bounded as run bounds them (scenario.MaxCells, MaxShards), before
// anything is made to their size: the hand-edited shards that held 3,000,000,000 plan cells or
// 2,000,000,000 shards are refused at once.
func TestMergeRefusesAPlanOrSplitNoRunMakes(t *testing.T) {
	if _, err := Merge([]*Results{shardOf(0, 2, scenario.MaxCells+1, StatusComplete, 0)}); err == nil || !strings.Contains(err.Error(), `plan_cells: "100001" is not allowed: want a plan of 1 to 100000 cells`) {
		t.Fatalf("a plan of MaxCells+1: %v", err)
	}
	if _, err := Merge([]*Results{shardOf(0, scenario.MaxShards+1, 4, StatusComplete, 0)}); err == nil || !strings.Contains(err.Error(), `shard.of: "10001" is not allowed: want from 1 to 10000 shards`) {
		t.Fatalf("a split of MaxShards+1: %v", err)
	}
	for _, s := range []*Results{shardOf(0, 2, 3000000000, StatusComplete, 0), shardOf(0, 2000000000, 4, StatusComplete, 0), shardOf(-1, 2, 4, StatusComplete, 0)} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Merge([]*Results{s})
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "is not allowed") {
			t.Errorf("plan %d, shard %s: %v", s.PlanCells, s.Shard, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("plan %d, shard %s: %d bytes allocated before the refusal", s.PlanCells, s.Shard, n)
		}
	}
}

// Cells no shard holds, or two shards hold, and the shares missing, are named as ranges.
func TestMergeNamesCellsAsRanges(t *testing.T) {
	upTo := func(n int) []int {
		var out []int
		for i := 0; i < n; i++ {
			out = append(out, i)
		}
		return out
	}
	cases := []struct {
		shards []*Results
		want   string
	}{
		{[]*Results{shardOf(0, 2, 1000, StatusComplete, upTo(10)...)}, "merge: cells 10-999 of 1000 are in no shard: shards 1/2 are missing"},
		{[]*Results{shardOf(0, 10, 10, StatusComplete, 0)}, "shards 1/10 to 9/10 are missing"},
		{[]*Results{shardOf(0, 2, 100, StatusComplete, 0, 2, 4, 6)}, "cells 1, 3, 5, 7-99 of 100"},
		{[]*Results{shardOf(0, 2, 100, StatusComplete, upTo(10)...), shardOf(1, 2, 100, StatusComplete, 8, 9, 10, 11)}, "merge: cells 8-9 are held by more than one shard (file 1 and file 2): the same share was given twice"},
		{[]*Results{shardOf(0, 2, 100, StatusComplete, 3, 4, 3, 4)}, "merge: file 1: cells 3-4 are in it twice"},
		{[]*Results{shardOf(0, 2, 100, StatusComplete, 0, 100)}, "merge: file 1: cell index 100 is not in the plan of 100 cells (0 to 99)"},
	}
	for _, c := range cases {
		if _, err := Merge(c.shards); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	var odd []int
	for i := 0; i < 100; i += 2 {
		odd = append(odd, i)
	}
	if _, err := Merge([]*Results{shardOf(0, 2, 100, StatusComplete, odd...)}); err == nil || !strings.Contains(err.Error(), "cells 1, 3, 5,") || !strings.Contains(err.Error(), ", 39, and 30 more ranges of 100") {
		t.Errorf("50 single cells missing: %v", err)
	}
}

// MergeFiles gives what Merge gives of the files loaded whole; a file that changes between its
// check and its load is refused.
func TestMergeFilesIsMergeOfTheLoadedFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	var loaded []*Results
	for i, s := range []*Results{shardOf(1, 2, 4, StatusComplete, 1, 3), shardOf(0, 2, 4, StatusComplete, 0, 2)} {
		p := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if err := s.Save(p, nil); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		back, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, back)
	}
	fromFiles, err := MergeFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	inMemory, err := Merge(loaded)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFiles, inMemory) || len(fromFiles.Cells) != 4 || fromFiles.Status != StatusComplete {
		t.Errorf("from files %+v\nin memory %+v", fromFiles, inMemory)
	}
	if _, err := MergeFiles([]string{paths[0], paths[0]}); err == nil || !strings.Contains(err.Error(), "cells 1, 3 are held by more than one shard ("+paths[0]+" and "+paths[0]+")") {
		t.Errorf("one file twice: %v", err)
	}
	c := &checker{}
	if err := c.add(headOf(shardOf(1, 2, 4, StatusInterrupted, 1, 3), "a")); err != nil {
		t.Fatal(err)
	}
	changed := shardOf(1, 2, 4, StatusInterrupted, 1, 2)
	if _, err := c.merge(func(int) (*Results, error) { return changed, nil }); err == nil || !strings.Contains(err.Error(), "a changed while it was merged: cell 2 was not among its cells") {
		t.Errorf("a file changed between the reads: %v", err)
	}
}
