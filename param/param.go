// Package param declares settings a user writes as text: a workload's parameters and a backend's
// options, each with its kind, default, bounds, unit and help, checked by one piece of code. It
// imports only the standard library, so the lab and the backends can use it without the scenario.
package param

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a parameter's values.
type Kind string

// Kinds of parameters.
const (
	KindInt      Kind = "int"      // whole numbers; sweeps may use ranges like 2..20/2
	KindFloat    Kind = "float"    // decimal numbers
	KindSize     Kind = "size"     // bytes, written 4k, 10KiB, 200MiB, 1G (k = 1024, as fio reads them)
	KindDuration Kind = "duration" // Go durations: 500ms, 10s, 2m
	KindBool     Kind = "bool"     // true/false (also 1/0, on/off, yes/no)
	KindEnum     Kind = "enum"     // one of Allowed
	KindString   Kind = "string"   // free text
)

// Param is one setting a workload or a backend declares: what a scenario may set (and, for a
// workload, sweep over).
type Param struct {
	Name    string
	Kind    Kind
	Default string   // as text; "" means unset
	Allowed []string // KindEnum: the values allowed
	// Min and Max bound the numeric kinds in the base unit (bytes, seconds); Min == Max == 0: no
	// bounds. Max may be +Inf (math.Inf(1)): a lower bound only.
	Min, Max float64
	Unit     string // for tables and messages: "VUs", "bytes", "requests/s"
	Help     string
}

// PlainNumber writes x as people write numbers: 1073741824, not 1.073741824e+09; a whole number
// an int64 holds in full (4611686018427387904).
func PlainNumber(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
		return strconv.FormatInt(int64(x), 10)
	}
	if math.Abs(x) < 1e18 {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// Bounded says whether the parameter has bounds (numeric kinds).
func (p Param) Bounded() bool { return p.Min != 0 || p.Max != 0 }

// Bounds writes the parameter's bounds in its kind's terms ("from 1 to 10000", "of at least 0s"),
// or "" when it has none.
func (p Param) Bounds() string {
	if !p.Bounded() {
		return ""
	}
	if math.IsInf(p.Max, 1) {
		return "of at least " + p.format(p.Min)
	}
	return "from " + p.format(p.Min) + " to " + p.format(p.Max)
}

// format writes x, in the base unit, in the parameter kind's terms.
func (p Param) format(x float64) string {
	switch p.Kind {
	case KindSize:
		return FormatSize(int64(x))
	case KindDuration:
		return time.Duration(x * float64(time.Second)).String()
	}
	return PlainNumber(x)
}

// Accepts describes what the parameter accepts, for error messages: "a whole number from 1 to
// 10000 (VUs)", "one of read, write".
func (p Param) Accepts() string {
	bounds := p.Bounds()
	if bounds != "" {
		bounds = " " + bounds
	}
	unit := ""
	if p.Unit != "" {
		unit = " (" + p.Unit + ")"
	}
	switch p.Kind {
	case KindInt:
		return "a whole number" + bounds + unit
	case KindFloat:
		return "a number" + bounds + unit
	case KindSize:
		return "a size like " + p.examples(sizeExamples, []string{"4k", "10KiB", "200MiB", "1GiB"}) + bounds
	case KindDuration:
		return "a duration like " + p.examples(durationExamples, []string{"500ms", "10s", "2m"}) + bounds
	case KindBool:
		if d := strings.ToLower(p.Default); d == "on" || d == "off" { // a switch written as one
			return "on or off"
		}
		return "true or false"
	case KindEnum:
		return "one of " + strings.Join(p.Allowed, ", ")
	default:
		return "text" + unit
	}
}

// Examples of values, in ascending order, for the kinds whose text has units.
var (
	sizeExamples     = []string{"512", "4k", "64KiB", "1MiB", "200MiB", "1GiB", "64GiB"}
	durationExamples = []string{"1ms", "5ms", "50ms", "500ms", "10s", "2m", "1h"}
)

// examples writes the usual examples when every one lies within the parameter's bounds, else as
// many of candidates as lie within them, spread over them; else the bounds themselves.
func (p Param) examples(candidates, usual []string) string {
	within := func(vs []string) []string {
		var out []string
		for _, v := range vs {
			if _, err := p.Number(v); err == nil {
				out = append(out, v)
			}
		}
		return out
	}
	list := within(usual)
	if len(list) < len(usual) {
		fit := within(candidates)
		n := min(len(usual), len(fit))
		list = nil
		for i := 0; i < n; i++ {
			at := 0
			if n > 1 {
				at = i * (len(fit) - 1) / (n - 1)
			}
			list = append(list, fit[at])
		}
	}
	if len(list) == 0 {
		list = []string{p.format(p.Min)}
		if !math.IsInf(p.Max, 1) && p.Max != p.Min {
			list = append(list, p.format(p.Max))
		}
	}
	if len(list) == 1 {
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// Number reads v as the parameter's base unit (bytes, seconds, 1 or 0), checking bounds.
func (p Param) Number(v string) (float64, error) {
	v = strings.TrimSpace(v)
	var x float64
	var err error
	switch p.Kind {
	case KindInt:
		var n int64
		n, err = strconv.ParseInt(v, 10, 64)
		x = float64(n)
	case KindFloat:
		x, err = strconv.ParseFloat(v, 64)
		if err == nil && (math.IsNaN(x) || math.IsInf(x, 0)) {
			err = fmt.Errorf("not a finite number")
		}
	case KindSize:
		var n int64
		n, err = ParseSize(v)
		x = float64(n)
	case KindDuration:
		var d time.Duration
		d, err = time.ParseDuration(v)
		x = d.Seconds()
	case KindBool:
		var b bool
		b, err = ParseBool(v)
		if b {
			x = 1
		}
	default:
		return 0, fmt.Errorf("parameter %s is %s, not a number", p.Name, p.Kind)
	}
	if err != nil {
		return 0, err
	}
	if p.Bounded() && (x < p.Min || x > p.Max) {
		return 0, fmt.Errorf("out of range")
	}
	return x, nil
}

// Check validates one value of the parameter; the error is a *FieldError for field.
func (p Param) Check(field, v string) error {
	fail := &FieldError{Field: field, Value: v, Allowed: p.Accepts()}
	switch p.Kind {
	case KindEnum:
		for _, a := range p.Allowed {
			if v == a {
				return nil
			}
		}
		return fail
	case KindString:
		return nil
	}
	if _, err := p.Number(v); err != nil {
		return fail
	}
	return nil
}

// Find is the parameter of params named name.
func Find(params []Param, name string) (Param, bool) {
	for _, p := range params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Names lists the parameters' names in their order.
func Names(params []Param) []string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return names
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

// ParseBool reads true/false, 1/0, on/off, yes/no.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "on", "yes":
		return true, nil
	case "false", "0", "off", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q: want true or false", v)
}

// ParseSize reads a size as fio does: a number with an optional unit k, m, g, t (or KiB, KB, MiB,
// ...), every unit a power of 1024 (fio's default kb_base=1024 reads KB as 1024 too); B is bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (4k, 10KiB, 200MiB, 1G)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	var shift uint
	switch strings.ToLower(t[i:]) {
	case "", "b":
	case "k", "kb", "kib":
		shift = 10
	case "m", "mb", "mib":
		shift = 20
	case "g", "gb", "gib":
		shift = 30
	case "t", "tb", "tib":
		shift = 40
	default:
		return 0, fmt.Errorf("size %q: unit %q: want k, m, g or t (KiB, MiB, GiB, TiB)", s, t[i:])
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n << shift, nil
}

// FormatSize writes bytes in the largest binary unit that divides them exactly: 4KiB, 200MiB, 1GiB, 1000B.
func FormatSize(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
