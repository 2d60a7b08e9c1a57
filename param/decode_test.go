package param

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// decodeDecl has a parameter of every kind, each with a default.
var decodeDecl = []Param{
	{Name: "vus", Kind: KindInt, Default: "1", Min: 1, Max: 100},
	{Name: "seed", Kind: KindInt, Default: "7", Min: 0, Max: 1 << 62},
	{Name: "rate", Kind: KindFloat, Default: "0.5", Min: 0, Max: math.Inf(1)},
	{Name: "timeout", Kind: KindDuration, Default: "60s", Min: 0.001, Max: 3600},
	{Name: "bs", Kind: KindSize, Default: "4KiB", Min: 512, Max: 1 << 30},
	{Name: "cache", Kind: KindBool, Default: "off"},
	{Name: "mode", Kind: KindEnum, Default: "closed", Allowed: []string{"closed", "open"}},
	{Name: "path", Kind: KindString, Default: "/"},
	{Name: "limit", Kind: KindSize, Unit: "bytes"}, // no default: unset unless given
	{Name: "note", Kind: KindString},
}

type load struct {
	VUs     int           `param:"vus"`
	Rate    float64       `param:"rate"`
	Timeout time.Duration `param:"timeout"`
}

type decoded struct {
	load            // embedded: its fields are filled too
	Seed    uint64  `param:"seed"`
	BS      int64   `param:"bs"`
	Cache   bool    `param:"cache"`
	Mode    string  `param:"mode"`
	Path    string  `param:"path"`
	Limit   *int64  `param:"limit"`
	Note    *string `param:"note"`
	Cached  *bool   `param:"cache"` // has a default, which a pointer does not take
	Touched string  // untagged: left alone
}

// Defaults fill what is not given; given values are read as their kinds; a pointer is set by a
// given value only.
func TestDecodeAppliesDefaultsAndReadsKinds(t *testing.T) {
	var got decoded
	got.Touched = "kept"
	if err := Decode(decodeDecl, nil, &got); err != nil {
		t.Fatal(err)
	}
	want := decoded{load: load{VUs: 1, Rate: 0.5, Timeout: time.Minute}, Seed: 7, BS: 4096, Mode: "closed", Path: "/", Touched: "kept"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	values := map[string]string{"vus": " 12 ", "seed": "4611686018427387904", "rate": "2.25", "timeout": "150ms", "bs": "1MiB",
		"cache": "on", "mode": "open", "path": "/count_up", "limit": "0", "note": "", "undeclared": "whatever"}
	got = decoded{}
	if err := Decode(decodeDecl, values, &got); err != nil {
		t.Fatal(err)
	}
	limit, note, cached := int64(0), "", true
	want = decoded{load: load{VUs: 12, Rate: 2.25, Timeout: 150 * time.Millisecond}, Seed: 1 << 62, BS: 1 << 20, Cache: true,
		Mode: "open", Path: "/count_up", Limit: &limit, Note: &note, Cached: &cached}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("given: %+v, want %+v", got, want)
	}
	for _, text := range []string{"true", "1", "yes", "on"} {
		var b struct {
			Cache bool `param:"cache"`
		}
		if err := Decode(decodeDecl, map[string]string{"cache": text}, &b); err != nil || !b.Cache {
			t.Errorf("cache %q: %v, %v", text, b.Cache, err)
		}
	}
}

// A bad value gives the very error Check gives, whether or not a field takes the parameter.
func TestDecodeErrorsAreChecks(t *testing.T) {
	for name, bad := range map[string][]string{
		"vus": {"0", "101", "1.5", "x", ""}, "seed": {"-1"}, "rate": {"-1", "NaN", "Inf"}, "timeout": {"0s", "soon", "2h"},
		"bs": {"100", "2GiB", "4x"}, "cache": {"maybe"}, "mode": {"Open", ""}, "limit": {"lots"},
	} {
		p, _ := Find(decodeDecl, name)
		for _, v := range bad {
			var got decoded
			err := Decode(decodeDecl, map[string]string{name: v}, &got)
			want := p.Check(name, v)
			if want == nil || !reflect.DeepEqual(err, want) {
				t.Errorf("%s %q: %v, want Check's %v", name, v, err, want)
			}
			var untaken struct {
				Path string `param:"path"`
			}
			if err := Decode(decodeDecl, map[string]string{name: v}, &untaken); !reflect.DeepEqual(err, want) {
				t.Errorf("%s %q with no field for it: %v, want Check's %v", name, v, err, want)
			}
		}
	}
	// The first bad value in the declaration's order is the one reported, every time.
	values := map[string]string{"mode": "x", "vus": "0", "bs": "1"}
	for i := 0; i < 10; i++ {
		var got decoded
		if err := Decode(decodeDecl, values, &got); err == nil || !strings.HasPrefix(err.Error(), "vus:") {
			t.Fatalf("%v, want vus's error", err)
		}
	}
}

// Under puts a FieldError's field in its place and leaves other errors alone.
func TestUnder(t *testing.T) {
	p, _ := Find(decodeDecl, "vus")
	var got decoded
	err := Under("workload.", Decode(decodeDecl, map[string]string{"vus": "0"}, &got))
	if want := p.Check("workload.vus", "0"); !reflect.DeepEqual(err, want) {
		t.Errorf("%v, want %v", err, want)
	}
	plain := errors.New("plain")
	if Under("x.", plain) != plain || Under("x.", nil) != nil {
		t.Error("Under changed an error that is not a FieldError")
	}
}

// A struct Decode cannot fill is a programming error, refused at its first use with a message
// naming the field, its tag and what is wrong.
func TestDecodeRefusesFieldsItCannotFill(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts any
		want []string
	}{
		{"unknown tag", &struct {
			VUS int `param:"vu"`
		}{}, []string{"VUS", `"vu"`, "does not hold", "vus, seed"}},
		{"unknown tag, nested", &struct {
			Inner struct {
				X int `param:"nope"`
			}
		}{}, []string{"Inner.X", `"nope"`}},
		{"duration into int", &struct {
			T int64 `param:"timeout"`
		}{}, []string{"T", "timeout", "time.Duration"}},
		{"int into duration", &struct {
			N time.Duration `param:"vus"`
		}{}, []string{"N", "a time.Duration holds a duration"}},
		{"size into float", &struct {
			B float64 `param:"bs"`
		}{}, []string{"B", "integer type"}},
		{"bound beyond int8", &struct {
			S int8 `param:"seed"`
		}{}, []string{"S", "int8 cannot hold", "4611686018427387904"}},
		{"bool into string", &struct {
			C string `param:"cache"`
		}{}, []string{"C", "want bool"}},
		{"unexported", &struct {
			vus int `param:"vus"`
		}{}, []string{"vus", "unexported"}},
		{"not a pointer", decoded{}, []string{"pointer to a struct"}},
		{"nil", (*decoded)(nil), []string{"pointer to a struct"}},
	} {
		msg := func() (msg string) {
			defer func() { msg = fmtRecover(recover()) }()
			Decode(decodeDecl, map[string]string{"vus": "2"}, tc.opts)
			return ""
		}()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: panic %q, want it to say %q", tc.name, msg, w)
			}
		}
	}
	unbounded := []Param{{Name: "n", Kind: KindInt, Default: "0"}}
	var u struct {
		N uint `param:"n"`
	}
	if msg := func() (msg string) {
		defer func() { msg = fmtRecover(recover()) }()
		Decode(unbounded, nil, &u)
		return ""
	}(); !strings.Contains(msg, "uint cannot hold every value from -9223372036854775808") {
		t.Errorf("an unbounded int into a uint: %q", msg)
	}
}

func fmtRecover(r any) string {
	if r == nil {
		return ""
	}
	return r.(string)
}
