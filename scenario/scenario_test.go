package scenario

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/measure"
	"persistlab/param"
)

// testParams stand in for a workload's declarations (the real ones are checked in package runner).
var testParams = []param.Param{
	{Name: "vus", Kind: param.KindInt, Min: 1, Max: 10000},
	{Name: "mode", Kind: param.KindEnum, Allowed: []string{"closed", "open"}},
	{Name: "rate", Kind: param.KindFloat, Min: 0, Max: 1e6},
	{Name: "method", Kind: param.KindEnum, Allowed: []string{"GET", "POST"}},
	{Name: "path", Kind: param.KindString},
	{Name: "instances", Kind: param.KindInt, Min: 1, Max: 8},
	{Name: "cpus", Kind: param.KindInt, Min: 0, Max: 64},
	{Name: "cpu_per_request", Kind: param.KindDuration, Min: 0, Max: 1},
	{Name: "threads", Kind: param.KindInt, Min: 0, Max: 10000},
	{Name: "gvl", Kind: param.KindBool},
	{Name: "file_size", Kind: param.KindSize, Min: 1, Max: 1 << 40},
	{Name: "rw", Kind: param.KindEnum, Allowed: []string{"read", "write", "randread", "randwrite"}},
}

var known = Known{Workloads: map[string][]param.Param{"counter": testParams}, Backends: []string{"local", "gcsfuse", "litestream"}}

func TestSweepExpansion(t *testing.T) {
	vus, _ := param.Find(testParams, "vus")
	size, _ := param.Find(testParams, "file_size")
	rw, _ := param.Find(testParams, "rw")
	for _, tc := range []struct {
		p    param.Param
		in   string
		want []string
	}{
		{vus, "2..20/2", []string{"2", "4", "6", "8", "10", "12", "14", "16", "18", "20"}},
		{vus, "1..3", []string{"1", "2", "3"}},
		{vus, "2, 4,8", []string{"2", "4", "8"}},
		{vus, "7", []string{"7"}},
		{vus, "3..10/4", []string{"3", "7"}},
		{size, "[10KiB, 200MiB, 1GiB]", []string{"10KiB", "200MiB", "1GiB"}},
		{rw, "read,randread", []string{"read", "randread"}},
	} {
		a := Axis{Name: tc.p.Name, Text: tc.in}
		if err := a.Expand(tc.p); err != nil || !reflect.DeepEqual(a.Values, tc.want) {
			t.Errorf("%s %q = %v, %v; want %v", tc.p.Name, tc.in, a.Values, err, tc.want)
		}
	}
	for _, bad := range []struct {
		p  param.Param
		in string
	}{{vus, ""}, {vus, "2..x"}, {vus, "20..2"}, {vus, "2..20/0"}, {vus, "a,b"}, {vus, "2..20/-1"}, {vus, "0,4"},
		// Bounds are checked before a range is expanded: these would exhaust memory or never end.
		{vus, "1..2000000000"}, {vus, "9223372036854775807..9223372036854775807"},
		{size, "1..4"}, {size, "10XB"}, {rw, "read,sideways"}} {
		a := Axis{Name: bad.p.Name, Text: bad.in}
		var fe *param.FieldError
		if err := a.Expand(bad.p); !errors.As(err, &fe) || fe.Field != "sweep."+bad.p.Name || fe.Value != bad.in {
			t.Errorf("%s %q: %v", bad.p.Name, bad.in, err)
		}
	}
}

// Every built-in parses; package runner validates them against the real workloads.
func TestBuiltinsLoad(t *testing.T) {
	names := Builtins()
	if len(names) == 0 {
		t.Fatal("no built-in scenarios embedded")
	}
	for _, name := range names {
		s, err := Load(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Name != name || s.Workload.Type == "" || len(s.Backends) == 0 {
			t.Errorf("%s: name %q, workload %q, %d backends", name, s.Name, s.Workload.Type, len(s.Backends))
		}
	}
}

func TestCloudrunSQLiteIsSeed000sDesign(t *testing.T) {
	s, err := Load("cloudrun-sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	vus, _ := s.Sweep.Get("vus")
	if !reflect.DeepEqual(vus.Values, []string{"2", "4", "6", "8", "10", "12", "14", "16", "18", "20"}) ||
		time.Duration(s.Duration) != 120*time.Second || s.Repeat != 3 || s.Workload.Params["cpus"] != "1" {
		t.Errorf("not seed 000's sweep, duration, repeats and 1 vCPU: %+v", s)
	}
	// The app as Rails 8 generates it: Puma's 3 threads, each SQLite statement under Ruby's GVL.
	if s.Workload.Params["threads"] != "3" || s.Workload.Params["gvl"] != "true" {
		t.Errorf("threads %q, gvl %q: want Rails 8's 3 and true", s.Workload.Params["threads"], s.Workload.Params["gvl"])
	}
	if got := len(s.Plan()); got != 10*3*len(s.Backends) {
		t.Errorf("plan has %d cells", got)
	}
}

// The published tables in the scenario must be what the seed's raw data gives by its own method.
func TestPublishedTablesMatchSeedRawData(t *testing.T) {
	s, err := Load("cloudrun-sqlite")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Published {
		raw := readRaw(t, "../measure/testdata/seed000_"+p.Backend+"_raw.tsv")
		for _, text := range p.Rows {
			row := make([]float64, len(text))
			for i, v := range text {
				row[i], _ = v.Float()
			}
			got := measure.MedianOfRuns(raw[int(row[0])])
			want := []float64{row[0], got.MedMs, got.AvgMs, got.P90Ms, got.P95Ms, got.MinMs, got.MaxMs}
			if !reflect.DeepEqual(row, want) {
				t.Errorf("%s: published row %v, median of raw runs %v", p.Backend, row, want)
			}
		}
		var x, y []float64
		for vus, runs := range raw {
			for _, r := range runs {
				x, y = append(x, float64(vus)), append(y, r.AvgMs)
			}
		}
		if k := measure.SlopeThroughOrigin(x, y); strconv.FormatFloat(k, 'f', 2, 64) != strconv.FormatFloat(p.Slope, 'f', 2, 64) {
			t.Errorf("%s: published slope %v, raw data gives %.3f", p.Backend, p.Slope, k)
		}
	}
}

func readRaw(t *testing.T, path string) map[int][]measure.Summary {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int][]measure.Summary{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		var v []float64
		for _, field := range strings.Fields(sc.Text()) {
			x, _ := strconv.ParseFloat(field, 64)
			v = append(v, x)
		}
		out[int(v[0])] = append(out[int(v[0])], measure.Summary{AvgMs: v[2], MinMs: v[3], MedMs: v[4], MaxMs: v[5], P90Ms: v[6], P95Ms: v[7]})
	}
	return out
}

func TestValidationErrorsNameFieldValueAndAllowed(t *testing.T) {
	base := `name: t
workload: {type: counter}
backends: [{name: local}]
sweep: {vus: "2,4"}
duration: 1s
`
	for _, tc := range []struct {
		yaml, field, value string
	}{
		{strings.Replace(base, "type: counter", "type: bogus", 1), "workload.type", "bogus"},
		{strings.Replace(base, "name: local", "name: nfs", 1), "backends[0].name", "nfs"},
		{strings.Replace(base, "name: local", "name: local, label: a/../../escaped", 1), "backends[0].label", "a/../../escaped"},
		{strings.Replace(base, `"2,4"`, `"2..x"`, 1), "sweep.vus", "2..x"},
		{strings.Replace(base, `"2,4"`, `"0,4"`, 1), "sweep.vus", "0,4"},
		{strings.Replace(base, `vus: "2,4"`, `vuz: "2,4"`, 1), "sweep.vuz", "2,4"},
		{strings.Replace(base, "1s", "soon", 1), "the duration on line 5", "soon"},
		{base + "warmup: abc\n", "the duration on line 6", "abc"},
		{strings.Replace(base, "1s", "1ns", 1), "duration", "1ns"},
		{base + "repeat: -2\n", "repeat", "-2"},
		{base + "repeat: 2.9\n", "repeat", "2.9"},
		{strings.Replace(base, "type: counter", "type: counter, mode: burst", 1), "workload.mode", "burst"},
		{strings.Replace(base, "type: counter", "type: counter, vus: 3", 1), "sweep.vus", "2,4"},
		{strings.Replace(base, "type: counter", "type: counter, speed: 3", 1), "workload.speed", "3"},
	} {
		s, err := Parse([]byte(tc.yaml), "t.yaml")
		if err == nil {
			err = s.Validate(known)
		}
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || fe.Value != tc.value || fe.Allowed == "" {
			t.Errorf("want field %q value %q, got %v", tc.field, tc.value, err)
		} else if !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "want") {
			t.Errorf("message %q does not say field and what is allowed", err)
		}
	}
	if _, err := Parse([]byte(base+"durations: 3s\n"), "t.yaml"); err == nil || !strings.Contains(err.Error(), "durations") {
		t.Errorf("unknown field should be named, got %v", err)
	}
	if _, err := Load("no-such-scenario"); err == nil || !strings.Contains(err.Error(), "cloudrun-sqlite") {
		t.Errorf("unknown scenario should list the built-ins, got %v", err)
	}
}

func TestOverrides(t *testing.T) {
	s, err := Load("cloudrun-sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Overrides{Quick: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	if vus, _ := s.Sweep.Get("vus"); s.Repeat != 1 || time.Duration(s.Duration) != 5*time.Second || !reflect.DeepEqual(vus.Values, []string{"2", "8", "14", "20"}) {
		t.Errorf("quick variant not applied: %+v", s)
	}
	if err := s.Apply(Overrides{Backends: []string{"gcsfuse"}, VUs: "2,4", Duration: "3s", Repeat: 2}); err != nil {
		t.Fatal(err)
	}
	if len(s.Backends) != 1 || s.Backends[0].Name != "gcsfuse" || s.Repeat != 2 || time.Duration(s.Duration) != 3*time.Second {
		t.Errorf("flags not applied: %+v", s)
	}
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	if cells := s.Plan(); len(cells) != 4 || cells[0].Repeat != 1 || cells[3].Repeat != 2 || cells[1].Params["vus"] != "4" {
		t.Errorf("plan %+v", cells)
	}
	var fe *param.FieldError
	if err := s.Apply(Overrides{VUs: "two"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(known); !errors.As(err, &fe) || fe.Field != "sweep.vus" || fe.Value != "two" {
		t.Errorf("bad --vus: %v", err)
	}
	// --set fixes a parameter and drops its sweep; --sweep sweeps one; cells are the product.
	if err := s.Apply(Overrides{Set: []string{"vus=3"}, Sweep: []string{"rw=read,write", "file_size=[4k, 1GiB]"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	cells := s.Plan()
	if len(cells) != 2*2*2 || s.Workload.Params["vus"] != "3" || cells[1].Params["file_size"] != "1GiB" || cells[2].Params["rw"] != "write" {
		t.Errorf("product plan %+v", cells)
	}
	if err := s.Apply(Overrides{Sweep: []string{"rw"}}); !errors.As(err, &fe) || fe.Field != "--sweep" {
		t.Errorf("bad --sweep: %v", err)
	}
}

func TestLabelsTellEntriesOfOneBackendApart(t *testing.T) {
	s, err := Load("litestream-sync-interval")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	cells := s.Plan()
	if len(cells) != 3*5 || cells[0].Backend != "litestream-1s" || cells[2].Backend != "litestream-60s" {
		t.Errorf("plan %+v", cells[:3])
	}
	if b, ok := s.BackendByID("litestream-10s"); !ok || b.Name != "litestream" || b.Options["sync_interval"] != "10s" {
		t.Errorf("entry %+v", b)
	}
	picked := *s
	picked.Backends = append([]BackendSpec(nil), s.Backends...)
	if err := picked.Apply(Overrides{Backends: []string{"litestream"}}); err != nil || len(picked.Backends) != 3 {
		t.Errorf("--backend litestream should pick all three entries: %v %+v", err, picked.Backends)
	}
	dup := *s
	dup.Backends = []BackendSpec{{Name: "litestream"}, {Name: "litestream"}}
	var fe *param.FieldError
	if err := dup.Validate(known); !errors.As(err, &fe) || fe.Field != "backends[1].label" {
		t.Errorf("two unlabelled entries of one backend: %v", err)
	}
}

func TestCrashSettings(t *testing.T) {
	s, err := Load("cloudrun-sqlite-crash")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	if s.Crash == nil || s.Crash.Count != 10 || len(s.Plan()) != 10*len(s.Backends) {
		t.Fatalf("crash %+v, plan %d", s.Crash, len(s.Plan()))
	}
	if err := s.Apply(Overrides{Quick: true, CrashAfter: "1s..2s"}); err != nil || s.Crash.Count != 3 || s.Crash.After.To != 2*time.Second {
		t.Errorf("quick crash variant: %v %+v", err, s.Crash)
	}
	var fe *param.FieldError
	if err := s.Apply(Overrides{CrashAfter: "2s..1s"}); !errors.As(err, &fe) || fe.Field != "--crash-after" {
		t.Errorf("backwards range: %v", err)
	}
	two, _ := Load("cloudrun-sqlite-two-instances")
	two.Apply(Overrides{Crashes: 2})
	if err := two.Validate(known); !errors.As(err, &fe) || fe.Field != "crash" {
		t.Errorf("crash runs with two instances: %v", err)
	}
	plain, _ := Load("cloudrun-sqlite")
	if err := plain.Apply(Overrides{Crashes: 4}); err != nil || plain.Crash == nil || plain.Crash.Count != 4 || plain.Crash.After != DefaultCrashAfter {
		t.Errorf("--crash on a plain scenario: %v %+v", err, plain.Crash)
	}
	// A crash plan is bounded like any other: by its crashes, not its (unused) repeats.
	huge, _ := Load("cloudrun-sqlite-crash")
	huge.Apply(Overrides{VUs: "1..1000", Crashes: 1000})
	if err := huge.Validate(known); !errors.As(err, &fe) || fe.Field != "crash.count" {
		t.Errorf("a million crashes: %v", err)
	}
}

// Parameters that move together (seed 003's block size follows its file size) form one axis.
func TestLinkedAxes(t *testing.T) {
	base := `name: t
workload: {type: counter}
backends: [{name: local}]
sweep:
  rw: [read, write]
  file_size+vus: [128KiB/2, 1GiB/4]
`
	s, err := Parse([]byte(base), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	cells := s.Plan()
	if len(cells) != 4 || cells[1].Params["file_size"] != "1GiB" || cells[1].Params["vus"] != "4" || cells[2].Params["rw"] != "write" {
		t.Fatalf("plan %+v", cells)
	}
	if got := cells[1].Point(s.Sweep); got != "rw=read file_size=1GiB vus=4" {
		t.Errorf("point %q", got)
	}
	if !s.Sweep.Has("vus") || s.Sweep.Has("mode") {
		t.Error("Has")
	}
	for bad, field := range map[string]string{
		"[128KiB/2, 1GiB]":   "sweep.file_size+vus",
		"[128KiB/0, 1GiB/4]": "sweep.file_size+vus",
		"[128KiB/2/3]":       "sweep.file_size+vus",
		"[huge/2]":           "sweep.file_size+vus",
	} {
		s, _ := Parse([]byte(strings.Replace(base, "[128KiB/2, 1GiB/4]", bad, 1)), "t.yaml")
		var fe *param.FieldError
		if err := s.Validate(known); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v", bad, err)
		}
	}
	s, _ = Parse([]byte(strings.Replace(base, "rw: [read, write]", "rw+vus: [read/1]", 1)), "t.yaml")
	var fe *param.FieldError
	if err := s.Validate(known); !errors.As(err, &fe) || !strings.Contains(fe.Allowed, "vus is swept twice") {
		t.Errorf("a parameter in two axes: %v", err)
	}
	// --set or --sweep of one linked parameter is refused, naming the axis; the whole axis may be
	// swept again, and an unlinked parameter set.
	for _, o := range []Overrides{{Set: []string{"vus=3"}}, {Sweep: []string{"vus=1,2"}}} {
		s, _ = Parse([]byte(base), "t.yaml")
		if err := s.Apply(o); !errors.As(err, &fe) || !strings.Contains(fe.Allowed, "linked axis file_size+vus") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	s, _ = Parse([]byte(base), "t.yaml")
	if err := s.Apply(Overrides{Set: []string{"rw=read"}, Sweep: []string{"file_size+vus=1GiB/8"}}); err != nil ||
		len(s.Sweep) != 1 || s.Sweep[0].Text != "1GiB/8" || s.Workload.Params["rw"] != "read" {
		t.Errorf("whole axis: %v %+v", err, s.Sweep)
	}
}

func TestBackendEntriesFixParamsOfTheirOwn(t *testing.T) {
	parse := func(text string) *Spec { return mustParse(t, text) }
	base := "name: t\nworkload: {type: counter, vus: 2}\nbackends:\n  - {name: local}\n  - {name: local, label: open, params: {mode: open, rate: 50}}\n"
	s := parse(base)
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	if p := s.FixedParams("open"); p["mode"] != "open" || p["rate"] != "50" || p["vus"] != "2" {
		t.Errorf("the labelled entry's parameters: %v", p)
	}
	if p := s.FixedParams("local"); p["mode"] != "" || p["vus"] != "2" {
		t.Errorf("the plain entry's parameters: %v", p)
	}
	var fe *param.FieldError
	for text, field := range map[string]string{
		strings.Replace(base, "mode: open", "mode: sideways", 1): "backends[1].params.mode",
		strings.Replace(base, "mode: open", "speed: 3", 1):       "backends[1].params.speed",
		strings.Replace(base, "rate: 50", "vus: 3", 1):           "backends[1].params.vus",
		base + "sweep:\n  rate: [10, 20]\n":                      "sweep.rate",
		strings.Replace(base, "workload: {type: counter, vus: 2}", "workload: {type: counter}", 1) + "sweep:\n  mode: [open, closed]\n": "sweep.mode",
	} {
		if err := parse(text).Validate(known); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want an error naming %s", text, err, field)
		}
	}
}

// A range whose next value would pass the largest whole number is counted, not walked: it once
// wrapped to negative numbers and never ended. A value listed twice is refused, not run as
// cells that show as one row. Every whole-number parameter is bounded the same way.
func TestSweepRangesNeverOverflowOrRepeat(t *testing.T) {
	for _, in := range []string{"0..9223372036854775807/4611686018427387904", "0..9223372036854775807", "-9223372036854775808..9223372036854775807/1"} {
		a := Axis{Name: "seed", Text: in}
		done := make(chan error, 1)
		go func() {
			done <- a.Expand(param.Param{Name: "seed", Kind: param.KindInt, Min: -1 << 63, Max: 1<<63 - 1})
		}()
		select {
		case err := <-done:
			if in == "0..9223372036854775807/4611686018427387904" {
				if err != nil || !reflect.DeepEqual(a.Values, []string{"0", "4611686018427387904"}) {
					t.Errorf("%s = %v, %v", in, a.Values, err)
				}
			} else if err == nil {
				t.Errorf("%s: accepted %d values", in, len(a.Values))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still expanding after 5 s", in)
		}
	}
	vus, _ := param.Find(testParams, "vus")
	for _, in := range []string{"[2, 2, 2]", "2,4,2"} {
		a := Axis{Name: "vus", Text: in}
		var fe *param.FieldError
		if err := a.Expand(vus); !errors.As(err, &fe) || !strings.Contains(fe.Allowed, "once") {
			t.Errorf("%s: %v", in, err)
		}
	}
	linked := Axis{Name: "file_size+rw", Text: "[1KiB/read, 1KiB/read]"}
	if err := linked.ExpandLinked(func(n string) (param.Param, bool) { return param.Find(testParams, n) }); err == nil {
		t.Errorf("a linked value listed twice was accepted: %v", linked.Values)
	}
}

// What YAML cannot say plainly is refused with the field and its own words: a second document,
// an unknown field (the allowed ones listed, no Go type named), a mapping where a sweep belongs,
// and a count of 0 that would otherwise read as "not set".
func TestScenarioFileMistakesAreNamed(t *testing.T) {
	base := "name: t\nworkload: {type: counter}\nbackends: [{name: local}]\n"
	for _, tc := range []struct{ yaml, field, value, allowed string }{
		{base + "---\nname: u\n", "---", "a document after the first (line 4)", "one YAML document"},
		{base + "---\nname: [\n", "---", "a document after the first (line 4)", "one YAML document"},
		{"---\n" + base + "---\nname: [\n", "---", "a document after the first (line 5)", "one YAML document"},
		{base + "...\n# next\nname: [\n", "---", "a document after the first (line 6)", "one YAML document"},
		{base + "crash: {count: 2, afterr: 1s..2s}\n", "afterr", "line 4", "count, after, seed"},
		{base + "sweep: {vus: {a: 1}}\n", "sweep.vus", "{a: 1}", "a list"},
		{base + "repeat: 0\n", "repeat", "0", "at least 1"},
		{base + "crash: {count: 0, after: 1s..2s}\n", "crash.count", "0", "at least 1"},
		{base + "quick: {repeat: 0}\n", "quick.repeat", "0", "at least 1"},
	} {
		_, err := Parse([]byte(tc.yaml), "t.yaml")
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || fe.Value != tc.value || !strings.Contains(fe.Allowed, tc.allowed) {
			t.Errorf("%q: want field %q value %q allowed ~%q, got %v", tc.yaml, tc.field, tc.value, tc.allowed, err)
		}
		if err != nil && strings.Contains(err.Error(), "scenario.") {
			t.Errorf("the message names a Go type: %v", err)
		}
	}
	for _, tc := range []struct {
		o     Overrides
		field string
	}{
		{Overrides{Rate: 0, RateSet: true}, "--rate"},
		{Overrides{Rate: -5, RateSet: true}, "--rate"},
		{Overrides{Crashes: 0, CrashesSet: true}, "--crash"},
	} {
		s, err := Parse([]byte(base), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var fe *param.FieldError
		if err := s.Apply(tc.o); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: want an error for %s, got %v", tc.o, tc.field, err)
		}
	}
}

// A scenario path that is a FIFO or a device is refused at once, never read without end.
func TestScenarioFileMustBeARegularFile(t *testing.T) {
	fifo := t.TempDir() + "/s.yaml"
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		done := make(chan error, 1)
		go func() { _, err := Load(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", path)
		}
	}
}

// A workload's section written as a single value is refused saying what the section must be.
func TestASectionWrittenAsOneValueSaysWhatItMustBe(t *testing.T) {
	s, err := Parse([]byte("name: t\nworkload: {type: counter, pragmas: synchronous=FULL}\nbackends: [{name: local}]\nduration: 1s\nrepeat: 1\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := known
	k.Sections = map[string]map[string]string{"counter": {"pragmas": "a list of SQLite pragmas"}}
	var fe *param.FieldError
	if err := s.Validate(k); !errors.As(err, &fe) || fe.Field != "workload.pragmas" || !strings.Contains(fe.Allowed, "a list of SQLite pragmas") {
		t.Errorf("%v", err)
	}
}

// instances: at the top of a scenario is a mode beside crash:, and sets the instances parameter
// of every cell; setting it twice is refused, and a flag's --set or --sweep of instances
// replaces it.
func TestInstancesIsAModeAtTheTop(t *testing.T) {
	parse := func(text string) *Spec { return mustParse(t, text) }
	base := "name: t\nworkload: {type: counter, vus: 4}\nbackends: [{name: gcsfuse}]\ninstances: 2\n"
	s := parse(base)
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	if p := s.FixedParams("gcsfuse"); p["instances"] != "2" {
		t.Errorf("cells run with instances %q, want 2", p["instances"])
	}
	var fe *param.FieldError
	for text, field := range map[string]string{
		strings.Replace(base, "vus: 4}", "vus: 4, instances: 3}", 1):                           "instances",
		base + "sweep:\n  instances: [2, 3]\n":                                                 "sweep.instances",
		strings.Replace(base, "{name: gcsfuse}", "{name: gcsfuse, params: {instances: 3}}", 1): "backends[0].params.instances",
		strings.Replace(base, "instances: 2", "instances: 9", 1):                               "instances",
		base + "crash: {count: 2}\n":                                                           "crash",
		base + "share_backend: true\n":                                                         "share_backend",
	} {
		if err := parse(text).Validate(known); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want an error naming %s", text, err, field)
		}
	}
	quick := base + "quick:\n  sweep:\n    instances: [3]\n"
	for _, o := range []Overrides{{Set: []string{"instances=3"}}, {Sweep: []string{"instances=3"}}, {Quick: true}} {
		s := parse(quick)
		if err := s.Apply(o); err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(known); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if got := s.Plan()[0].Params["instances"] + s.FixedParams("gcsfuse")["instances"]; got != "3" || s.Instances != 0 {
			t.Errorf("%+v: instances %q (top level %d), want 3 from the flag", o, got, s.Instances)
		}
	}
}

// mustParse reads a scenario written in a test, failing the test if it does not parse.
func mustParse(t *testing.T, text string) *Spec {
	t.Helper()
	s, err := Parse([]byte(text), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// --quick on a scenario without a quick section runs a short variant persistlab derives, and the
// spec says so; a scenario's own quick section is never replaced.
func TestQuickWithoutAQuickSectionIsDerived(t *testing.T) {
	yaml := []byte("name: mine\nworkload: {type: counter}\nbackends: [{name: local}]\nsweep: {vus: 2..8/2}\nduration: 2m\nwarmup: 30s\nrepeat: 3\n")
	s, err := Parse(yaml, "mine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Overrides{Quick: true}); err != nil {
		t.Fatal(err)
	}
	if s.Quick == nil || !s.Quick.Derived || !s.QuickRun {
		t.Fatalf("quick %+v, quick run %v: want a derived variant, marked", s.Quick, s.QuickRun)
	}
	if s.Repeat != 1 || time.Duration(s.Duration) != QuickDuration || time.Duration(s.Warmup) != QuickWarmup {
		t.Errorf("repeat %d, duration %v, warmup %v: want 1, %v, %v", s.Repeat, time.Duration(s.Duration), time.Duration(s.Warmup), QuickDuration, QuickWarmup)
	}
	if vus, _ := s.Sweep.Get("vus"); vus.Text != "2..8/2" {
		t.Errorf("sweep %q: want every point of the scenario's", vus.Text)
	}
	short, _ := Parse([]byte("name: mine\nworkload: {type: counter}\nbackends: [{name: local}]\nduration: 3s\nrepeat: 2\n"), "mine.yaml")
	if err := short.Apply(Overrides{Quick: true}); err != nil || time.Duration(short.Duration) != 3*time.Second || short.Repeat != 1 {
		t.Errorf("a 3 s scenario's quick variant: %v, duration %v, repeat %d; want 3s kept, 1 repeat", err, time.Duration(short.Duration), short.Repeat)
	}
	own, _ := Load("cloudrun-sqlite")
	if err := own.Apply(Overrides{Quick: true}); err != nil || own.Quick.Derived || !own.QuickRun {
		t.Errorf("a scenario's own quick section: derived %v, quick run %v, %v", own.Quick.Derived, own.QuickRun, err)
	}
	plain, _ := Load("cloudrun-sqlite")
	if err := plain.Apply(Overrides{}); err != nil || plain.QuickRun {
		t.Errorf("a run without --quick is marked quick (%v)", err)
	}
}

// A scenario read from a file knows its directory, absolute, so paths beside it resolve from
// anywhere; a built-in has none.
func TestAScenarioFileKnowsItsDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(file, []byte("name: mine\nworkload: {type: counter}\nbackends: [{name: local}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	s, err := Load("mine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Workload.Dir != dir {
		t.Errorf("dir %q, want %q", s.Workload.Dir, dir)
	}
	b, _ := Load("cloudrun-sqlite")
	if b.Workload.Dir != "" {
		t.Errorf("a built-in's dir: %q", b.Workload.Dir)
	}
}
