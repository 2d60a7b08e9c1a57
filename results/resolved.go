package results

// FillResolved gives every cell, crash run and aggregate of a file written before cells recorded the
// parameters they ran with (Resolved) those parameters, derived as the plan resolves them: the
// workload's defaults the file recorded, then the scenario's values, the entry's and the point's.
// Load calls it, so what reads a file reads only Resolved; what it fills is left as it is.
func (r *Results) FillResolved() {
	for i := range r.Cells {
		if c := &r.Cells[i]; c.Resolved == nil {
			c.Resolved = r.derivedParams(c.Backend, c.Params)
		}
	}
	for i := range r.Crashes {
		if c := &r.Crashes[i]; c.Resolved == nil {
			c.Resolved = r.derivedParams(c.Backend, c.Params)
		}
	}
	for i := range r.Aggregates {
		if a := &r.Aggregates[i]; a.Resolved == nil {
			a.Resolved = r.derivedParams(a.Backend, a.Params)
		}
	}
}

// derivedParams are the parameters entry b's cells ran with at a sweep point.
func (r *Results) derivedParams(b string, point map[string]string) map[string]string {
	p := make(map[string]string, len(r.Defaults)+len(point))
	for k, v := range r.Defaults {
		p[k] = v
	}
	if r.Scenario != nil {
		for k, v := range r.Scenario.FixedParams("") {
			p[k] = v
		}
		for k, v := range r.Scenario.FixedParams(b) {
			p[k] = v
		}
	}
	for k, v := range point {
		p[k] = v
	}
	return p
}
