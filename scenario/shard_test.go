package scenario

import (
	"errors"
	"fmt"
	"testing"

	"persistlab/param"
)

func shardPlan(t *testing.T) *Plan {
	t.Helper()
	s, err := Parse([]byte("name: p\nworkload: {type: counter}\nbackends: [{name: local}, {name: gcsfuse}]\nsweep: {vus: \"2,4,6\"}\nduration: 1s\nrepeat: 2\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(s, known)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// The shards of a plan are disjoint and together the plan; each sweep point's backends and
// repeats (or each backend entry's cells) fall to one shard.
func TestSharesPartitionThePlan(t *testing.T) {
	plan := shardPlan(t)
	for _, by := range []string{ShardByPoint, ShardByBackend} {
		for _, n := range []int{1, 2} {
			seen := map[int]int{}
			owner := map[string]int{}
			for i := 0; i < n; i++ {
				s, err := ParseShard(fmtShard(i, n), by)
				if err != nil {
					t.Fatal(err)
				}
				share, err := plan.Share(s)
				if err != nil {
					t.Fatal(err)
				}
				if len(share.Cells) == 0 {
					t.Errorf("%s %d/%d: no cells", by, i, n)
				}
				for _, c := range share.Cells {
					seen[c.Index]++
					key := c.Point(plan.Spec.Sweep)
					if by == ShardByBackend {
						key = c.Backend
					}
					if o, ok := owner[key]; ok && o != i {
						t.Errorf("%s %d/%d: %s split between shards %d and %d", by, i, n, key, o, i)
					}
					owner[key] = i
					if c.Resolved == nil || plan.Cells[c.Index].Backend != c.Backend {
						t.Errorf("cell %d lost its plan identity: %+v", c.Index, c)
					}
				}
			}
			if len(seen) != len(plan.Cells) {
				t.Errorf("%s into %d: %d of %d cells", by, n, len(seen), len(plan.Cells))
			}
			for i, k := range seen {
				if k != 1 {
					t.Errorf("%s into %d: cell %d in %d shards", by, n, i, k)
				}
			}
		}
	}
}

func fmtShard(i, n int) string { return fmt.Sprintf("%d/%d", i, n) }

func TestShardRefusals(t *testing.T) {
	plan := shardPlan(t)
	for _, c := range []struct{ text, by, field string }{
		{"1", "", "--shard"}, {"2/2", "", "--shard"}, {"-1/2", "", "--shard"}, {"0/0", "", "--shard"}, {"0/2", "sweep", "--shard-by"},
	} {
		_, err := ParseShard(c.text, c.by)
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%q by %q: %v", c.text, c.by, err)
		}
	}
	// Three sweep points make at most three shards; two backend entries, two.
	for _, c := range []struct {
		by string
		n  int
	}{{ShardByPoint, 4}, {ShardByBackend, 3}} {
		s, err := ParseShard(fmtShard(0, c.n), c.by)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := plan.Share(s); err == nil {
			t.Errorf("%d shards by %s: no refusal", c.n, c.by)
		}
	}
}
