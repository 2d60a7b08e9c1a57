package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"persistlab/param"
)

// MaxRate bounds --rate: far beyond what one machine's driver can send.
const MaxRate = 10_000_000

// Overrides are command-line settings that replace scenario fields.
type Overrides struct {
	Quick    bool
	Backends []string // keep only these labels or names, in this order (adding ones the scenario lacks)
	// Set fixes parameters (name=value), replacing a sweep of the same parameter; Sweep sweeps them
	// (name=values, any sweep form).
	Set      []string
	Sweep    []string
	VUs      string // shorthand for Sweep vus=...
	Duration string
	Warmup   string
	Repeat   int
	Rate     float64 // shorthand for Set mode=open and rate=...
	// CPUPerRequest is shorthand for Set cpu_per_request=...
	CPUPerRequest string
	// Crashes turns the run into crash runs with this many crashes per cell; CrashAfter sets when.
	Crashes    int
	CrashAfter string
	// ShareBackend turns share_backend on.
	ShareBackend bool
	// MaxErrorRate replaces max_error_rate when set.
	MaxErrorRate *float64
	// Thresholds are added to the scenario's.
	Thresholds []string
	// RepeatSet, RateSet and CrashesSet say the flag was given, so 0 is refused rather than ignored.
	RepeatSet, RateSet, CrashesSet bool
}

// unsetTopLevel clears the top-level field that sets parameter name, when a flag sets or sweeps
// the parameter itself (--set instances=3 replaces instances: 2).
func (s *Spec) unsetTopLevel(name string) {
	if name == InstancesParam {
		s.Instances = 0
	}
}

// linkedAxisOf names the linked axis (a+b+c) that sweeps param, or "".
func (s *Spec) linkedAxisOf(param string) string {
	for _, a := range s.Sweep {
		if ps := a.Params(); len(ps) > 1 && slices.Contains(ps, param) {
			return a.Name
		}
	}
	return ""
}

// Apply changes s as the overrides say: first the quick variant, then each explicit flag.
func (s *Spec) Apply(o Overrides) error {
	if o.Quick {
		s.applyQuick()
	}
	if len(o.Backends) > 0 {
		s.pickBackends(o.Backends)
	}
	if err := s.applySweeps(o); err != nil {
		return err
	}
	if o.RateSet && !(o.Rate > 0 && o.Rate <= MaxRate) {
		return &param.FieldError{Scenario: s.Name, Field: "--rate", Value: strconv.FormatFloat(o.Rate, 'g', -1, 64), Allowed: "an open loop's rate in requests/s, more than 0 and at most " + param.PlainNumber(MaxRate)}
	}
	if o.CrashesSet && (o.Crashes < 1 || o.Crashes > 1000) {
		return &param.FieldError{Scenario: s.Name, Field: "--crash", Value: strconv.Itoa(o.Crashes), Allowed: "1 to 1000 crashes per backend and VU level"}
	}
	if err := s.applySets(o); err != nil {
		return err
	}
	if err := s.applyDurations(o); err != nil {
		return err
	}
	if o.ShareBackend {
		s.ShareBackend = true
	}
	if o.Repeat < 0 || (o.RepeatSet && o.Repeat == 0) {
		return &param.FieldError{Scenario: s.Name, Field: "--repeat", Value: strconv.Itoa(o.Repeat), Allowed: "1 to 100 runs per cell"}
	}
	if o.MaxErrorRate != nil {
		v := *o.MaxErrorRate
		s.MaxErrorRate = &v
	}
	if err := s.addThresholds(o.Thresholds); err != nil {
		return err
	}
	if o.Repeat != 0 {
		s.Repeat = o.Repeat
	}
	return s.applyCrashes(o)
}

// applyQuick turns s into its quick variant: the scenario's own, or one derived from it.
func (s *Spec) applyQuick() {
	if s.Quick == nil {
		s.Quick = s.derivedQuick()
	}
	s.QuickRun = true
	q := s.Quick
	if s.Crash != nil && q.Crashes > 0 {
		s.Crash.Count = q.Crashes
	}
	for _, a := range q.Sweep {
		for _, n := range a.Params() {
			s.unsetTopLevel(n)
		}
		s.Sweep.Set(a)
	}
	for k, v := range q.Params {
		s.unsetTopLevel(k)
		s.Workload.SetParam(k, v)
	}
	if q.Duration != nil {
		s.Duration = *q.Duration
	}
	if q.Repeat > 0 {
		s.Repeat = q.Repeat
	}
	if q.Warmup != nil {
		s.Warmup = *q.Warmup
	}
}

// pickBackends keeps the entries names pick, in their order: an entry by its label, or by its
// backend's name when it has no label, else every labelled entry of that backend; a name the
// scenario lacks adds an entry of that backend.
func (s *Spec) pickBackends(names []string) {
	var picked []BackendSpec
	for _, name := range names {
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

// applySweeps sweeps what --sweep and --vus name, replacing a fixed value or an axis of the same
// parameter; a parameter of a linked axis is swept only with its whole axis.
func (s *Spec) applySweeps(o Overrides) error {
	sweeps := o.Sweep
	if o.VUs != "" {
		sweeps = append(sweeps, "vus="+o.VUs)
	}
	for _, kv := range sweeps {
		name, values, ok := strings.Cut(kv, "=")
		if !ok || name == "" || values == "" {
			return &param.FieldError{Scenario: s.Name, Field: "--sweep", Value: kv, Allowed: "NAME=VALUES, like vus=2..20/2 or rw=read,write"}
		}
		for _, n := range (Axis{Name: name}).Params() {
			if linked := s.linkedAxisOf(n); linked != "" && linked != name {
				return &param.FieldError{Scenario: s.Name, Field: "--sweep", Value: kv,
					Allowed: fmt.Sprintf("a parameter outside the linked axis %s, whose values go together: sweep the whole axis, --sweep %s=...", linked, linked)}
			}
			delete(s.Workload.Params, n)
			s.unsetTopLevel(n)
		}
		s.Sweep.Set(Axis{Name: name, Text: values})
	}
	return nil
}

// applySets fixes what --set, --rate and --cpu-per-request name, replacing an axis of the same
// parameter; a parameter of a linked axis is not fixed alone.
func (s *Spec) applySets(o Overrides) error {
	var sets []string // shorthands first, so an explicit --set has the last word
	if o.Rate != 0 {
		sets = append(sets, "mode=open", "rate="+strconv.FormatFloat(o.Rate, 'g', -1, 64))
	}
	if o.CPUPerRequest != "" {
		sets = append(sets, "cpu_per_request="+o.CPUPerRequest)
	}
	sets = append(sets, o.Set...)
	for _, kv := range sets {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return &param.FieldError{Scenario: s.Name, Field: "--set", Value: kv, Allowed: "NAME=VALUE, like bs=4k"}
		}
		if linked := s.linkedAxisOf(name); linked != "" {
			return &param.FieldError{Scenario: s.Name, Field: "--set", Value: kv,
				Allowed: fmt.Sprintf("a parameter outside the linked axis %s, whose values go together: set the whole axis, --sweep %s=VALUE/VALUE/...", linked, linked)}
		}
		s.Sweep = slices.DeleteFunc(s.Sweep, func(a Axis) bool { return slices.Contains(a.Params(), name) })
		s.unsetTopLevel(name)
		s.Workload.SetParam(name, value)
	}
	return nil
}

// applyDurations sets what --duration and --warmup say.
func (s *Spec) applyDurations(o Overrides) error {
	for _, d := range []struct {
		flag, text string
		into       *Duration
	}{{"--duration", o.Duration, &s.Duration}, {"--warmup", o.Warmup, &s.Warmup}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil || v < 0 {
			return &param.FieldError{Scenario: s.Name, Field: d.flag, Value: d.text, Allowed: "a duration like 500ms, 120s or 2m"}
		}
		*d.into = Duration(v)
	}
	return nil
}

// addThresholds adds --threshold's criteria to the scenario's.
func (s *Spec) addThresholds(texts []string) error {
	for _, text := range texts {
		t, err := ParseThreshold(text)
		var fe *param.FieldError
		if errors.As(err, &fe) {
			return &param.FieldError{Scenario: s.Name, Field: "--threshold", Value: text, Allowed: fe.Allowed}
		}
		s.Thresholds = append(s.Thresholds, t)
	}
	return nil
}

// applyCrashes turns the run into crash runs, or changes them, as --crash and --crash-after say.
func (s *Spec) applyCrashes(o Overrides) error {
	if o.Crashes == 0 && o.CrashAfter == "" {
		return nil
	}
	if s.Crash == nil {
		s.Crash = &Crash{Count: 10, After: DefaultCrashAfter, Seed: 1}
	}
	if o.Crashes != 0 {
		s.Crash.Count = o.Crashes
	}
	if o.CrashAfter != "" {
		r, err := ParseDurRange(o.CrashAfter)
		if err != nil {
			return &param.FieldError{Scenario: s.Name, Field: "--crash-after", Value: o.CrashAfter, Allowed: durRangeSyntax}
		}
		s.Crash.After = r
	}
	return nil
}
