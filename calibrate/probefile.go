package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"persistlab/lib/readfile"
)

// ProbeError says which field of a probe file is wrong, what it holds and what it may hold.
type ProbeError struct {
	File    string
	Field   string
	Value   string
	Allowed string
}

func (e *ProbeError) Error() string {
	return fmt.Sprintf("probe %s: %s: %q is not allowed: want %s", e.File, e.Field, e.Value, e.Allowed)
}

// ReadProbe reads a probe file through MaxProbeFileBytes and checks every field.
func ReadProbe(path string) (*Probe, error) {
	data, err := readfile.Regular(path, MaxProbeFileBytes)
	if err != nil {
		var big *readfile.TooLargeError
		if errors.As(err, &big) {
			return nil, fmt.Errorf("probe %s: %w: want a probe file persistlab probe wrote (a few KiB)", path, err)
		}
		return nil, fmt.Errorf("probe %s: %w", path, err)
	}
	return ParseProbe(data, path)
}

// ParseProbe reads a probe from JSON, refusing unknown fields, and checks every field.
func ParseProbe(data []byte, source string) (*Probe, error) {
	if len(data) > MaxProbeFileBytes {
		return nil, fmt.Errorf("probe %s: %d bytes: want a probe file under %d KiB", source, len(data), MaxProbeFileBytes>>10)
	}
	var head struct {
		Schema any `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("probe %s: %s (want the JSON persistlab probe writes, schema %s)", source, jsonErrorAt(data, err), ProbeSchema)
	}
	if s, ok := head.Schema.(string); !ok || s != ProbeSchema {
		return nil, &ProbeError{File: source, Field: "schema", Value: fmt.Sprint(head.Schema), Allowed: ProbeSchema + " (a file persistlab probe wrote)"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Probe
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("probe %s: %s", source, jsonErrorAt(data, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &ProbeError{File: source, Field: "(end)", Value: "more after the probe's object", Allowed: "one JSON object"}
	}
	if err := p.Check(source); err != nil {
		return nil, err
	}
	return &p, nil
}

// jsonErrorAt says where a JSON error is, naming the field it is in when the decoder does not:
// a NaN or Inf figure is a syntax error to JSON, at an offset only.
func jsonErrorAt(data []byte, err error) string {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) || syn.Offset <= 0 || syn.Offset > int64(len(data)) {
		return err.Error()
	}
	before := data[:syn.Offset]
	line := bytes.Count(before, []byte("\n")) + 1
	field := ""
	if i := bytes.LastIndex(before, []byte(`":`)); i > 0 {
		if j := bytes.LastIndexByte(before[:i], '"'); j >= 0 {
			field = string(before[j+1 : i])
		}
	}
	what := err.Error()
	if field != "" {
		return fmt.Sprintf("field %q, line %d: %s: want a finite number or the JSON persistlab probe writes (NaN and Inf are no JSON numbers)", field, line, what)
	}
	return fmt.Sprintf("line %d: %s", line, what)
}

// Bounds of a probe's figures: far beyond any machine, so that only nonsense is refused.
const (
	maxProbeMs    = 60_000 // per unit of CPU work
	maxProbeUs    = 60e6   // per file system call
	maxProbeCores = 4096
)

// Check checks every field of the probe; source names it in errors.
func (p *Probe) Check(source string) error {
	fail := func(field string, value any, allowed string) error {
		return &ProbeError{File: source, Field: field, Value: fmt.Sprint(value), Allowed: allowed}
	}
	number := func(field string, x, lo, hi float64) error {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < lo || x > hi {
			return fail(field, strconv.FormatFloat(x, 'g', -1, 64), fmt.Sprintf("a number from %g to %g", lo, hi))
		}
		return nil
	}
	text := func(field, s string) error {
		if !probeText(s) {
			return fail(field, s, "text of 1 to 200 printable characters")
		}
		return nil
	}
	if p.Schema != ProbeSchema {
		return fail("schema", p.Schema, ProbeSchema)
	}
	if _, err := time.Parse(time.RFC3339, p.When); err != nil {
		return fail("when", p.When, "a time in RFC 3339, like 2026-11-25T10:00:00Z")
	}
	m := p.Machine
	for _, e := range []error{text("persistlab_commit", p.Commit), text("machine.hostname", m.Hostname), text("machine.cpu_model", m.CPUModel),
		text("machine.kernel", m.Kernel), text("machine.go", m.Go)} {
		if e != nil {
			return e
		}
	}
	if m.Cores < 1 || m.Cores > maxProbeCores {
		return fail("machine.cores", m.Cores, fmt.Sprintf("a whole number from 1 to %d", maxProbeCores))
	}
	if m.GoMaxProcs < 1 || m.GoMaxProcs > maxProbeCores {
		return fail("machine.gomaxprocs", m.GoMaxProcs, fmt.Sprintf("a whole number from 1 to %d", maxProbeCores))
	}
	if err := number("machine.cgroup_cpu_limit", m.CgroupCPULimit, 0, maxProbeCores); err != nil {
		return err
	}
	if m.CgroupCPUMax != "" {
		if err := text("machine.cgroup_cpu_max", m.CgroupCPUMax); err != nil {
			return err
		}
	}
	c := p.CPU
	if err := text("cpu.unit", c.Unit); err != nil {
		return err
	}
	if c.Repeats < MinProbeRepeats || c.Repeats > MaxProbeRepeats {
		return fail("cpu.repeats", c.Repeats, fmt.Sprintf("a whole number from %d to %d", MinProbeRepeats, MaxProbeRepeats))
	}
	if len(c.Sizes) != len(UnitRows) {
		return fail("cpu.sizes", fmt.Sprintf("%d sizes", len(c.Sizes)), fmt.Sprintf("the %d unit sizes the probe times (%v rows)", len(UnitRows), UnitRows))
	}
	for i, s := range c.Sizes {
		at := fmt.Sprintf("cpu.sizes[%d]", i)
		if s.Rows != UnitRows[i] {
			return fail(at+".rows", s.Rows, fmt.Sprintf("%d (the probe's sizes are %v rows, in order)", UnitRows[i], UnitRows))
		}
		if s.Units != unitsPerBatch[s.Rows] {
			return fail(at+".units_per_batch", s.Units, fmt.Sprintf("%d: the probe's fixed work at %d rows (a probe of another version?)", unitsPerBatch[s.Rows], s.Rows))
		}
		if len(s.Batches) != c.Repeats {
			return fail(at+".batch_ms_per_unit", fmt.Sprintf("%d batches", len(s.Batches)), fmt.Sprintf("cpu.repeats = %d batches", c.Repeats))
		}
		for j, b := range s.Batches {
			if err := number(fmt.Sprintf("%s.batch_ms_per_unit[%d]", at, j), b, 1e-6, maxProbeMs); err != nil {
				return err
			}
		}
		if err := number(at+".ms_per_unit", s.MsPerUnit, 1e-6, maxProbeMs); err != nil {
			return err
		}
		if math.Abs(s.MsPerUnit-median(s.Batches)) > 1e-3*s.MsPerUnit {
			return fail(at+".ms_per_unit", s.MsPerUnit, fmt.Sprintf("the median of batch_ms_per_unit, %g", round4(median(s.Batches))))
		}
		if err := number(at+".units_per_s", s.UnitsPerS, 1e-6, 1e12); err != nil {
			return err
		}
	}
	if c.Threads < minProbeThreads || c.Threads > maxProbeThreads {
		return fail("cpu.threads", c.Threads, fmt.Sprintf("a whole number from %d to %d", minProbeThreads, maxProbeThreads))
	}
	if c.ParallelRows != HeldOutRows {
		return fail("cpu.parallel_rows", c.ParallelRows, strconv.Itoa(HeldOutRows))
	}
	if err := number("cpu.parallel_ms_per_unit", c.ParallelMs, 1e-6, maxProbeMs); err != nil {
		return err
	}
	if err := number("cpu.effective_cpus", c.EffectiveCPUs, 1e-3, maxProbeCores); err != nil {
		return err
	}
	if err := p.FS.check("fs", fail, number, text); err != nil {
		return err
	}
	if p.FUSE != nil {
		if err := p.FUSE.check("fuse", fail, number, text); err != nil {
			return err
		}
	}
	return number("elapsed_s", p.Elapsed, 0, 24*3600)
}

func (r FSResult) check(at string, fail func(string, any, string) error, number func(string, float64, float64, float64) error, text func(string, string) error) error {
	if err := text(at+".file_system", r.FileSystem); err != nil {
		return err
	}
	if r.Ops < MinFSOps || r.Ops > MaxFSOps {
		return fail(at+".ops", r.Ops, fmt.Sprintf("a whole number from %d to %d", MinFSOps, MaxFSOps))
	}
	if len(r.Calls) != len(FSCalls) {
		return fail(at+".calls", fmt.Sprintf("%d calls", len(r.Calls)), fmt.Sprintf("the %d calls the probe times", len(FSCalls)))
	}
	for i, c := range r.Calls {
		field := fmt.Sprintf("%s.calls[%d]", at, i)
		if c.Call != FSCalls[i].Name {
			return fail(field+".call", c.Call, FSCalls[i].Name+" (the probe's calls, in order)")
		}
		if err := number(field+".median_us", c.MedianUs, 0, maxProbeUs); err != nil {
			return err
		}
		if err := number(field+".p99_us", c.P99Us, c.MedianUs, maxProbeUs); err != nil {
			return err
		}
	}
	return nil
}

// probeText: 1 to 200 printable characters.
func probeText(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}
