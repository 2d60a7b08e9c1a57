package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Known lists what this build of persistlab can run, for validation messages.
type Known struct {
	Workloads []string
	Backends  []string
}

// MaxVUs bounds a sweep value: beyond it the driver, not the system under test, is measured on
// the 2-core machines this project targets.
const MaxVUs = 10000

// Validate checks every field and returns the first problem as a *FieldError.
func (s *Spec) Validate(known Known) error {
	fail := func(field, value, allowed string) error {
		return &FieldError{Scenario: s.Name, Field: field, Value: value, Allowed: allowed}
	}
	if strings.TrimSpace(s.Name) == "" {
		return fail("name", s.Name, "a non-empty name")
	}
	w := s.Workload
	if !contains(known.Workloads, w.Type) {
		return fail("workload.type", w.Type, "one of "+strings.Join(known.Workloads, ", "))
	}
	if w.Mode != "closed" && w.Mode != "open" {
		return fail("workload.mode", w.Mode, `"closed" (virtual users, like k6 constant-vus) or "open" (constant arrival rate)`)
	}
	if w.Mode == "open" && w.Rate <= 0 {
		return fail("workload.rate", strconv.FormatFloat(w.Rate, 'g', -1, 64), "requests per second above 0 for an open-loop workload")
	}
	if w.Mode == "closed" && w.Rate != 0 {
		return fail("workload.rate", strconv.FormatFloat(w.Rate, 'g', -1, 64), "no rate for a closed-loop workload (its rate is what it measures)")
	}
	if !strings.HasPrefix(w.Path, "/") {
		return fail("workload.path", w.Path, "a path starting with /")
	}
	switch w.Method {
	case "GET", "POST", "PUT", "DELETE", "PATCH":
	default:
		return fail("workload.method", w.Method, "GET, POST, PUT, DELETE or PATCH")
	}
	if w.Timeout < 0 {
		return fail("workload.timeout", time.Duration(w.Timeout).String(), "a duration of 0 (k6's 60s) or more")
	}
	if w.Instances < 0 || w.Instances > 8 {
		return fail("workload.instances", strconv.Itoa(w.Instances), "0 or 1 (one instance) up to 8")
	}
	if w.App.CPUs < 0 {
		return fail("workload.app.cpus", strconv.Itoa(w.App.CPUs), "0 (not pinned) or a number of CPUs")
	}
	if w.App.MaxConns < 0 {
		return fail("workload.app.max_conns", strconv.Itoa(w.App.MaxConns), "0 (Rails' pool of 5) or more")
	}
	if w.App.CPUPerRequest < 0 || time.Duration(w.App.CPUPerRequest) > time.Second {
		return fail("workload.app.cpu_per_request", time.Duration(w.App.CPUPerRequest).String(), "a duration from 0 to 1s")
	}
	for i, p := range w.App.Pragmas {
		if name, value, ok := strings.Cut(p, "="); !ok || name == "" || value == "" {
			return fail(fmt.Sprintf("workload.app.pragmas[%d]", i), p, "name=value, e.g. journal_mode=DELETE")
		}
	}
	if len(s.Backends) == 0 {
		return fail("backends", "", "at least one of "+strings.Join(known.Backends, ", "))
	}
	seen := map[string]bool{}
	for i, b := range s.Backends {
		if !contains(known.Backends, b.Name) {
			return fail(fmt.Sprintf("backends[%d].name", i), b.Name, "one of "+strings.Join(known.Backends, ", "))
		}
		if seen[b.ID()] {
			return fail(fmt.Sprintf("backends[%d].label", i), b.ID(), "a label of its own for each entry of one backend")
		}
		seen[b.ID()] = true
	}
	if len(s.Sweep.VUs.Values) == 0 {
		return fail("sweep.vus", s.Sweep.VUs.Text, sweepSyntax)
	}
	for _, v := range s.Sweep.VUs.Values {
		if v < 1 || v > MaxVUs {
			return fail("sweep.vus", s.Sweep.VUs.Text, fmt.Sprintf("virtual users from 1 to %d", MaxVUs))
		}
	}
	if s.Duration <= 0 {
		return fail("duration", time.Duration(s.Duration).String(), "a duration above 0, like 120s")
	}
	if s.Warmup < 0 {
		return fail("warmup", time.Duration(s.Warmup).String(), "a duration of 0 or more")
	}
	if s.Repeat < 1 || s.Repeat > 100 {
		return fail("repeat", strconv.Itoa(s.Repeat), "1 to 100 runs per cell")
	}
	for i, p := range s.Prices {
		if p.Name == "" || p.ClassAPer1000 < 0 || p.ClassBPer1000 < 0 {
			return fail(fmt.Sprintf("prices[%d]", i), fmt.Sprintf("%+v", p), "a name and prices of 0 or more per 1,000 operations")
		}
	}
	if c := s.Crash; c != nil {
		if w.Instances > 1 {
			return fail("crash", fmt.Sprintf("with workload.instances %d", w.Instances), "crash runs of one instance (leave out crash or instances)")
		}
		if c.Count < 1 || c.Count > 1000 {
			return fail("crash.count", strconv.Itoa(c.Count), "1 to 1000 crashes per backend and VU level")
		}
		if c.After.From <= 0 || c.After.To < c.After.From {
			return fail("crash.after", c.After.String(), durRangeSyntax)
		}
	}
	for i, p := range s.Published {
		if len(p.Columns) == 0 || p.Columns[0] != "vus" {
			return fail(fmt.Sprintf("published[%d].columns", i), strings.Join(p.Columns, ","), "a column list starting with vus")
		}
		for j, row := range p.Rows {
			if len(row) != len(p.Columns) {
				return fail(fmt.Sprintf("published[%d].rows[%d]", i, j), fmt.Sprint(row), fmt.Sprintf("%d values, one per column", len(p.Columns)))
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Overrides are command-line settings that replace scenario fields.
type Overrides struct {
	Quick    bool
	Backends []string // keep only these labels or names, in this order (adding ones the scenario lacks)
	VUs      string
	Duration string
	Warmup   string
	Repeat   int
	Rate     float64
	// CPUPerRequest replaces workload.app.cpu_per_request.
	CPUPerRequest string
	// Crashes turns the run into crash runs with this many crashes per cell; CrashAfter sets when.
	Crashes    int
	CrashAfter string
}

// Apply changes s as the overrides say: first the quick variant, then each explicit flag.
func (s *Spec) Apply(o Overrides) error {
	if o.Quick && s.Quick != nil && s.Crash != nil && s.Quick.Crashes > 0 {
		s.Crash.Count = s.Quick.Crashes
	}
	if o.Quick && s.Quick != nil {
		if s.Quick.VUs != nil {
			s.Sweep.VUs = *s.Quick.VUs
		}
		if s.Quick.Duration != nil {
			s.Duration = *s.Quick.Duration
		}
		if s.Quick.Repeat > 0 {
			s.Repeat = s.Quick.Repeat
		}
		if s.Quick.Warmup != nil {
			s.Warmup = *s.Quick.Warmup
		}
	}
	if len(o.Backends) > 0 {
		var picked []BackendSpec
		for _, name := range o.Backends {
			matched := false
			for _, b := range s.Backends {
				if b.ID() == name || (b.Name == name && b.Label == "") {
					picked, matched = append(picked, b), true
				}
			}
			if !matched {
				for _, b := range s.Backends { // a backend's name picks all its labelled entries
					if b.Name == name {
						picked, matched = append(picked, b), true
					}
				}
			}
			if !matched {
				picked = append(picked, BackendSpec{Name: name})
			}
		}
		s.Backends = picked
	}
	if o.VUs != "" {
		sw, err := ParseIntSweep(o.VUs)
		if err != nil {
			return &FieldError{Scenario: s.Name, Field: "--vus", Value: o.VUs, Allowed: sweepSyntax}
		}
		s.Sweep.VUs = sw
	}
	for _, d := range []struct {
		flag, text string
		into       *Duration
	}{{"--duration", o.Duration, &s.Duration}, {"--warmup", o.Warmup, &s.Warmup}, {"--cpu-per-request", o.CPUPerRequest, &s.Workload.App.CPUPerRequest}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return &FieldError{Scenario: s.Name, Field: d.flag, Value: d.text, Allowed: "a duration like 500ms, 120s or 2m"}
		}
		*d.into = Duration(v)
	}
	if o.Repeat != 0 {
		s.Repeat = o.Repeat
	}
	if o.Crashes != 0 || o.CrashAfter != "" {
		if s.Crash == nil {
			s.Crash = &Crash{Count: 10, After: DefaultCrashAfter, Seed: 1}
		}
		if o.Crashes != 0 {
			s.Crash.Count = o.Crashes
		}
		if o.CrashAfter != "" {
			r, err := ParseDurRange(o.CrashAfter)
			if err != nil {
				return &FieldError{Scenario: s.Name, Field: "--crash-after", Value: o.CrashAfter, Allowed: durRangeSyntax}
			}
			s.Crash.After = r
		}
	}
	if o.Rate != 0 {
		s.Workload.Rate = o.Rate
		s.Workload.Mode = "open"
	}
	return nil
}

// Cell is one measured run: a backend at one parameter value, one repeat.
type Cell struct {
	Index   int    `json:"index"`
	Backend string `json:"backend"` // the entry's ID: its label, or its backend's name
	VUs     int    `json:"vus"`
	Repeat  int    `json:"repeat"` // 1-based
}

// Plan expands the sweep into cells, repeat-major so that drift over a long run spreads evenly
// across backends and VU levels instead of landing on one of them. In a crash run each crash is a
// cell, numbered by Repeat.
func (s *Spec) Plan() []Cell {
	var cells []Cell
	runs := s.Repeat
	if s.Crash != nil {
		runs = s.Crash.Count
	}
	for r := 1; r <= runs; r++ {
		for _, b := range s.Backends {
			for _, v := range s.Sweep.VUs.Values {
				cells = append(cells, Cell{Index: len(cells), Backend: b.ID(), VUs: v, Repeat: r})
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
