package param

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Decode fills the struct opts points to from values, as decl declares them: each field tagged
// `param:"name"` gets the parameter's value, given in values or else its default, read as its
// kind; with neither, the field is left as it is. A pointer field takes a given value only, and
// stays nil otherwise: it tells a setting left out from one set to its default, where that
// matters (an override, an option that needs another). Untagged struct fields, exported or
// embedded, are filled the same way, field by field.
//
// Every value given for a declared parameter is checked first, in decl's order, whether or not a
// field takes it: the error is the *FieldError Check gives, its Field the parameter's name
// (Under puts it in place: options.file_cache). Names decl does not declare are left alone:
// refusing them is the declaration's owner's (backend.CheckOptions, the scenario's validation).
//
// A field tagged with a name decl does not hold, or whose type cannot hold the parameter's kind
// and bounds, is a programming error: Decode panics saying which.
//
// The field types by kind: int and size, an integer type (time.Duration excepted) that holds the
// declared bounds; float, float64; duration, time.Duration; bool, bool; enum and string, a string
// type. Each may be a pointer to one.
func Decode(decl []Param, values map[string]string, opts any) error {
	target := reflect.ValueOf(opts)
	if target.Kind() != reflect.Pointer || target.IsNil() || target.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("param.Decode: want a pointer to a struct, got %T", opts))
	}
	fields := tagged(target.Elem(), decl, nil)
	for _, p := range decl {
		if v, given := values[p.Name]; given {
			if err := p.Check(p.Name, v); err != nil {
				return err
			}
		}
	}
	for _, f := range fields {
		v, given := values[f.param.Name]
		if !given {
			if v = f.param.Default; v == "" || f.value.Kind() == reflect.Pointer {
				continue
			}
		}
		if err := f.set(v); err != nil {
			return err
		}
	}
	return nil
}

// Under is err with its field put under prefix ("workload." and "vus": "workload.vus") when it
// is a *FieldError; any other error as it is.
func Under(prefix string, err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return err
	}
	under := *fe
	under.Field = prefix + fe.Field
	return &under
}

// field is a struct field a parameter fills.
type field struct {
	param Param
	value reflect.Value
}

var durationType = reflect.TypeOf(time.Duration(0))

// tagged finds the fields of v that name a parameter of decl, and the fields of its untagged
// exported or embedded structs; path names v for messages.
func tagged(v reflect.Value, decl []Param, path []string) []field {
	var out []field
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, ok := sf.Tag.Lookup("param")
		where := strings.Join(append(append([]string{t.String()}, path...), sf.Name), ".")
		if !ok {
			if (sf.IsExported() || sf.Anonymous) && sf.Type.Kind() == reflect.Struct {
				out = append(out, tagged(v.Field(i), decl, append(path, sf.Name))...)
			}
			continue
		}
		p, declared := Find(decl, name)
		if !declared {
			panic(fmt.Sprintf("param.Decode: field %s is tagged %q, which the declaration does not hold (it holds %s)", where, name, strings.Join(Names(decl), ", ")))
		}
		if !sf.IsExported() {
			panic(fmt.Sprintf("param.Decode: field %s (parameter %s) is unexported: Decode cannot set it", where, name))
		}
		if problem := fits(p, sf.Type); problem != "" {
			panic(fmt.Sprintf("param.Decode: field %s (parameter %s, %s): %s", where, name, p.Kind, problem))
		}
		out = append(out, field{param: p, value: v.Field(i)})
	}
	return out
}

// fits says why a field of type t cannot hold p's values, or "" when it can.
func fits(p Param, t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch p.Kind {
	case KindInt, KindSize:
		lo, hi := intRange(p)
		holds := fmt.Sprintf("%s cannot hold every value from %d to %d", t, lo, hi)
		switch {
		case t == durationType:
			return "a time.Duration holds a duration, not " + string(p.Kind)
		case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
			if reflect.Zero(t).OverflowInt(lo) || reflect.Zero(t).OverflowInt(hi) {
				return holds
			}
			return ""
		case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
			if lo < 0 || reflect.Zero(t).OverflowUint(uint64(hi)) {
				return holds
			}
			return ""
		}
		return "want an integer type, not " + t.String()
	case KindFloat:
		if t.Kind() != reflect.Float64 {
			return "want float64, not " + t.String()
		}
	case KindDuration:
		if t != durationType {
			return "want time.Duration, not " + t.String()
		}
	case KindBool:
		if t.Kind() != reflect.Bool {
			return "want bool, not " + t.String()
		}
	case KindEnum, KindString:
		if t.Kind() != reflect.String {
			return "want a string type, not " + t.String()
		}
	default:
		return "no field type reads kind " + string(p.Kind)
	}
	return ""
}

// intRange is the whole numbers p accepts: its bounds, within an int64 (a size is never negative).
func intRange(p Param) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	if p.Kind == KindSize {
		lo = 0
	}
	if p.Bounded() {
		if p.Min > float64(lo) {
			lo = int64(math.Ceil(p.Min))
		}
		if p.Max < float64(hi) { // float64(MaxInt64) is 2^63: a Max of 2^63 or +Inf bounds nothing here
			hi = int64(math.Floor(p.Max))
		}
	}
	return lo, hi
}

// set reads v as the field's parameter and stores it; a value Check refuses gives Check's error.
func (f field) set(v string) error {
	p, to := f.param, f.value
	if err := p.Check(p.Name, v); err != nil {
		return err
	}
	if to.Kind() == reflect.Pointer {
		to.Set(reflect.New(to.Type().Elem()))
		to = to.Elem()
	}
	text := strings.TrimSpace(v) // as Number reads it
	var err error
	switch p.Kind {
	case KindInt, KindSize:
		var n int64
		if p.Kind == KindInt {
			n, err = strconv.ParseInt(text, 10, 64)
		} else {
			n, err = ParseSize(text)
		}
		if to.CanInt() {
			to.SetInt(n)
		} else {
			to.SetUint(uint64(n)) // fits made sure the bounds, which Check held n to, are not negative
		}
	case KindFloat:
		var x float64
		x, err = strconv.ParseFloat(text, 64)
		to.SetFloat(x)
	case KindDuration:
		var d time.Duration
		d, err = time.ParseDuration(text)
		to.SetInt(int64(d))
	case KindBool:
		var b bool
		b, err = ParseBool(text)
		to.SetBool(b)
	default: // enum and string: as written
		to.SetString(v)
	}
	if err != nil { // Check accepted what the kind's reader refuses: the two must agree
		panic(fmt.Sprintf("param.Decode: parameter %s: Check accepted %q, which reading it as %s refuses: %v", p.Name, v, p.Kind, err))
	}
	return nil
}
