package scenario

import (
	"strings"

	"persistlab/param"
)

// Plan is a scenario checked once and expanded into its cells, each carrying every parameter
// its workload declares, resolved in one place: the declared default, then the scenario's value,
// then the backend entry's, then the sweep point's. The runner runs it as it is; results files
// keep each cell's resolved parameters, so nothing downstream derives them again.
type Plan struct {
	Spec  *Spec
	Cells []Cell
	// Shard is the share of the whole plan Cells are, when the plan is split over machines
	// (Share); Whole is then the whole plan's number of cells.
	Shard *Shard
	Whole int
}

// NewPlan validates s against what this build can run and resolves every cell's parameters.
func NewPlan(s *Spec, known Known) (*Plan, error) {
	if err := s.Validate(known); err != nil {
		return nil, err
	}
	declared := known.Workloads[s.Workload.Type]
	cells := s.Plan()
	fixed := map[string]map[string]string{} // per backend entry
	for i := range cells {
		c := &cells[i]
		if fixed[c.Backend] == nil {
			fixed[c.Backend] = s.FixedParams(c.Backend)
		}
		c.Resolved = Resolve(declared, fixed[c.Backend], c.Params)
	}
	return &Plan{Spec: s, Cells: cells, Whole: len(cells)}, nil
}

// Resolve is a cell's full parameters: the declared defaults, the fixed values (the scenario's
// and its backend entry's), then the sweep point's.
func Resolve(declared []param.Param, fixed, point map[string]string) map[string]string {
	p := make(map[string]string, len(declared))
	for _, d := range declared {
		if d.Default != "" {
			p[d.Name] = d.Default
		}
	}
	for k, v := range fixed {
		p[k] = v
	}
	for k, v := range point {
		p[k] = v
	}
	return p
}

// Cell is one measured run: a backend at one point of the sweep, one repeat.
type Cell struct {
	Index   int               `json:"index"`
	Backend string            `json:"backend"` // the entry's ID: its label, or its backend's name
	Params  map[string]string `json:"params,omitempty"`
	Repeat  int               `json:"repeat"` // 1-based
	// Resolved is every parameter the cell ran with (NewPlan). Files of earlier versions lack it:
	// results.Load derives it for them, so a file merged from theirs holds it derived.
	Resolved map[string]string `json:"resolved,omitempty"`
	// Entry is the backend entry the cell runs on and PointName its Point, both set by Plan so
	// the runner never looks them up again; results files keep neither (Backend and Params say both).
	Entry     BackendSpec `json:"-"`
	PointName string      `json:"-"`
}

// Label names a row or a cell for people: its backend entry, then what follows (a sweep point, a
// repeat), each part once and empty parts left out: "local vus=2 run 1", "local run 1".
func Label(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " ")
}

// Point names the cell's place in the sweep, "vus=2 rw=read" in sweep order: cells of one point
// (repeats) are summarised together.
func (c Cell) Point(sweep Sweep) string {
	var parts []string
	for _, name := range sweep.ParamNames() {
		if v, ok := c.Params[name]; ok {
			parts = append(parts, name+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// Plan expands the sweep into cells, repeat-major so that drift over a long run spreads evenly
// across backends and sweep points instead of landing on one of them. In a crash run each crash
// is a cell, numbered by Repeat. Validate must have expanded the sweep.
func (s *Spec) Plan() []Cell {
	points := []map[string]string{{}}
	for _, a := range s.Sweep {
		var next []map[string]string
		for _, p := range points {
			for _, v := range a.Values {
				q := make(map[string]string, len(p)+1)
				for k, x := range p {
					q[k] = x
				}
				a.Set(v, q)
				next = append(next, q)
			}
		}
		points = next
	}
	names := make([]string, len(points))
	for i, p := range points {
		names[i] = Cell{Params: p}.Point(s.Sweep)
	}
	var cells []Cell
	runs := s.Repeat
	if s.Crash != nil {
		runs = s.Crash.Count
	}
	for r := 1; r <= runs; r++ {
		for _, b := range s.Backends {
			for i, p := range points {
				cells = append(cells, Cell{Index: len(cells), Backend: b.ID(), Params: p, Repeat: r, Entry: b, PointName: names[i]})
			}
		}
	}
	return cells
}

// BackendByID finds the entry a cell names.
func (s *Spec) BackendByID(id string) (BackendSpec, bool) {
	for _, b := range s.Backends {
		if b.ID() == id {
			return b, true
		}
	}
	return BackendSpec{}, false
}
