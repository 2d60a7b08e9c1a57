package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"persistlab/internal/readfile"
	"persistlab/measure"
)

// Save writes the results atomically (a reader never sees half a file). derive, if not nil,
// recomputes the derived figures (aggregates) from the cells first, once the cells hold only
// numbers a file can keep.
func (r *Results) Save(path string, derive func(*Results)) error {
	r.dropNonFinite(true)
	if derive != nil {
		derive(r)
	}
	r.dropNonFinite(false)
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("results: %w", err)
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

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

// MaxResultsBytes bounds a results file read back: a full seed-000 protocol is a few MB, and
// reading takes about five times the file's size in memory.
const MaxResultsBytes = 128 << 20

// Load reads a results file, converting the first format. Its aggregates are as the file holds
// them: report.Load derives them anew with this version's code.
func Load(path string) (*Results, error) {
	data, err := readfile.Regular(path, MaxResultsBytes)
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("results %s: the file is empty", path)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("results %s: not a results file: %w", path, err)
	}
	var r *Results
	switch head.Schema {
	case Schema:
		r = &Results{}
		err = json.Unmarshal(data, r)
	case schemaV1:
		r, err = fromV1(data)
	default:
		return nil, fmt.Errorf("results %s: schema %q: this persistlab reads %q and %q", path, head.Schema, Schema, schemaV1)
	}
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	if r.Scenario == nil {
		return nil, fmt.Errorf("results %s: no scenario: the file is incomplete", path)
	}
	return r, nil
}
