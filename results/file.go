package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"persistlab/measure"
)

// Save writes the results atomically (a reader never sees half a file). derive, if not nil,
// recomputes the derived figures (aggregates) from the cells first, once the cells hold only
// numbers a file can keep. The file is compact JSON, written a cell at a time: what json.Marshal
// would write, without holding it all in memory.
func (r *Results) Save(path string, derive func(*Results)) error {
	r.dropNonFinite(true)
	if derive != nil {
		derive(r)
	}
	r.dropNonFinite(false)
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("results: %w", err)
		}
	}
	tmp := path + ".tmp"
	if err := r.writeFile(tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

func (r *Results) writeFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	err = r.encode(w)
	if err == nil {
		err = w.Flush()
	}
	return errors.Join(err, f.Close())
}

// encode writes r as json.Marshal would, and a newline, encoding a slice's elements one at a time
// so that no buffer holds every cell at once.
func (r *Results) encode(w *bufio.Writer) error {
	v := reflect.ValueOf(r).Elem()
	w.WriteByte('{')
	first := true
	for _, f := range resultsFields() {
		field := v.Field(f.index)
		if f.omitEmpty && isEmpty(field) {
			continue
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(f.name)
		w.Write(key)
		w.WriteByte(':')
		if field.Kind() != reflect.Slice || field.IsNil() {
			if err := encodeValue(w, field, f.name); err != nil {
				return err
			}
			continue
		}
		w.WriteByte('[')
		for i := 0; i < field.Len(); i++ {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := encodeValue(w, field.Index(i), fmt.Sprintf("%s[%d]", f.name, i)); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	}
	w.WriteString("}\n")
	return nil
}

func encodeValue(w *bufio.Writer, v reflect.Value, where string) error {
	data, err := json.Marshal(v.Addr().Interface()) // by address, as Marshal reaches a field of *Results
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	_, err = w.Write(data)
	return err
}

// isEmpty is encoding/json's test for omitempty: false, 0, nil, or of length 0 (a struct never is).
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Struct:
		return false
	}
	return v.IsZero()
}

// jsonField is a field of Results as its file names it.
type jsonField struct {
	name      string
	index     int
	omitEmpty bool
}

// resultsFields are Results' fields in declaration order, the order a file holds them in.
var resultsFields = sync.OnceValue(func() []jsonField {
	var fields []jsonField
	t := reflect.TypeFor[Results]()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, jsonField{name: name, index: i, omitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	return fields
})

// dropNonFinite leaves out the values JSON cannot hold (NaN, ±Inf), noting each a cell measured,
// so that a run never loses what it measured over one value. Derived figures (aggregates, fits)
// are dropped without a note: they come from the cells.
func (r *Results) dropNonFinite(noteCells bool) {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	clean := func(m map[string]float64, where string) {
		for k, v := range m {
			if bad(v) {
				delete(m, k)
				if where != "" {
					r.Notes = append(r.Notes, fmt.Sprintf("%s: %s was %v, not a number a results file holds: left out", where, k, v))
				}
			}
		}
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		where := ""
		if noteCells {
			where = fmt.Sprintf("cell %d (%s)", c.Index, c.Backend)
		}
		clean(c.Metrics, where)
		clean(c.BackendStats, where)
		for k, pts := range c.Series {
			c.Series[k] = slices.DeleteFunc(pts, func(p measure.Point) bool { return bad(p.T) || bad(p.V) })
		}
		if bad(c.ElapsedS) {
			c.ElapsedS = 0
		}
	}
	for i := range r.Aggregates {
		clean(r.Aggregates[i].Median, "")
		clean(r.Aggregates[i].Total, "")
	}
	r.Fits = slices.DeleteFunc(r.Fits, func(f Fit) bool { return bad(f.AvgMsPerVU) || bad(f.Published) })
	// Whatever else holds a number (crash runs, ceilings, bucket use): zeroed, and said so once.
	if n := zeroNonFinite(reflect.ValueOf(r).Elem()); n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d further figure(s) were not numbers a results file holds (NaN, Inf) and were written as 0", n))
	}
}

// zeroNonFinite sets every NaN or infinite float64 reachable from v to 0 (maps: deletes the
// entry) and counts them.
func zeroNonFinite(v reflect.Value) int {
	bad := func(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }
	n := 0
	switch v.Kind() {
	case reflect.Float64:
		if bad(v.Float()) && v.CanSet() {
			v.SetFloat(0)
			n++
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			n += zeroNonFinite(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				n += zeroNonFinite(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			n += zeroNonFinite(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.Float64 {
				if bad(e.Float()) {
					v.SetMapIndex(k, reflect.Value{})
					n++
				}
				continue
			}
			c := reflect.New(e.Type()).Elem() // map values cannot be set in place
			c.Set(e)
			if m := zeroNonFinite(c); m > 0 {
				v.SetMapIndex(k, c)
				n += m
			}
		}
	}
	return n
}
