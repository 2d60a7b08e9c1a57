package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/results"
	"persistlab/scenario"
)

// A plan run as shards and merged gives the cells one process gives: the same cells, by identity,
// in plan order, each measured once.
func TestShardsMergeToTheOneProcessRun(t *testing.T) {
	spec := fakeSpec("1,3,5", scenario.BackendSpec{Name: "fakedisk", Label: "a"}, scenario.BackendSpec{Name: "fakedisk", Label: "b"})
	whole, err := runFake(t, context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	takeLedger()
	plan, err := scenario.NewPlan(fakeSpec("1,3,5", spec.Backends...), Known())
	if err != nil {
		t.Fatal(err)
	}
	var shards []*results.Results
	for i := 0; i < 2; i++ {
		share, err := plan.Share(scenario.Shard{Index: i, Of: 2, By: scenario.ShardByPoint})
		if err != nil {
			t.Fatal(err)
		}
		work := t.TempDir()
		res, err := RunPlan(context.Background(), share, Options{Out: filepath.Join(work, "r.json"), WorkDir: filepath.Join(work, "w"), Derive: groupDerive})
		if err != nil {
			t.Fatal(err)
		}
		if res.Shard == nil || res.Shard.Index != i || res.PlanCells != len(plan.Cells) || len(res.Cells) == len(plan.Cells) {
			t.Fatalf("shard %d: %+v, %d plan cells, %d cells", i, res.Shard, res.PlanCells, len(res.Cells))
		}
		// What a shard saved is what merge reads.
		saved, err := results.Load(filepath.Join(work, "r.json"))
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, saved)
	}
	if log := takeLedger(); count(log, "backend start") != count(log, "backend stop") || count(log, "backend start") != len(plan.Cells) {
		t.Errorf("the shards together started %d backends and stopped %d, for %d cells", count(log, "backend start"), count(log, "backend stop"), len(plan.Cells))
	}
	merged, err := results.Merge([]*results.Results{shards[1], shards[0]}) // any order
	if err != nil {
		t.Fatal(err)
	}
	if merged.Status != results.StatusComplete || len(merged.Cells) != len(whole.Cells) || len(merged.Merged) != 2 || merged.Shard != nil {
		t.Fatalf("merged: status %s, %d cells of %d, %d shards", merged.Status, len(merged.Cells), len(whole.Cells), len(merged.Merged))
	}
	identity := func(c results.Cell) string { return c.Backend + " " + c.Point(spec.Sweep) + " n=" + c.Resolved["n"] }
	for i := range whole.Cells {
		w, m := whole.Cells[i], merged.Cells[i]
		if w.Index != m.Index || w.Repeat != m.Repeat || identity(w) != identity(m) || w.M("twice_n") != m.M("twice_n") || (w.Failure == "") != (m.Failure == "") {
			t.Errorf("cell %d: one process %+v, merged %+v", i, w.Cell, m.Cell)
		}
	}
	// A shard missing, or given twice, is named.
	if _, err := results.Merge(shards[:1]); err == nil || !strings.Contains(err.Error(), "1/2") {
		t.Errorf("a missing shard: %v", err)
	}
	if _, err := results.Merge([]*results.Results{shards[0], shards[0], shards[1]}); err == nil || !strings.Contains(err.Error(), "more than one shard") {
		t.Errorf("a shard given twice: %v", err)
	}
	other := *shards[1]
	other.Versions = map[string]string{"fakedisk": "9"}
	if _, err := results.Merge([]*results.Results{shards[0], &other}); err == nil || !strings.Contains(err.Error(), "versions") {
		t.Errorf("other versions: %v", err)
	}
}
