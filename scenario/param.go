package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a workload parameter's values.
type Kind string

// Kinds of parameters.
const (
	KindInt      Kind = "int"      // whole numbers; sweeps may use ranges like 2..20/2
	KindFloat    Kind = "float"    // decimal numbers
	KindSize     Kind = "size"     // bytes, written 4k, 10KiB, 200MiB, 1G (k = 1024, as fio reads them)
	KindDuration Kind = "duration" // Go durations: 500ms, 10s, 2m
	KindBool     Kind = "bool"     // true/false (also 1/0, on/off)
	KindEnum     Kind = "enum"     // one of Allowed
	KindString   Kind = "string"   // free text
)

// Param is one parameter a workload declares: what a scenario may set once or sweep over.
type Param struct {
	Name    string
	Kind    Kind
	Default string   // as text; "" means unset
	Allowed []string // KindEnum: the values allowed
	Min     float64  // numeric kinds: bounds in the base unit (bytes, seconds); Min == Max == 0: none
	Max     float64
	Unit    string // for tables and messages: "VUs", "bytes", "requests/s"
	Help    string
}

// plainNumber writes x as people write numbers: 1073741824, not 1.073741824e+09.
func plainNumber(x float64) string {
	if math.Abs(x) < 1e18 {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// allowed describes what the parameter accepts, for error messages.
func (p Param) allowed() string {
	bounds := ""
	if p.Min != 0 || p.Max != 0 {
		switch p.Kind {
		case KindSize:
			bounds = fmt.Sprintf(" from %s to %s", FormatSize(int64(p.Min)), FormatSize(int64(p.Max)))
		case KindDuration:
			bounds = fmt.Sprintf(" from %s to %s", time.Duration(p.Min*float64(time.Second)), time.Duration(p.Max*float64(time.Second)))
		default:
			bounds = " from " + plainNumber(p.Min) + " to " + plainNumber(p.Max)
		}
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
		return "a size like 4k, 10KiB, 200MiB or 1GiB" + bounds
	case KindDuration:
		return "a duration like 500ms, 10s or 2m" + bounds
	case KindBool:
		return "true or false"
	case KindEnum:
		return "one of " + strings.Join(p.Allowed, ", ")
	default:
		return "text" + unit
	}
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
	if (p.Min != 0 || p.Max != 0) && (x < p.Min || x > p.Max) {
		return 0, fmt.Errorf("out of range")
	}
	return x, nil
}

// Check validates one value of the parameter; the error is a *FieldError for field.
func (p Param) Check(field, v string) error {
	fail := &FieldError{Field: field, Value: v, Allowed: p.allowed()}
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
