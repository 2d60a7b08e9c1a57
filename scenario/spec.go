// Package scenario reads, validates and expands experiment specs: a workload run against backends
// over a sweep of parameters, repeated. Built-in scenarios are embedded YAML files.
package scenario

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
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
	Sweep       Sweep         `yaml:"sweep" json:"sweep"`
	Duration    Duration      `yaml:"duration" json:"duration"`
	Repeat      int           `yaml:"repeat" json:"repeat"`
	// Warmup runs before each measured cell and is not recorded (k6 users do the same by hand).
	Warmup Duration `yaml:"warmup,omitempty" json:"warmup"`
	Quick  *Quick   `yaml:"quick,omitempty" json:"quick,omitempty"`
	// Prices override the list prices used for cost (GCS and S3 Standard by default).
	Prices []Price `yaml:"prices,omitempty" json:"prices,omitempty"`
	// Crash turns every cell into crash runs: the instance is lost during load and recovered.
	Crash     *Crash      `yaml:"crash,omitempty" json:"crash,omitempty"`
	Published []Published `yaml:"published,omitempty" json:"published,omitempty"`
}

// Workload says what load to drive and how to run the system under test.
type Workload struct {
	Type    string   `yaml:"type" json:"type"`                     // "counter"
	Mode    string   `yaml:"mode,omitempty" json:"mode"`           // closed | open
	Method  string   `yaml:"method,omitempty" json:"method"`       // default POST
	Path    string   `yaml:"path,omitempty" json:"path"`           // default /count_up
	Rate    float64  `yaml:"rate,omitempty" json:"rate,omitempty"` // open loop: requests/s
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout"`     // per request
	App     AppSpec  `yaml:"app,omitempty" json:"app"`             // the counter app
	// Instances runs this many app instances on one backend at once (Cloud Run scaled out), each
	// with its own mount of the same bucket; the VUs are split between them.
	Instances int `yaml:"instances,omitempty" json:"instances,omitempty"`
}

// AppSpec configures the counter app process.
type AppSpec struct {
	CPUs     int      `yaml:"cpus,omitempty" json:"cpus"`           // 0: not pinned
	MaxConns int      `yaml:"max_conns,omitempty" json:"max_conns"` // 0: Rails' pool of 5
	Pragmas  []string `yaml:"pragmas,omitempty" json:"pragmas"`     // overrides of Rails 8's, name=value
	// CPUPerRequest is CPU work per request besides SQLite's, standing in for a framework's cost.
	CPUPerRequest Duration `yaml:"cpu_per_request,omitempty" json:"cpu_per_request"`
}

// BackendSpec names a backend and its options. Label tells apart two entries of one backend with
// different options (litestream at 1 s and at 60 s); it defaults to the name.
type BackendSpec struct {
	Name    string            `yaml:"name" json:"name"`
	Label   string            `yaml:"label,omitempty" json:"label,omitempty"`
	Options map[string]string `yaml:"options,omitempty" json:"options,omitempty"`
}

// ID is how results name this entry: its label, or its backend's name.
func (b BackendSpec) ID() string {
	if b.Label != "" {
		return b.Label
	}
	return b.Name
}

// Sweep holds the parameters a scenario varies.
type Sweep struct {
	VUs IntSweep `yaml:"vus" json:"vus"`
}

// Quick is the short variant of a scenario (`--quick`), for demos and smoke tests.
type Quick struct {
	VUs      *IntSweep `yaml:"vus,omitempty" json:"vus,omitempty"`
	Duration *Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	Repeat   int       `yaml:"repeat,omitempty" json:"repeat,omitempty"`
	Warmup   *Duration `yaml:"warmup,omitempty" json:"warmup,omitempty"`
	Crashes  int       `yaml:"crashes,omitempty" json:"crashes,omitempty"` // crash runs per cell
}

// Price is a price list for bucket operations, in USD per 1,000.
type Price struct {
	Name          string  `yaml:"name" json:"name"`
	ClassAPer1000 float64 `yaml:"class_a_per_1000" json:"class_a_per_1000"` // uploads, listings (S3: PUT, COPY, POST, LIST)
	ClassBPer1000 float64 `yaml:"class_b_per_1000" json:"class_b_per_1000"` // reads (S3: GET)
}

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
		return &FieldError{Field: "crash.after", Value: n.Value, Allowed: durRangeSyntax}
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

// Published is a seed's own table for one backend, reported beside ours.
type Published struct {
	Backend string      `yaml:"backend" json:"backend"`
	Source  string      `yaml:"source" json:"source"`
	Columns []string    `yaml:"columns" json:"columns"`
	Rows    [][]float64 `yaml:"rows" json:"rows"`
	Slope   float64     `yaml:"slope,omitempty" json:"slope,omitempty"` // avg ms per VU, zero intercept
	Notes   string      `yaml:"notes,omitempty" json:"notes,omitempty"`
}

// Duration is a time.Duration written like "120s" or "2m".
type Duration time.Duration

// UnmarshalYAML reads Go duration text.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return &FieldError{Field: "duration", Value: n.Value, Allowed: "a duration like 500ms, 120s or 2m"}
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

// FieldError says which field of a scenario is wrong, what it holds and what it may hold.
type FieldError struct {
	Scenario string
	Field    string
	Value    string
	Allowed  string
}

func (e *FieldError) Error() string {
	prefix := ""
	if e.Scenario != "" {
		prefix = fmt.Sprintf("scenario %q: ", e.Scenario)
	}
	return fmt.Sprintf("%s%s: %q is not allowed: want %s", prefix, e.Field, e.Value, e.Allowed)
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

// Load reads a built-in scenario by name, or a YAML file by path.
func Load(nameOrPath string) (*Spec, error) {
	if data, err := builtinFS.ReadFile("builtin/" + nameOrPath + ".yaml"); err == nil {
		return Parse(data, nameOrPath)
	}
	data, err := os.ReadFile(nameOrPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("scenario %q: neither a built-in (%s) nor a readable file", nameOrPath, strings.Join(Builtins(), ", "))
		}
		return nil, fmt.Errorf("scenario %q: %w", nameOrPath, err)
	}
	return Parse(data, path.Base(nameOrPath))
}

// Parse reads a scenario from YAML, rejecting unknown fields, and fills in defaults.
func Parse(data []byte, source string) (*Spec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Scenario = source
			return nil, fe
		}
		return nil, fmt.Errorf("scenario %q: %w", source, err)
	}
	s.fillDefaults()
	return &s, nil
}

func (s *Spec) fillDefaults() {
	w := &s.Workload
	if w.Mode == "" {
		w.Mode = "closed"
	}
	if w.Method == "" {
		w.Method = "POST"
	}
	if w.Path == "" {
		w.Path = "/count_up"
	}
	if s.Repeat == 0 {
		s.Repeat = 1
	}
}
