package scenario

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"persistlab/param"
)

// Known lists what this build of persistlab can run: each workload's declared parameters, and
// the backends.
type Known struct {
	Workloads map[string][]param.Param
	// Metrics are each workload's declared metrics and their units, for thresholds.
	Metrics map[string]map[string]string
	// Sections are each workload's lists and mappings, with what each must be.
	Sections map[string]map[string]string
	// PriceLists name the list prices costs use unless a scenario sets its own (prices:).
	PriceLists []string
	Backends   []string
}

func (k Known) workloadNames() []string {
	var names []string
	for n := range k.Workloads {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func paramNames(params []param.Param) string {
	var names []string
	for _, p := range params {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// MinDuration is the shortest measured run that says anything.
const MinDuration = 100 * time.Millisecond

// MaxCells bounds a plan (sweep product x backends x repeats).
const MaxCells = 100000

// Validate checks every field the scenario itself can check and returns the first problem as a
// *param.FieldError; it expands the sweep. Checks that need a workload's or a backend's own knowledge
// (an option's value, fio's reading of a job) are the runner's, also before the first cell.
func (s *Spec) Validate(known Known) error {
	if strings.TrimSpace(s.Name) == "" {
		return s.fail("name", s.Name, "a non-empty name")
	}
	params, ok := known.Workloads[s.Workload.Type]
	if !ok {
		return s.fail("workload.type", s.Workload.Type, "one of "+strings.Join(known.workloadNames(), ", "))
	}
	if err := s.checkWorkloadParams(params, known.Sections[s.Workload.Type]); err != nil {
		return err
	}
	if err := s.checkInstances(params); err != nil {
		return err
	}
	if err := s.checkBackends(params, known.Backends); err != nil {
		return err
	}
	cells, err := s.expandSweep(params)
	if err != nil {
		return err
	}
	for _, check := range []func() error{
		func() error { return s.checkRuns(cells) },
		func() error { return s.checkCrash(cells) },
		func() error { return s.checkThresholds(known) },
		s.checkPublished,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// fail is a refusal of one of the scenario's fields.
func (s *Spec) fail(field, value, allowed string) error {
	return &param.FieldError{Scenario: s.Name, Field: field, Value: value, Allowed: allowed}
}

// named says which scenario a parameter's or an axis's own refusal concerns.
func (s *Spec) named(err error) error {
	var fe *param.FieldError
	if errors.As(err, &fe) {
		fe.Scenario = s.Name
	}
	return err
}

// checkWorkloadParams checks the workload's fixed parameters against their declarations, in
// name order; sections names the workload's lists and mappings, which are no parameters.
func (s *Spec) checkWorkloadParams(params []param.Param, sections map[string]string) error {
	w := s.Workload
	keys := make([]string, 0, len(w.Params))
	for k := range w.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := param.Find(params, k)
		if what, section := sections[k]; !ok && section {
			return s.fail("workload."+k, w.Params[k], what+" (a section of workload "+w.Type+", not a single value)")
		}
		if !ok {
			return s.fail("workload."+k, w.Params[k], "a parameter of workload "+w.Type+": "+paramNames(params))
		}
		if err := p.Check("workload."+k, w.Params[k]); err != nil {
			return s.named(err)
		}
	}
	return nil
}

// checkInstances checks the top-level instances: set once, and for a workload that takes it.
func (s *Spec) checkInstances(params []param.Param) error {
	if s.Instances == 0 {
		return nil
	}
	v := strconv.Itoa(s.Instances)
	if set, fixed := s.Workload.Params[InstancesParam]; fixed {
		return s.fail("instances", v, "instances set once: it is also set as workload.instances ("+set+")")
	}
	p, ok := param.Find(params, InstancesParam)
	if !ok {
		return s.fail("instances", v, "no instances: workload "+s.Workload.Type+" runs one")
	}
	if err := p.Check("instances", v); err != nil {
		return s.named(err)
	}
	return nil
}

// checkBackends checks each backend entry: a backend this build has, a label of its own that can
// name files, and parameters of the workload fixed nowhere else.
func (s *Spec) checkBackends(params []param.Param, backends []string) error {
	if len(s.Backends) == 0 {
		return s.fail("backends", "", "at least one of "+strings.Join(backends, ", "))
	}
	seen := map[string]bool{}
	for i, b := range s.Backends {
		if !contains(backends, b.Name) {
			return s.fail(fmt.Sprintf("backends[%d].name", i), b.Name, "one of "+strings.Join(backends, ", "))
		}
		if !validLabel(b.ID()) {
			return s.fail(fmt.Sprintf("backends[%d].label", i), b.ID(), "letters, digits, '.', '_' and '-', starting with a letter or digit (it names files)")
		}
		if seen[b.ID()] {
			return s.fail(fmt.Sprintf("backends[%d].label", i), b.ID(), "a label of its own for each entry of one backend")
		}
		seen[b.ID()] = true
		if err := s.checkBackendParams(i, params); err != nil {
			return err
		}
	}
	return nil
}

// checkBackendParams checks the parameters backend entry i fixes, in name order.
func (s *Spec) checkBackendParams(i int, params []param.Param) error {
	b, w := s.Backends[i], s.Workload
	names := make([]string, 0, len(b.Params))
	for k := range b.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		field := fmt.Sprintf("backends[%d].params.%s", i, k)
		p, ok := param.Find(params, k)
		if !ok {
			return s.fail(field, b.Params[k], "a parameter of workload "+w.Type+": "+paramNames(params))
		}
		if _, fixed := w.Params[k]; fixed {
			return s.fail(field, b.Params[k], "a parameter not also fixed in workload."+k)
		}
		if k == InstancesParam && s.Instances != 0 {
			return s.fail(field, b.Params[k], "a parameter not also fixed in instances")
		}
		if err := p.Check(field, b.Params[k]); err != nil {
			return s.named(err)
		}
	}
	return nil
}

// expandSweep checks each axis's parameters (declared, swept once, fixed nowhere else) and
// expands its values; it returns the cells of one repeat: backends times the sweep's points.
func (s *Spec) expandSweep(params []param.Param) (int, error) {
	cells := len(s.Backends)
	swept := map[string]bool{}
	for i := range s.Sweep {
		a := &s.Sweep[i]
		for _, n := range a.Params() {
			if err := s.checkSwept(a, n, params, swept); err != nil {
				return 0, err
			}
			swept[n] = true
		}
		if err := a.ExpandLinked(func(n string) (param.Param, bool) { return param.Find(params, n) }); err != nil {
			return 0, s.named(err)
		}
		cells *= len(a.Values)
		if cells > MaxCells {
			return 0, s.fail("sweep", a.Name, fmt.Sprintf("at most %d cells in all (the product of the sweep, backends and repeats)", MaxCells))
		}
	}
	return cells, nil
}

// checkSwept refuses parameter n of axis a when the workload lacks it, when it is fixed elsewhere
// or when an earlier axis sweeps it.
func (s *Spec) checkSwept(a *Axis, n string, params []param.Param, swept map[string]bool) error {
	if _, ok := param.Find(params, n); !ok {
		return s.fail("sweep."+a.Name, a.Text, "a parameter of workload "+s.Workload.Type+" (or several joined by +): "+paramNames(params))
	}
	if _, fixed := s.Workload.Params[n]; fixed {
		return s.fail("sweep."+a.Name, a.Text, "a parameter not also fixed in workload."+n)
	}
	if n == InstancesParam && s.Instances != 0 {
		return s.fail("sweep."+a.Name, a.Text, "a parameter not also fixed in instances")
	}
	for j, b := range s.Backends {
		if _, fixed := b.Params[n]; fixed {
			return s.fail("sweep."+a.Name, a.Text, fmt.Sprintf("a parameter not also fixed in backends[%d].params.%s", j, n))
		}
	}
	if swept[n] {
		return s.fail("sweep."+a.Name, a.Text, "each parameter in one axis only ("+n+" is swept twice)")
	}
	return nil
}

// checkRuns checks how each cell runs: its duration, warm-up, error limit and repeats (cells
// are the cells of one repeat), the price lists, and whether cells may share a backend.
func (s *Spec) checkRuns(cells int) error {
	if s.Duration < 0 || (s.Duration > 0 && time.Duration(s.Duration) < MinDuration) {
		return s.fail("duration", time.Duration(s.Duration).String(), "a duration of at least "+MinDuration.String()+", like 120s")
	}
	if r := s.MaxErrorRate; r != nil && (*r < 0 || *r > 1 || *r != *r) {
		return s.fail("max_error_rate", strconv.FormatFloat(*r, 'g', -1, 64), "a share of requests from 0 to 1 (0.01: 1%)")
	}
	if s.Warmup < 0 {
		return s.fail("warmup", time.Duration(s.Warmup).String(), "a duration of 0 or more")
	}
	if s.Repeat < 1 || s.Repeat > 100 {
		return s.fail("repeat", strconv.Itoa(s.Repeat), "1 to 100 runs per cell")
	}
	if cells*s.Repeat > MaxCells {
		return s.fail("repeat", strconv.Itoa(s.Repeat), fmt.Sprintf("at most %d cells in all (the product of the sweep, backends and repeats)", MaxCells))
	}
	for i, p := range s.Prices {
		if p.Name == "" || p.ClassAPer1000 < 0 || p.ClassBPer1000 < 0 {
			return s.fail(fmt.Sprintf("prices[%d]", i), fmt.Sprintf("%+v", p), "a name and prices of 0 or more per 1,000 operations")
		}
	}
	if s.ShareBackend && s.Crash != nil {
		return s.fail("share_backend", "true", "false for crash runs (each crash needs an instance of its own)")
	}
	if s.ShareBackend && s.Instances > 1 {
		return s.fail("share_backend", "true", "false with instances: each multi-instance cell mounts its own instances")
	}
	return nil
}

// checkCrash checks crash runs: one instance, a bounded number of crashes (cells are the cells
// of one repeat) and when they fall.
func (s *Spec) checkCrash(cells int) error {
	c := s.Crash
	if c == nil {
		return nil
	}
	if v, _ := s.Workload.Param(InstancesParam); v != "" && v != "0" && v != "1" {
		return s.fail("crash", "with workload.instances "+v, "crash runs of one instance (leave out crash or instances)")
	}
	if s.Instances > 1 {
		return s.fail("crash", "with instances "+strconv.Itoa(s.Instances), "crash runs of one instance (leave out crash or instances)")
	}
	if c.Count < 1 || c.Count > 1000 {
		return s.fail("crash.count", strconv.Itoa(c.Count), "1 to 1000 crashes per backend and VU level")
	}
	if cells*c.Count > MaxCells {
		return s.fail("crash.count", strconv.Itoa(c.Count), fmt.Sprintf("at most %d crashes in all (the product of the sweep, backends and crash.count)", MaxCells))
	}
	if c.After.From <= 0 || c.After.To < c.After.From {
		return s.fail("crash.after", c.After.String(), durRangeSyntax)
	}
	return nil
}

// checkThresholds resolves each threshold against the workload's metrics, and its price list
// against the run's (the scenario's own, else the build's).
func (s *Spec) checkThresholds(known Known) error {
	if len(s.Thresholds) > MaxThresholds {
		return s.fail("thresholds", strconv.Itoa(len(s.Thresholds)), fmt.Sprintf("at most %d thresholds", MaxThresholds))
	}
	prices := known.PriceLists
	if len(s.Prices) > 0 {
		prices = nil
		for _, p := range s.Prices {
			prices = append(prices, p.Name)
		}
	}
	for i := range s.Thresholds {
		t := &s.Thresholds[i]
		field := fmt.Sprintf("thresholds[%d]", i)
		if err := t.Resolve(field, known.Metrics[s.Workload.Type], s.Crash != nil); err != nil {
			return s.named(err)
		}
		if t.Select != "" && !slices.ContainsFunc(prices, func(p string) bool { return strings.EqualFold(p, t.Select) }) {
			return s.fail(field, t.Text, "a price list of this run in [ ]: "+strings.Join(prices, ", "))
		}
	}
	return nil
}

// checkPublished checks the published figures' tables: columns, and a value per column per row.
func (s *Spec) checkPublished() error {
	for i, p := range s.Published {
		if len(p.Columns) == 0 {
			return s.fail(fmt.Sprintf("published[%d].columns", i), "", "a list of parameter and metric names")
		}
		for j, row := range p.Rows {
			if len(row) != len(p.Columns) {
				return s.fail(fmt.Sprintf("published[%d].rows[%d]", i, j), fmt.Sprint(row), fmt.Sprintf("%d values, one per column", len(p.Columns)))
			}
		}
	}
	return nil
}

// validLabel keeps a backend's label usable as part of a file name.
func validLabel(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || (i > 0 && (r == '.' || r == '_' || r == '-'))
		if !ok {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
