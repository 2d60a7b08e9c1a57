package param

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"4k": 4096, "4KiB": 4096, "10KB": 10240, "200M": 200 << 20, "1GiB": 1 << 30, "512": 512, "3b": 3} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if got, _ := ParseSize(FormatSize(want)); got != want {
			t.Errorf("FormatSize(%d) = %q does not read back", want, FormatSize(want))
		}
	}
	for _, bad := range []string{"", "k", "-4k", "4x", "99999999999999999999", "9999999999T"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	for n, want := range map[int64]string{0: "0B", 1000: "1000B", 4096: "4KiB", 1 << 30: "1GiB", 3 << 40: "3TiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBools(t *testing.T) {
	for in, want := range map[string]bool{"true": true, "1": true, "on": true, "Yes": true, " false ": false, "0": false, "off": false, "no": false} {
		if got, err := ParseBool(in); err != nil || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "maybe", "2"} {
		if _, err := ParseBool(bad); err == nil {
			t.Errorf("ParseBool(%q) accepted", bad)
		}
	}
}

// Bounds in messages are written as people write numbers.
func TestBoundsAreWrittenPlainly(t *testing.T) {
	p := Param{Name: "file_bytes", Kind: KindInt, Min: 0, Max: 1 << 30}
	err := p.Check("workload.file_bytes", "99999999999")
	if err == nil || strings.Contains(err.Error(), "e+") || !strings.Contains(err.Error(), "1073741824") {
		t.Errorf("%v", err)
	}
}

// A whole-number bound is written whole, however large: the seed's 2^62, not 4.611686018427388e+18.
func TestWholeBoundsAreWrittenWhole(t *testing.T) {
	seed := Param{Name: "seed", Kind: KindInt, Min: 0, Max: 1 << 62}
	if got, want := seed.Accepts(), "a whole number from 0 to 4611686018427387904"; got != want {
		t.Errorf("accepts %q, want %q", got, want)
	}
	for x, want := range map[float64]string{0.5: "0.5", -3: "-3", 1e6: "1000000", 1 << 63: "9.223372036854776e+18", math.MaxInt64 >> 1: "4611686018427387904"} {
		if got := PlainNumber(x); got != want {
			t.Errorf("PlainNumber(%v) = %q, want %q", x, got, want)
		}
	}
}

// The examples a size or a duration is described with lie within its bounds: a latency of at
// most 1s is not described with 10s or 2m.
func TestExamplesLieWithinTheBounds(t *testing.T) {
	for _, tc := range []struct {
		p    Param
		want string
	}{
		{Param{Kind: KindDuration, Min: 1e-9, Max: 1}, "a duration like 1ms, 5ms or 500ms from 1ns to 1s"},
		{Param{Kind: KindDuration, Min: 0, Max: 86400}, "a duration like 500ms, 10s or 2m from 0s to 24h0m0s"},
		{Param{Kind: KindDuration, Min: 2, Max: 2}, "a duration like 2s from 2s to 2s"},
		{Param{Kind: KindSize, Min: 512, Max: 256 << 20}, "a size like 512, 4k, 64KiB or 200MiB from 512B to 256MiB"},
		{Param{Kind: KindSize, Min: 100, Max: 60000}, "a size like 512 or 4k from 100B to 60000B"},
		{Param{Kind: KindSize, Min: 1, Max: 2}, "a size like 1B or 2B from 1B to 2B"},
	} {
		if got := tc.p.Accepts(); got != tc.want {
			t.Errorf("accepts %q, want %q", got, tc.want)
		}
		for _, ex := range examplesIn(tc.p.Accepts()) {
			if _, err := tc.p.Number(ex); err != nil {
				t.Errorf("%s: example %q: %v", tc.p.Accepts(), ex, err)
			}
		}
	}
}

// Each kind accepts its values within its bounds, and refuses others with a FieldError naming the
// field, the value and what is allowed, in the text the scenario has always used.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		p         Param
		good, bad []string
		allowed   string
	}{
		{Param{Kind: KindInt, Min: 1, Max: 10, Unit: "VUs"}, []string{"1", "10"}, []string{"0", "11", "1.5", "x"}, "a whole number from 1 to 10 (VUs)"},
		{Param{Kind: KindFloat, Min: 0, Max: math.Inf(1), Unit: "MiB/s"}, []string{"0", "1e9"}, []string{"-1", "Inf", "NaN"}, "a number of at least 0 (MiB/s)"},
		{Param{Kind: KindSize, Min: 0, Max: 64 << 30}, []string{"0", "64GiB"}, []string{"65GiB", "-1"}, "a size like 4k, 10KiB, 200MiB or 1GiB from 0B to 64GiB"},
		{Param{Kind: KindDuration, Min: 1e-9, Max: math.Inf(1)}, []string{"1ns", "100h"}, []string{"0s", "-1s", "soon"}, "a duration like 500ms, 10s or 2m of at least 1ns"},
		{Param{Kind: KindBool}, []string{"on", "false"}, []string{"maybe"}, "true or false"},
		{Param{Kind: KindBool, Default: "off"}, []string{"on", "false", "yes"}, []string{"maybe"}, "on or off"},
		{Param{Kind: KindEnum, Allowed: []string{"a", "b"}}, []string{"a", "b"}, []string{"A", ""}, "one of a, b"},
		{Param{Kind: KindString}, []string{"", "anything"}, nil, "text"},
	} {
		for _, v := range tc.good {
			if err := tc.p.Check("f", v); err != nil {
				t.Errorf("%s %q: %v", tc.p.Kind, v, err)
			}
		}
		for _, v := range tc.bad {
			err := tc.p.Check("options.f", v)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "options.f" || fe.Value != v || fe.Allowed != tc.allowed {
				t.Errorf("%s %q: %#v, want allowed %q", tc.p.Kind, v, err, tc.allowed)
			}
		}
		if got := tc.p.Accepts(); got != tc.allowed {
			t.Errorf("%s: accepts %q, want %q", tc.p.Kind, got, tc.allowed)
		}
	}
	fe := &FieldError{Scenario: "s", Field: "backends[1].options.file_cache", Value: "maybe", Allowed: "true or false"}
	if got, want := fe.Error(), `scenario "s": backends[1].options.file_cache: "maybe" is not allowed: want true or false`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// examplesIn reads the examples out of what Accepts wrote: "a size like 4k, 10KiB or 1GiB from ...".
func examplesIn(accepts string) []string {
	_, list, ok := strings.Cut(accepts, " like ")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, " from ")
	list, _, _ = strings.Cut(list, " of at least ")
	return strings.Split(strings.ReplaceAll(list, " or ", ", "), ", ")
}
