// Package scenario reads, validates and expands experiment specs: a workload run against backends
// over a sweep of parameters, repeated. Built-in scenarios are embedded YAML files.
package scenario

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"persistlab/cost"
	"persistlab/lib/readfile"
	"persistlab/param"
	"persistlab/profile"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Spec is one scenario as written in YAML.
type Spec struct {
	Name        string        `yaml:"name" json:"name"`
	Title       string        `yaml:"title,omitempty" json:"title,omitempty"`
	Seed        string        `yaml:"seed,omitempty" json:"seed,omitempty"` // the seed experiment it reproduces
	Description string        `yaml:"description,omitempty" json:"description,omitempty"`
	Workload    Workload      `yaml:"workload" json:"workload"`
	Backends    []BackendSpec `yaml:"backends" json:"backends"`
	Sweep       Sweep         `yaml:"sweep,omitempty" json:"sweep"`
	// Duration and Warmup drive workloads that run for a set time (the counter's load); others
	// (fio, with its own runtime parameter) leave them out.
	Duration Duration `yaml:"duration,omitempty" json:"duration"`
	Repeat   int      `yaml:"repeat" json:"repeat"`
	// Warmup runs before each measured cell and is not recorded (k6 users do the same by hand).
	Warmup Duration `yaml:"warmup,omitempty" json:"warmup"`
	Quick  *Quick   `yaml:"quick,omitempty" json:"quick,omitempty"`
	// QuickRun says the run was the quick variant (--quick): too short to settle a close call.
	QuickRun bool `yaml:"-" json:"quick_run,omitempty"`
	// Prices override the list prices used for cost (GCS and S3 Standard by default).
	Prices []Price `yaml:"prices,omitempty" json:"prices,omitempty"`
	// Crash turns every cell into crash runs: the instance is lost during load and recovered.
	Crash *Crash `yaml:"crash,omitempty" json:"crash,omitempty"`
	// Instances runs every cell as several instances of the system under test sharing each backend
	// (each on its own mount, the load split), a mode beside crash runs; 0 leaves it to the
	// workload.instances parameter, which a sweep or a backend entry may also set.
	Instances int `yaml:"instances,omitempty" json:"instances,omitempty"`
	// ShareBackend starts each backend once per repeat and runs its cells on it in sweep order, as a
	// blog's tests ran one after another on one mount (later cells find what earlier ones cached).
	// By default every cell starts from a fresh backend.
	ShareBackend bool `yaml:"share_backend,omitempty" json:"share_backend,omitempty"`
	// MaxErrorRate is the share of failed requests (errors over answered and failed) above which a
	// row is marked and the run exits non-zero, like a k6 threshold; DefaultMaxErrorRate if unset.
	MaxErrorRate *float64 `yaml:"max_error_rate,omitempty" json:"max_error_rate,omitempty"`
	// Thresholds are criteria every row must meet, like k6's ("p95_ms < 200ms"); a crossed one
	// marks the row and the run exits non-zero.
	Thresholds Thresholds  `yaml:"thresholds,omitempty" json:"thresholds,omitempty"`
	Published  []Published `yaml:"published,omitempty" json:"published,omitempty"`
	// Profile is a calibration's profile (persistlab calibrate) whose measured figures replace the
	// model's defaults for every backend entry that does not set them itself: a path, relative to
	// the scenario's file. run --profile replaces it.
	Profile string `yaml:"profile,omitempty" json:"profile,omitempty"`
	// ProfileUsed is the profile the run took, as read, and what each entry took from it.
	ProfileUsed *profile.Use `yaml:"-" json:"profile_used,omitempty"`
	// Advise is persistlab advise's question for this scenario's app; a run ignores it.
	Advise *Advise `yaml:"advise,omitempty" json:"-"`
}

// DefaultMaxErrorRate is the error share a run tolerates unless the scenario says otherwise.
const DefaultMaxErrorRate = 0.01

// ErrorRateLimit is the scenario's threshold of failed requests.
func (s *Spec) ErrorRateLimit() float64 {
	if s.MaxErrorRate != nil {
		return *s.MaxErrorRate
	}
	return DefaultMaxErrorRate
}

// Workload names the workload and sets its parameters. Scalar fields are parameters the workload
// declares (fixed for every cell unless swept); mappings and lists are sections of the workload's
// own settings (the counter's SQLite pragmas), which the workload checks itself.
type Workload struct {
	Type     string
	Params   map[string]string
	Sections map[string]any
	// Dir is the absolute directory of the scenario file it was read from ("" for a built-in):
	// what {scenario_dir} names and relative paths of the scenario's own files resolve against.
	Dir string
}

// Param is the value the scenario fixes for a parameter, if any.
func (w Workload) Param(name string) (string, bool) {
	v, ok := w.Params[name]
	return v, ok
}

// SetParam fixes a parameter's value.
func (w *Workload) SetParam(name, value string) {
	if w.Params == nil {
		w.Params = map[string]string{}
	}
	w.Params[name] = value
}

// UnmarshalYAML splits the mapping into type, parameters and sections.
func (w *Workload) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &param.FieldError{Field: "workload", Value: NodeText(n), Allowed: "a mapping with a type and the workload's parameters"}
	}
	*w = Workload{Params: map[string]string{}, Sections: map[string]any{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, v := n.Content[i].Value, n.Content[i+1]
		switch {
		case key == "type":
			w.Type = v.Value
		case v.Kind == yaml.ScalarNode:
			w.Params[key] = v.Value
		default:
			var section any
			if err := v.Decode(&section); err != nil {
				return fmt.Errorf("workload.%s: %w", key, err)
			}
			w.Sections[key] = section
		}
	}
	return nil
}

// flat is the workload as one mapping, as it is written.
func (w Workload) flat() map[string]any {
	m := map[string]any{"type": w.Type}
	for k, v := range w.Params {
		m[k] = v
	}
	for k, v := range w.Sections {
		m[k] = v
	}
	return m
}

// MarshalYAML writes the workload as it is written: one mapping.
func (w Workload) MarshalYAML() (any, error) { return w.flat(), nil }

// MarshalJSON writes the workload as one object.
func (w Workload) MarshalJSON() ([]byte, error) { return json.Marshal(w.flat()) }

// UnmarshalJSON reads one object: scalars are parameters, objects and lists sections.
func (w *Workload) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*w = Workload{Params: map[string]string{}, Sections: map[string]any{}}
	for k, raw := range m {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		switch x := v.(type) {
		case string:
			if k == "type" {
				w.Type = x
			} else {
				w.Params[k] = x
			}
		case float64, bool:
			w.Params[k] = strings.TrimSpace(string(raw))
		case nil:
		default:
			w.Sections[k] = x
		}
	}
	return nil
}

// BackendSpec names a backend and its options. Label tells apart two entries of one backend with
// different options (litestream at 1 s and at 60 s); it defaults to the name.
type BackendSpec struct {
	Name    string            `yaml:"name" json:"name"`
	Label   string            `yaml:"label,omitempty" json:"label,omitempty"`
	Options map[string]string `yaml:"options,omitempty" json:"options,omitempty"`
	// Params fixes workload parameters for this entry's cells alone (seed 004's monolithic
	// repository on one volume type only); a parameter fixed here is neither fixed in workload
	// nor swept.
	Params map[string]string `yaml:"params,omitempty" json:"params,omitempty"`
}

// InstancesParam is the parameter the top-level instances: sets (a runner parameter every
// workload takes).
const InstancesParam = "instances"

// FixedParams is the workload parameters a backend entry's cells run with before the sweep point:
// the scenario's, then the entry's own.
func (s *Spec) FixedParams(backendID string) map[string]string {
	out := make(map[string]string, len(s.Workload.Params)+1)
	for k, v := range s.Workload.Params {
		out[k] = v
	}
	if s.Instances > 0 {
		out[InstancesParam] = strconv.Itoa(s.Instances)
	}
	if b, ok := s.BackendByID(backendID); ok {
		for k, v := range b.Params {
			out[k] = v
		}
	}
	return out
}

// ID is how results name this entry: its label, or its backend's name.
func (b BackendSpec) ID() string {
	if b.Label != "" {
		return b.Label
	}
	return b.Name
}

// Quick is the short variant of a scenario (`--quick`), for demos and smoke tests. Its sweep
// replaces the axes it names.
type Quick struct {
	Sweep    Sweep             `yaml:"sweep,omitempty" json:"sweep,omitempty"`
	Params   map[string]string `yaml:"params,omitempty" json:"params,omitempty"` // fixed parameters replaced
	Duration *Duration         `yaml:"duration,omitempty" json:"duration,omitempty"`
	Repeat   int               `yaml:"repeat,omitempty" json:"repeat,omitempty"`
	Warmup   *Duration         `yaml:"warmup,omitempty" json:"warmup,omitempty"`
	Crashes  int               `yaml:"crashes,omitempty" json:"crashes,omitempty"` // crash runs per cell
	// Derived says persistlab made this variant (the scenario has no quick section): --quick then
	// runs every sweep point once, for at most QuickDuration each.
	Derived bool `yaml:"-" json:"derived,omitempty"`
}

// The bounds of a quick variant persistlab derives for a scenario without one.
const (
	QuickDuration = 10 * time.Second
	QuickWarmup   = 2 * time.Second
	QuickCrashes  = 2
)

// derivedQuick is the short variant of a scenario that has none: one repeat, at most QuickDuration
// of load and QuickWarmup of warm-up per cell, at most QuickCrashes crashes, every sweep point.
func (s *Spec) derivedQuick() *Quick {
	q := &Quick{Repeat: 1, Derived: true}
	if time.Duration(s.Duration) > QuickDuration {
		d := Duration(QuickDuration)
		q.Duration = &d
	}
	if time.Duration(s.Warmup) > QuickWarmup {
		w := Duration(QuickWarmup)
		q.Warmup = &w
	}
	if s.Crash != nil && s.Crash.Count > QuickCrashes {
		q.Crashes = QuickCrashes
	}
	return q
}

// Price is a price list for bucket operations, in USD per 1,000.
type Price = cost.Price

// Crash says how crash runs go: Count crashes per backend and VU level, each killing the instance
// at a uniformly random moment between After[0] and After[1] of load (drawn from Seed).
type Crash struct {
	Count int      `yaml:"count" json:"count"`
	After DurRange `yaml:"after" json:"after"`
	Seed  int64    `yaml:"seed,omitempty" json:"seed"`
}

// DurRange is a range of durations written "1s..4s".
type DurRange struct {
	From, To time.Duration
}

const durRangeSyntax = "a range of durations like 1s..4s (FROM > 0, FROM <= TO)"

// ParseDurRange reads "FROM..TO".
func ParseDurRange(s string) (DurRange, error) {
	lo, hi, ok := strings.Cut(s, "..")
	from, err1 := time.ParseDuration(strings.TrimSpace(lo))
	to, err2 := time.ParseDuration(strings.TrimSpace(hi))
	if !ok || err1 != nil || err2 != nil || from <= 0 || to < from {
		return DurRange{}, fmt.Errorf("%q: want %s", s, durRangeSyntax)
	}
	return DurRange{from, to}, nil
}

func (r DurRange) String() string { return r.From.String() + ".." + r.To.String() }

// UnmarshalYAML reads "FROM..TO".
func (r *DurRange) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDurRange(n.Value)
	if err != nil {
		return &param.FieldError{Field: "crash.after", Value: n.Value, Allowed: durRangeSyntax}
	}
	*r = v
	return nil
}

// MarshalYAML writes "FROM..TO".
func (r DurRange) MarshalYAML() (any, error) { return r.String(), nil }

// MarshalJSON writes "FROM..TO".
func (r DurRange) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// UnmarshalJSON reads "FROM..TO".
func (r *DurRange) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	v, err := ParseDurRange(s)
	*r = v
	return err
}

// DefaultCrashAfter is when crash runs kill the instance unless told: late enough for the backend to
// have replicated, early enough to keep runs short.
var DefaultCrashAfter = DurRange{From: time.Second, To: 4 * time.Second}

// Published is a seed's own table for one backend, reported beside ours. Columns that name a
// parameter pick our cell (with Params fixing others); the rest name metrics.
type Published struct {
	Backend string            `yaml:"backend" json:"backend"`
	Source  string            `yaml:"source" json:"source"`
	Params  map[string]string `yaml:"params,omitempty" json:"params,omitempty"`
	Columns []string          `yaml:"columns" json:"columns"`
	Rows    [][]Value         `yaml:"rows" json:"rows"`
	Slope   float64           `yaml:"slope,omitempty" json:"slope,omitempty"` // avg ms per VU, zero intercept
	Notes   string            `yaml:"notes,omitempty" json:"notes,omitempty"`
}

// Value is one entry of a published table: a number or a parameter's text (128KiB, randread).
type Value string

// Float is the entry as a number; ok is false for text.
func (v Value) Float() (float64, bool) {
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// UnmarshalJSON reads a number or a string.
func (v *Value) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*v = Value(s)
		return nil
	}
	var f json.Number
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*v = Value(f.String())
	return nil
}

// MarshalJSON writes numbers as numbers.
func (v Value) MarshalJSON() ([]byte, error) {
	if _, ok := v.Float(); ok {
		return []byte(v), nil
	}
	return json.Marshal(string(v))
}

// Duration is a time.Duration written like "120s" or "2m".
type Duration time.Duration

// UnmarshalYAML reads Go duration text.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		// yaml gives no field name here; the line finds it (duration, warmup, quick.duration, ...).
		return &param.FieldError{Field: fmt.Sprintf("the duration on line %d", n.Line), Value: n.Value, Allowed: "a duration like 500ms, 120s or 2m"}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes Go duration text.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalJSON writes Go duration text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads Go duration text.
func (d *Duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// Builtins lists the embedded scenarios by name.
func Builtins() []string {
	entries, _ := fs.ReadDir(builtinFS, "builtin")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// MaxScenarioBytes bounds a scenario file: the built-ins are a few KiB.
const MaxScenarioBytes = 1 << 20

// Load reads a built-in scenario by name, or a YAML file by path.
func Load(nameOrPath string) (*Spec, error) {
	if data, err := builtinFS.ReadFile("builtin/" + nameOrPath + ".yaml"); err == nil {
		return Parse(data, nameOrPath)
	}
	data, err := readfile.Regular(nameOrPath, MaxScenarioBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("scenario %q: neither a built-in (%s) nor a readable file", nameOrPath, strings.Join(Builtins(), ", "))
		}
		return nil, fmt.Errorf("scenario %q: %w", nameOrPath, err)
	}
	s, err := Parse(data, path.Base(nameOrPath))
	if err != nil {
		return nil, err
	}
	if s.Workload.Dir, err = filepath.Abs(filepath.Dir(nameOrPath)); err != nil {
		return nil, fmt.Errorf("scenario %q: %w", nameOrPath, err)
	}
	return s, nil
}

// Parse reads a scenario from YAML, rejecting unknown fields, and fills in defaults.
func Parse(data []byte, source string) (*Spec, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("scenario %q: the file is empty: want a YAML scenario (persistlab scenarios show cloudrun-sqlite prints one)", source)
	}
	if len(data) > MaxScenarioBytes {
		return nil, fmt.Errorf("scenario %q: %d bytes: want a scenario under %d KiB", source, len(data), MaxScenarioBytes>>10)
	}
	if err := checkWholeNumbers(data, source); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		var fe *param.FieldError
		if errors.As(err, &fe) {
			fe.Scenario = source
			return nil, fe
		}
		if fe := unknownField(err); fe != nil {
			fe.Scenario = source
			return nil, fe
		}
		return nil, fmt.Errorf("scenario %q: %w", source, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		line := more.Line
		if line == 0 { // a second document that does not parse: yaml gives no node
			line = secondDocumentLine(data)
		}
		where := "a document after the first"
		if line > 0 {
			where += fmt.Sprintf(" (line %d)", line)
		}
		return nil, &param.FieldError{Scenario: source, Field: "---", Value: where, Allowed: "one YAML document per scenario file"}
	}
	s.fillDefaults()
	return &s, nil
}

// secondDocumentLine is the line where data's second YAML document begins: its "---" marker, or
// its first line after the first document's "..." end marker; 0 if there is none. A marker is one
// at the start of a line, where YAML allows no scalar to continue.
func secondDocumentLine(data []byte) int {
	begun, ended := false, false // the first document
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		marker := func(m string) bool {
			return line == m || strings.HasPrefix(line, m+" ") || strings.HasPrefix(line, m+"\t")
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case marker("---") && (begun || ended):
			return i + 1
		case marker("..."):
			ended = true
		case trimmed == "" || strings.HasPrefix(trimmed, "#") || (!begun && strings.HasPrefix(line, "%")):
		case ended:
			return i + 1
		default:
			begun = true
		}
	}
	return 0
}

// unknownField turns yaml's "field x not found in type scenario.Spec" into an error that names
// the field and lists the ones allowed there.
func unknownField(err error) *param.FieldError {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return nil
	}
	for _, msg := range te.Errors {
		m := unknownFieldRe.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		t, ok := yamlTypes[m[3]]
		if !ok {
			continue
		}
		return &param.FieldError{Field: m[2], Value: "line " + m[1], Allowed: "one of the fields here: " + strings.Join(yamlFields(t), ", ")}
	}
	return nil
}

var unknownFieldRe = regexp.MustCompile(`^line (\d+): field (.+) not found in type scenario\.(\w+)$`)

// yamlTypes are the types a scenario's mappings decode into, by name.
var yamlTypes = map[string]reflect.Type{
	"Spec": reflect.TypeOf(Spec{}), "BackendSpec": reflect.TypeOf(BackendSpec{}), "Quick": reflect.TypeOf(Quick{}),
	"Price": reflect.TypeOf(Price{}), "Crash": reflect.TypeOf(Crash{}), "Published": reflect.TypeOf(Published{}),
}

// yamlFields lists a struct's YAML field names.
func yamlFields(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// checkWholeNumbers refuses a fraction where a count belongs: yaml would read `repeat: 2.9` as 2.
func checkWholeNumbers(data []byte, source string) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil || len(root.Content) == 0 {
		return nil // the decoder reports it
	}
	var walk func(n *yaml.Node, path string) error
	walk = func(n *yaml.Node, path string) error {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, v := n.Content[i].Value, n.Content[i+1]
			field := strings.TrimPrefix(path+"."+key, ".")
			switch field {
			case "repeat", "crash.count", "crash.seed", "quick.repeat", "quick.crashes":
				if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
					return &param.FieldError{Scenario: source, Field: field, Value: NodeText(v), Allowed: "a whole number"}
				}
				// 0 would read as "not set" and be replaced by a default without a word.
				if n, err := strconv.ParseInt(v.Value, 0, 64); field != "crash.seed" && (err != nil || n < 1) {
					return &param.FieldError{Scenario: source, Field: field, Value: v.Value, Allowed: "a whole number of at least 1"}
				}
			case "crash", "quick":
				if err := walk(v, field); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(root.Content[0], "")
}

func (s *Spec) fillDefaults() {
	if s.Repeat == 0 {
		s.Repeat = 1
	}
	if s.Workload.Params == nil {
		s.Workload.Params = map[string]string{}
	}
}

// String writes Go duration text.
func (d Duration) String() string { return time.Duration(d).String() }
