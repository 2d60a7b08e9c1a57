package results

import (
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
