package scenario

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
func Resolve(declared []Param, fixed, point map[string]string) map[string]string {
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
