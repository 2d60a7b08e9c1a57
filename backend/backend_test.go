package backend_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
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

// The runner finds a backend's optional capabilities by type assertion, so a method whose
// signature drifts drops its capability without a word. Each backend therefore asserts, at compile
// time, every optional interface whose methods its Backend has by name: this reads the sources
// of backend/NAME and the interfaces of backend.go, and asks for the missing assertions.
func TestEveryOptionalInterfaceIsAsserted(t *testing.T) {
	fset := token.NewFileSet()
	parse := func(dir string) []*ast.File {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var files []*ast.File
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		return files
	}
	optional := map[string][]string{} // interface -> its methods
	for _, f := range parse(".") {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			// Backend every backend is; Counted is a bucket's accounting, no capability.
			if !ok || ts.Name.Name == "Backend" || ts.Name.Name == "Counted" {
				return true
			}
			if it, ok := ts.Type.(*ast.InterfaceType); ok {
				for _, m := range it.Methods.List {
					if len(m.Names) == 0 {
						t.Errorf("interface %s embeds another: this test reads methods named in it only", ts.Name.Name)
					}
					for _, name := range m.Names {
						optional[ts.Name.Name] = append(optional[ts.Name.Name], name.Name)
					}
				}
			}
			return true
		})
	}
	if len(optional) < 10 {
		t.Fatalf("found %d optional interfaces in backend.go and its neighbours: %v", len(optional), optional)
	}
	for _, name := range backend.Names() {
		methods, asserted := map[string]bool{}, map[string]bool{}
		for _, f := range parse(name) {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv != nil && len(d.Recv.List) == 1 {
						recv := d.Recv.List[0].Type
						if star, ok := recv.(*ast.StarExpr); ok {
							recv = star.X
						}
						if isIdent(recv, "Backend") {
							methods[d.Name.Name] = true
						}
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						vs, ok := spec.(*ast.ValueSpec)
						if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "_" || len(vs.Values) != 1 {
							continue
						}
						sel, ok := vs.Type.(*ast.SelectorExpr)
						if !ok || !isIdent(sel.X, "backend") || !isNilBackend(vs.Values[0]) {
							continue
						}
						asserted[sel.Sel.Name] = true
					}
				}
			}
		}
		if len(methods) == 0 {
			t.Errorf("backend %s: no methods of *Backend in backend/%s", name, name)
		}
		for iface, ms := range optional {
			has := true
			for _, m := range ms {
				has = has && methods[m]
			}
			if has && !asserted[iface] {
				t.Errorf("backend %s implements backend.%s: assert it (var _ backend.%s = (*Backend)(nil))", name, iface, iface)
			}
		}
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isNilBackend says whether e is (*Backend)(nil).
func isNilBackend(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 || !isIdent(call.Args[0], "nil") {
		return false
	}
	paren, ok := call.Fun.(*ast.ParenExpr)
	if !ok {
		return false
	}
	star, ok := paren.X.(*ast.StarExpr)
	return ok && isIdent(star.X, "Backend")
}
