package backend_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"persistlab/backend"
	_ "persistlab/backend/all"
	"persistlab/param"
	"persistlab/scenario"
)

// Every backend describes itself and every option it takes: a kind, help, allowed values for an
// enum, bounds that make sense, and a default its own declaration accepts.
func TestEveryOptionIsDeclared(t *testing.T) {
	kinds := []param.Kind{param.KindInt, param.KindFloat, param.KindSize, param.KindDuration, param.KindBool, param.KindEnum, param.KindString}
	for _, name := range backend.Names() {
		info, err := backend.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if info.Description == "" || info.New == nil || len(info.Options) == 0 {
			t.Errorf("%s: no description, factory or options: %+v", name, info)
		}
		seen := map[string]bool{}
		for _, p := range info.Options {
			what := name + " option " + p.Name
			if p.Name == "" || seen[p.Name] {
				t.Errorf("%s: unnamed or declared twice", what)
			}
			seen[p.Name] = true
			if !slices.Contains(kinds, p.Kind) || p.Help == "" {
				t.Errorf("%s: kind %q, help %q", what, p.Kind, p.Help)
			}
			if (p.Kind == param.KindEnum) != (len(p.Allowed) > 0) {
				t.Errorf("%s: %s with allowed values %v", what, p.Kind, p.Allowed)
			}
			if p.Bounded() && (p.Min > p.Max || math.IsNaN(p.Min) || math.IsInf(p.Min, 0) || p.Kind == param.KindEnum || p.Kind == param.KindString || p.Kind == param.KindBool) {
				t.Errorf("%s: bounds %v to %v on a %s", what, p.Min, p.Max, p.Kind)
			}
			if p.Default != "" {
				if err := p.Check("options."+p.Name, p.Default); err != nil {
					t.Errorf("%s: its default is refused: %v", what, err)
				}
			}
		}
	}
}

// An undeclared option, and a value its declaration refuses, are refused before the backend's own
// New runs (which would look for programs and rights), as a FieldError naming options.NAME.
func TestOptionsAreCheckedBeforeTheBackend(t *testing.T) {
	bad := map[param.Kind]string{param.KindInt: "1.5", param.KindFloat: "NaN", param.KindSize: "4x", param.KindDuration: "soon", param.KindBool: "maybe", param.KindEnum: "no-such-value"}
	for _, name := range backend.Names() {
		info, _ := backend.Lookup(name)
		refused := func(opts map[string]string, field, value string) {
			t.Helper()
			_, err := backend.New(name, backend.Env{WorkDir: t.TempDir(), Options: opts})
			var fe *param.FieldError
			if !errors.As(err, &fe) || fe.Field != field || fe.Value != value || fe.Allowed == "" {
				t.Errorf("%s %v: %v, want a FieldError for %s", name, opts, err, field)
			}
		}
		refused(map[string]string{"no_such_option": "1"}, "options.no_such_option", "1")
		for _, p := range info.Options {
			if v, ok := bad[p.Kind]; ok {
				refused(map[string]string{p.Name: v}, "options."+p.Name, v)
			}
		}
	}
	if _, err := backend.New("nfs", backend.Env{}); err == nil || !strings.Contains(err.Error(), "local") {
		t.Errorf("an unknown backend: %v", err)
	}
}

// Every built-in scenario's backend options pass their declarations.
func TestBuiltinScenariosOptionsAreDeclared(t *testing.T) {
	for _, n := range scenario.Builtins() {
		s, err := scenario.Load(n)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range s.Backends {
			info, err := backend.Lookup(b.Name)
			if err != nil {
				t.Errorf("%s backends[%d]: %v", n, i, err)
				continue
			}
			if err := info.CheckOptions(b.Options); err != nil {
				t.Errorf("%s backends[%d]: %v", n, i, err)
			}
		}
	}
}
