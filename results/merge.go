package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"persistlab/internal/sysinfo"
	"persistlab/lab"
	"persistlab/param"
	"persistlab/scenario"
)

// MergedShard is one shard a merged results file was made from: its share, where and when it
// ran, how it ended and how many cells it gave.
type MergedShard struct {
	Shard    scenario.Shard  `json:"shard"`
	Machine  sysinfo.Machine `json:"machine"`
	Status   string          `json:"status"`
	Started  time.Time       `json:"started"`
	Finished time.Time       `json:"finished"`
	Cells    int             `json:"cells"`
}

// maxNamed bounds the ranges of cells (or shards) an error lists.
const maxNamed = 20

// Merge joins the results of a plan's shards into the results one machine would have written:
// every cell once, in plan order. It refuses shards of different scenarios, versions or splits,
// a plan or a split larger than a run makes, and names the cells missing or held twice. The
// merged file keeps the first shard's machine and placement, every shard's record (Merged), and a
// note where the machines differ.
func Merge(shards []*Results) (*Results, error) {
	if len(shards) == 0 {
		return nil, errors.New("merge: no shards")
	}
	c := &checker{}
	for i, s := range shards {
		if err := c.add(headOf(s, fmt.Sprintf("file %d", i+1))); err != nil {
			return nil, err
		}
	}
	return c.merge(func(i int) (*Results, error) { return shards[i], nil })
}

// MergeFiles is Merge of the results files at paths, read twice: first each file's header and its
// cells' plan indexes, a cell at a time and keeping none of a cell's figures, so that a shard
// given twice, of another run or of a plan no run makes is refused before any shard is held
// whole; then one shard at a time, into the merged results.
func MergeFiles(paths []string) (*Results, error) {
	if len(paths) == 0 {
		return nil, errors.New("merge: no shards")
	}
	c := &checker{}
	for _, p := range paths {
		h, err := scanShard(p)
		if err != nil {
			return nil, fmt.Errorf("merge: %s: %w", p, err)
		}
		if err := c.add(h); err != nil {
			return nil, err
		}
	}
	return c.merge(func(i int) (*Results, error) {
		s, err := Load(paths[i])
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		return s, nil
	})
}

// shardHead is what merge checks of a shard before it holds the shard's cells: its header and the
// plan index of each of its cells and crashes.
type shardHead struct {
	name    string   // the file, for messages
	r       *Results // the header alone: no cells
	indexes []int
	cells   int // of indexes, those of cells (the rest are crashes)
}

func headOf(s *Results, name string) *shardHead {
	h := &shardHead{name: name, r: s}
	for _, c := range s.Cells {
		h.indexes = append(h.indexes, c.Index)
	}
	for _, c := range s.Crashes {
		h.indexes = append(h.indexes, c.Index)
	}
	h.cells = len(s.Cells)
	return h
}

// headFields are the fields of a shard's header merge checks before it reads the cells.
var headFields = map[string]bool{"schema": true, "status": true, "error": true, "scenario": true, "versions": true, "shard": true, "plan_cells": true}

// scanShard reads the header of the results file at path and its cells' plan indexes, decoding
// one cell at a time into its index alone; every other field is skipped.
func scanShard(path string) (*shardHead, error) {
	h := &shardHead{name: path, r: &Results{}}
	v := reflect.ValueOf(h.r).Elem()
	err := walk(path, func(dec *json.Decoder, field jsonField) error {
		switch {
		case field.name == "cells":
			n, err := scanIndexes(dec, field.name, &h.indexes)
			h.cells = n
			return err
		case field.name == "crashes":
			_, err := scanIndexes(dec, field.name, &h.indexes)
			return err
		case headFields[field.name]:
			return decodeField(dec, v.Field(field.index), field.name)
		}
		if err := skipValue(dec); err != nil {
			return fmt.Errorf("field %s: %w", field.name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if h.r.Shard != nil && h.r.Scenario == nil {
		return nil, errors.New("no scenario: the file is incomplete")
	}
	return h, nil
}

// scanIndexes appends the index of each element of the list field name to indexes, and says how
// many it read: never more than scenario.MaxCells in all, the most a plan holds.
func scanIndexes(dec *json.Decoder, name string, indexes *[]int) (int, error) {
	tok, err := dec.Token()
	if err != nil {
		return 0, fmt.Errorf("field %s: %w", name, err)
	}
	switch tok {
	case nil:
		return 0, nil
	case json.Delim('['):
	default:
		return 0, fmt.Errorf("field %s: %v where a list belongs", name, tok)
	}
	n := 0
	for ; dec.More(); n++ {
		if len(*indexes) >= scenario.MaxCells {
			return n, fmt.Errorf("field %s: more than %d cells: a plan holds at most %d", name, scenario.MaxCells, scenario.MaxCells)
		}
		var cell struct {
			Index int `json:"index"`
		}
		if err := dec.Decode(&cell); err != nil {
			return n, fmt.Errorf("field %s[%d]: %w", name, n, err)
		}
		*indexes = append(*indexes, cell.Index)
	}
	if _, err := dec.Token(); err != nil { // the list's ']'
		return n, fmt.Errorf("field %s: %w", name, err)
	}
	return n, nil
}

// checker takes the shards' heads one at a time and refuses, as soon as it can tell, a shard of
// another run or a cell two shards hold.
type checker struct {
	heads []*shardHead
	// owner is, per cell of the plan, 1 + the index in heads of the shard holding it (0: none).
	owner []int32
}

// add checks h's header against the bounds a run keeps and against the first shard, and its
// cells against the plan and the shards before it.
func (c *checker) add(h *shardHead) error {
	if err := checkHead(h.r); err != nil {
		return fmt.Errorf("merge: %s: %w", h.name, err)
	}
	if len(c.heads) == 0 {
		c.owner = make([]int32, h.r.PlanCells) // bounded by checkHead
	} else if err := sameRun(c.heads[0].r, h.r); err != nil {
		return fmt.Errorf("merge: shard %s (%s) against shard %s (%s): %w", h.r.Shard, h.name, c.heads[0].r.Shard, c.heads[0].name, err)
	}
	c.heads = append(c.heads, h)
	me := int32(len(c.heads))
	var twice []int
	other := int32(0) // the first shard found holding a cell h holds too
	for _, i := range h.indexes {
		if i < 0 || i >= len(c.owner) {
			return fmt.Errorf("merge: %s: cell index %d is not in the plan of %d cells (0 to %d)", h.name, i, len(c.owner), len(c.owner)-1)
		}
		if c.owner[i] != 0 {
			twice = append(twice, i)
			if other == 0 {
				other = c.owner[i]
			}
			continue
		}
		c.owner[i] = me
	}
	switch {
	case len(twice) == 0:
		return nil
	case other == me:
		return fmt.Errorf("merge: %s: cells %s are in it twice: a shard holds each of its cells once", h.name, spans(twice))
	}
	return fmt.Errorf("merge: cells %s are held by more than one shard (%s and %s): the same share was given twice", spans(twice), c.heads[other-1].name, h.name)
}

// checkHead refuses a shard whose header no run writes, before anything is made to its size.
func checkHead(r *Results) error {
	bad := func(field string, value int, allowed string) error {
		return &param.FieldError{Field: field, Value: strconv.Itoa(value), Allowed: allowed}
	}
	switch {
	case r.Shard == nil:
		return errors.New("not a shard (run --shard I/N writes one)")
	case r.Schema != Schema:
		return fmt.Errorf("schema %q: shards are written in %q", r.Schema, Schema)
	case r.PlanCells < 1 || r.PlanCells > scenario.MaxCells:
		return bad("plan_cells", r.PlanCells, fmt.Sprintf("a plan of 1 to %d cells, the most a run plans", scenario.MaxCells))
	case r.Shard.Of < 1 || r.Shard.Of > scenario.MaxShards:
		return bad("shard.of", r.Shard.Of, fmt.Sprintf("from 1 to %d shards, the most run --shard makes", scenario.MaxShards))
	case r.Shard.Index < 0 || r.Shard.Index >= r.Shard.Of:
		return bad("shard.index", r.Shard.Index, fmt.Sprintf("from 0 to shard.of-1 (%d)", r.Shard.Of-1))
	case r.Shard.By != scenario.ShardByPoint && r.Shard.By != scenario.ShardByBackend:
		return &param.FieldError{Field: "shard.by", Value: r.Shard.By, Allowed: scenario.ShardByPoint + " or " + scenario.ShardByBackend}
	}
	return nil
}

// merge joins the checked shards, loading them one at a time by their place in c.heads.
func (c *checker) merge(load func(i int) (*Results, error)) (*Results, error) {
	first := c.heads[0].r
	plan := first.PlanCells
	missing := indexesOf(c.owner, 0)
	var failed []string
	var cells, crashes int
	for _, h := range c.heads {
		cells += h.cells
		crashes += len(h.indexes) - h.cells
		if h.r.Status != StatusComplete {
			failed = append(failed, fmt.Sprintf("shard %s %s: %s", h.r.Shard, h.r.Status, h.r.Error))
		}
	}
	if len(missing) > 0 && len(failed) == 0 {
		return nil, fmt.Errorf("merge: cells %s of %d are in no shard: shards %s are missing", spans(missing), plan, c.missingShards())
	}
	var out *Results
	var machines []string
	loaded := make([]bool, plan)
	for i, h := range c.heads {
		s, err := load(i)
		if err != nil {
			return nil, err
		}
		if err := c.same(i, s, loaded); err != nil {
			return nil, fmt.Errorf("merge: %s changed while it was merged: %w", h.name, err)
		}
		if out == nil {
			o := *s
			out = &o
			out.Shard, out.Merged, out.Notes, out.Error = nil, nil, nil, ""
			out.Aggregates, out.Fits, out.CrashSummaries = nil, nil, nil
			out.Cells, out.Crashes = make([]Cell, 0, cells), nil
			if crashes > 0 {
				out.Crashes = make([]CrashRun, 0, crashes)
			}
			out.Ceilings = maps.Clone(s.Ceilings)
		}
		out.Merged = append(out.Merged, MergedShard{Shard: *s.Shard, Machine: s.Machine, Status: s.Status, Started: s.Started, Finished: s.Finished, Cells: len(s.Cells) + len(s.Crashes)})
		out.Cells = append(out.Cells, s.Cells...)
		out.Crashes = append(out.Crashes, s.Crashes...)
		for _, n := range s.Notes {
			out.Notes = append(out.Notes, fmt.Sprintf("shard %s: %s", s.Shard, n))
		}
		for b, ceiling := range s.Ceilings {
			if _, ok := out.Ceilings[b]; !ok {
				if out.Ceilings == nil {
					out.Ceilings = map[string]lab.Ceiling{}
				}
				out.Ceilings[b] = ceiling
			}
		}
		if s.Started.Before(out.Started) {
			out.Started = s.Started
		}
		if s.Finished.After(out.Finished) {
			out.Finished = s.Finished
		}
		if m := machineOf(s); !slices.Contains(machines, m) {
			machines = append(machines, m)
		}
	}
	sort.SliceStable(out.Cells, func(i, j int) bool { return out.Cells[i].Index < out.Cells[j].Index })
	sort.SliceStable(out.Crashes, func(i, j int) bool { return out.Crashes[i].Index < out.Crashes[j].Index })
	out.Status = StatusComplete
	if len(failed) > 0 { // a shard that did not finish: what it measured is kept, and said
		out.Status, out.Error = StatusFailed, strings.Join(failed, "; ")
		if len(missing) > 0 {
			out.Error += fmt.Sprintf("; cells %s of %d were not measured", spans(missing), plan)
		}
	}
	if len(machines) > 1 {
		out.Notes = append(out.Notes, "the shards ran on different machines ("+strings.Join(machines, "; ")+"): rows from different shards compare machines as well as backends")
	}
	return out, nil
}

// same says how s, the i-th shard as loaded, differs from what was checked of it; loaded marks the
// cells seen so far.
func (c *checker) same(i int, s *Results, loaded []bool) error {
	h := c.heads[i].r
	if s == h {
		return nil
	}
	switch {
	case s.Shard == nil || *s.Shard != *h.Shard || s.PlanCells != h.PlanCells || s.Status != h.Status || s.Error != h.Error:
		return errors.New("its share, plan or status differ")
	case sameRun(h, s) != nil:
		return sameRun(h, s)
	case len(s.Cells)+len(s.Crashes) != len(c.heads[i].indexes):
		return fmt.Errorf("%d cells, not %d", len(s.Cells)+len(s.Crashes), len(c.heads[i].indexes))
	}
	mine := func(index int) bool {
		ok := index >= 0 && index < len(loaded) && c.owner[index] == int32(i+1) && !loaded[index]
		if ok {
			loaded[index] = true
		}
		return ok
	}
	for _, cell := range s.Cells {
		if !mine(cell.Index) {
			return fmt.Errorf("cell %d was not among its cells", cell.Index)
		}
	}
	for _, crash := range s.Crashes {
		if !mine(crash.Index) {
			return fmt.Errorf("crash %d was not among its cells", crash.Index)
		}
	}
	return nil
}

// sameRun says how b is not a share of the run a is a share of.
func sameRun(a, b *Results) error {
	switch {
	case a.Schema != b.Schema:
		return fmt.Errorf("schema %s against %s", b.Schema, a.Schema)
	case a.Shard.Of != b.Shard.Of || a.Shard.By != b.Shard.By:
		return fmt.Errorf("split %d by %s against %d by %s: shards of one run are split alike", b.Shard.Of, b.Shard.By, a.Shard.Of, a.Shard.By)
	case a.PlanCells != b.PlanCells:
		return fmt.Errorf("a plan of %d cells against %d: not the same plan", b.PlanCells, a.PlanCells)
	case !maps.Equal(a.Versions, b.Versions):
		return fmt.Errorf("versions %v against %v: every shard must run the same software", b.Versions, a.Versions)
	}
	sa, _ := json.Marshal(a.Scenario)
	sb, _ := json.Marshal(b.Scenario)
	if !bytes.Equal(sa, sb) {
		return errors.New("a different scenario (or different flags): shards of one run share the scenario exactly")
	}
	return nil
}

// indexesOf lists the places in owner that hold who.
func indexesOf(owner []int32, who int32) []int {
	var out []int
	for i, o := range owner {
		if o == who {
			out = append(out, i)
		}
	}
	return out
}

// missingShards names the shares no file holds, as ranges: "1/4", "2/10 to 9/10".
func (c *checker) missingShards() string {
	first := c.heads[0].r.Shard
	have := make([]bool, first.Of) // bounded by checkHead
	for _, h := range c.heads {
		have[h.r.Shard.Index] = true
	}
	var absent []int
	for i, ok := range have {
		if !ok {
			absent = append(absent, i)
		}
	}
	if len(absent) == 0 {
		return "(none: a shard lost cells)"
	}
	return formatSpans(absent, func(lo, hi int) string {
		if lo == hi {
			return fmt.Sprintf("%d/%d", lo, first.Of)
		}
		return fmt.Sprintf("%d/%d to %d/%d", lo, first.Of, hi, first.Of)
	})
}

// spans writes a list of indexes as ranges, "0-4, 7, 9-12", sorted, each index once.
func spans(list []int) string {
	return formatSpans(list, func(lo, hi int) string {
		if lo == hi {
			return strconv.Itoa(lo)
		}
		return fmt.Sprintf("%d-%d", lo, hi)
	})
}

// formatSpans writes the runs of consecutive numbers in list, at most maxNamed of them.
func formatSpans(list []int, span func(lo, hi int) string) string {
	sorted := slices.Clone(list)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var parts []string
	runs := 0
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[j]+1 {
			j++
		}
		if runs < maxNamed {
			parts = append(parts, span(sorted[i], sorted[j]))
		}
		runs++
		i = j + 1
	}
	if runs > maxNamed {
		parts = append(parts, fmt.Sprintf("and %d more ranges", runs-maxNamed))
	}
	return strings.Join(parts, ", ")
}

func machineOf(s *Results) string {
	return fmt.Sprintf("%s, %d cores, %d MiB", s.Machine.CPUModel, s.Machine.Cores, s.Machine.MemoryBytes>>20)
}
