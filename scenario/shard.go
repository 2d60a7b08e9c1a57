package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"persistlab/param"
)

// MaxShards bounds --shard's N: far more machines than any plan has sweep points for.
const MaxShards = 10000

// Shard is one machine's share of a plan: Index of Of (0-based, as a Kubernetes Indexed Job
// numbers its pods), the cells whose key, by sweep point or by backend entry, falls to it.
type Shard struct {
	Index int    `json:"index"`
	Of    int    `json:"of"`
	By    string `json:"by"` // ShardByPoint or ShardByBackend
}

// How a plan is split: every backend of one sweep point on one machine (its rows are compared
// with each other), or every cell of one backend entry (for plans of one point and many
// backends, such as seed 004's; their rows are then compared across machines).
const (
	ShardByPoint   = "point"
	ShardByBackend = "backend"
)

// ParseShard reads "I/N" (0 <= I < N) and the key to split by.
func ParseShard(text, by string) (Shard, error) {
	bad := func(allowed string) error {
		return &param.FieldError{Field: "--shard", Value: text, Allowed: allowed}
	}
	i, n, ok := strings.Cut(text, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	of, err2 := strconv.Atoi(strings.TrimSpace(n))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, bad("I/N: this machine's share I (from 0) of N, like 0/4")
	case of < 1 || of > MaxShards:
		return Shard{}, bad(fmt.Sprintf("N from 1 to %d", MaxShards))
	case index < 0 || index >= of:
		return Shard{}, bad(fmt.Sprintf("I from 0 to N-1 (%d)", of-1))
	}
	switch by {
	case "":
		by = ShardByPoint
	case ShardByPoint, ShardByBackend:
	default:
		return Shard{}, &param.FieldError{Field: "--shard-by", Value: by, Allowed: ShardByPoint + " (every backend of a sweep point on one machine) or " + ShardByBackend + " (every cell of a backend entry on one machine)"}
	}
	return Shard{Index: index, Of: of, By: by}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d by %s", s.Index, s.Of, s.By) }

// Share is the plan's cells that fall to shard s, in plan order and with their plan indexes: the
// keys (sweep points, or backend entries) in the order the plan first meets them, dealt round
// robin. It refuses a split that leaves a shard nothing to run.
func (p *Plan) Share(s Shard) (*Plan, error) {
	key := func(c Cell) string { return c.Point(p.Spec.Sweep) }
	if s.By == ShardByBackend {
		key = func(c Cell) string { return c.Backend }
	}
	rank := map[string]int{}
	for _, c := range p.Cells {
		if _, seen := rank[key(c)]; !seen {
			rank[key(c)] = len(rank)
		}
	}
	if len(rank) < s.Of {
		return nil, &param.FieldError{Scenario: p.Spec.Name, Field: "--shard", Value: fmt.Sprintf("%d/%d", s.Index, s.Of),
			Allowed: fmt.Sprintf("at most %d shards: the plan has %d %s to deal out", len(rank), len(rank), map[string]string{ShardByPoint: "sweep points", ShardByBackend: "backend entries"}[s.By])}
	}
	out := &Plan{Spec: p.Spec, Shard: &s, Whole: p.Whole}
	for _, c := range p.Cells {
		if rank[key(c)]%s.Of == s.Index {
			out.Cells = append(out.Cells, c)
		}
	}
	return out, nil
}
