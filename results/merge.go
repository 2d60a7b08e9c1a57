package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"persistlab/backend"
	"persistlab/internal/sysinfo"
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

// maxNamed bounds the cell indexes an error lists.
const maxNamed = 20

// Merge joins the results of a plan's shards into the results one machine would have written:
// every cell once, in plan order. It refuses shards of different scenarios, versions or splits,
// and names the cells missing or held twice. The merged file keeps the first shard's machine and
// placement, every shard's record (Merged), and a note where the machines differ.
func Merge(shards []*Results) (*Results, error) {
	if len(shards) == 0 {
		return nil, errors.New("merge: no shards")
	}
	first := shards[0]
	for i, s := range shards {
		if s.Shard == nil {
			return nil, fmt.Errorf("merge: file %d is not a shard (run --shard I/N writes one)", i+1)
		}
		if err := sameRun(first, s); err != nil {
			return nil, fmt.Errorf("merge: shard %s against shard %s: %w", s.Shard, first.Shard, err)
		}
	}
	out := *first
	out.Shard, out.Merged, out.Notes, out.Error = nil, nil, nil, ""
	out.Cells, out.Crashes, out.Aggregates, out.Fits, out.CrashSummaries = nil, nil, nil, nil, nil
	out.Ceilings = maps.Clone(first.Ceilings)
	held := map[int]int{}
	var errs []string
	for _, s := range shards {
		out.Merged = append(out.Merged, MergedShard{Shard: *s.Shard, Machine: s.Machine, Status: s.Status, Started: s.Started, Finished: s.Finished, Cells: len(s.Cells) + len(s.Crashes)})
		for _, c := range s.Cells {
			held[c.Index]++
		}
		for _, c := range s.Crashes {
			held[c.Index]++
		}
		out.Cells = append(out.Cells, s.Cells...)
		out.Crashes = append(out.Crashes, s.Crashes...)
		for _, n := range s.Notes {
			out.Notes = append(out.Notes, fmt.Sprintf("shard %s: %s", s.Shard, n))
		}
		for b, c := range s.Ceilings {
			if _, ok := out.Ceilings[b]; !ok {
				if out.Ceilings == nil {
					out.Ceilings = map[string]backend.Ceiling{}
				}
				out.Ceilings[b] = c
			}
		}
		if s.Started.Before(out.Started) {
			out.Started = s.Started
		}
		if s.Finished.After(out.Finished) {
			out.Finished = s.Finished
		}
		if s.Status != StatusComplete {
			errs = append(errs, fmt.Sprintf("shard %s %s: %s", s.Shard, s.Status, s.Error))
		}
	}
	var missing, twice []int
	for i := 0; i < first.PlanCells; i++ {
		switch held[i] {
		case 0:
			missing = append(missing, i)
		case 1:
		default:
			twice = append(twice, i)
		}
	}
	for i := range held {
		if i < 0 || i >= first.PlanCells {
			twice = append(twice, i) // a cell the plan does not have is never a shard's own
		}
	}
	if len(twice) > 0 {
		sort.Ints(twice)
		return nil, fmt.Errorf("merge: cells %s are held by more than one shard (or are not in the plan of %d cells): the same share was given twice", indexes(twice), first.PlanCells)
	}
	if len(missing) > 0 && len(errs) == 0 {
		return nil, fmt.Errorf("merge: cells %s of %d are in no shard: shards %s are missing", indexes(missing), first.PlanCells, missingShards(shards))
	}
	sort.SliceStable(out.Cells, func(i, j int) bool { return out.Cells[i].Index < out.Cells[j].Index })
	sort.SliceStable(out.Crashes, func(i, j int) bool { return out.Crashes[i].Index < out.Crashes[j].Index })
	out.Status = StatusComplete
	if len(errs) > 0 { // a shard that did not finish: what it measured is kept, and said
		out.Status, out.Error = StatusFailed, strings.Join(errs, "; ")
		if len(missing) > 0 {
			out.Error += fmt.Sprintf("; cells %s of %d were not measured", indexes(missing), first.PlanCells)
		}
	}
	if machines := distinctMachines(shards); len(machines) > 1 {
		out.Notes = append(out.Notes, "the shards ran on different machines ("+strings.Join(machines, "; ")+"): rows from different shards compare machines as well as backends")
	}
	return &out, nil
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

func indexes(list []int) string {
	var parts []string
	for i, n := range list {
		if i == maxNamed {
			parts = append(parts, fmt.Sprintf("and %d more", len(list)-maxNamed))
			break
		}
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, ", ")
}

func missingShards(shards []*Results) string {
	have := map[int]bool{}
	for _, s := range shards {
		have[s.Shard.Index] = true
	}
	var out []string
	for i := 0; i < shards[0].Shard.Of; i++ {
		if !have[i] {
			out = append(out, fmt.Sprintf("%d/%d", i, shards[0].Shard.Of))
		}
	}
	if len(out) == 0 {
		return "(none: a shard lost cells)"
	}
	return strings.Join(out, ", ")
}

func distinctMachines(shards []*Results) []string {
	var out []string
	for _, s := range shards {
		m := fmt.Sprintf("%s, %d cores, %d MiB", s.Machine.CPUModel, s.Machine.Cores, s.Machine.MemoryBytes>>20)
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}
