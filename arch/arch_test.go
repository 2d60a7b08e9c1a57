package arch

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "persistlab/"

// imports are a persistlab package's own imports of persistlab packages (tests left out).
func imports(t *testing.T, path string) []string {
	t.Helper()
	pkg, err := build.ImportDir(filepath.Join("..", strings.TrimPrefix(path, module)), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, module) {
			out = append(out, imp)
		}
	}
	return out
}

// reaches calls found for every persistlab package that from reaches, directly or through others, with
// the chain of imports that leads there, and says how many packages it walked.
func reaches(t *testing.T, from string, found func(path string, via []string)) int {
	seen := map[string]bool{}
	var walk func(path string, via []string)
	walk = func(path string, via []string) {
		if seen[path] {
			return
		}
		seen[path] = true
		found(path, via)
		for _, imp := range imports(t, path) {
			walk(imp, append(slices.Clip(via), imp))
		}
	}
	walk(from, []string{from})
	return len(seen)
}

func under(path, dir string) bool {
	return path == module+dir || strings.HasPrefix(path, module+dir+"/")
}

// The lab's vocabulary imports nothing of persistlab; the arrows run from the backends down to
// the lab, so no part of the lab reaches package backend or a backend.
func TestTheLabReachesNoBackend(t *testing.T) {
	if imp := imports(t, module+"lab"); len(imp) > 0 {
		t.Errorf("package lab imports %v: it is the leaf every other package may import", imp)
	}
	for _, part := range []string{"lab/bucket", "lab/volume", "lab/instance"} {
		n := reaches(t, module+part, func(path string, via []string) {
			if under(path, "backend") {
				t.Errorf("%s reaches %s: %s", part, path, strings.Join(via, " -> "))
			}
		})
		if n < 3 {
			t.Errorf("%s: only %d packages walked: the walk is not reading the imports", part, n)
		}
	}
}

// The plan's packages and the results file reach nothing that touches this machine (internal/),
// and no backend: a scenario is checked and a results file read with neither.
func TestThePlanReachesNothingOfTheMachine(t *testing.T) {
	for _, pkg := range []string{"scenario", "param", "profile", "cost", "provenance"} {
		n := reaches(t, module+pkg, func(path string, via []string) {
			if under(path, "internal") || under(path, "backend") {
				t.Errorf("%s reaches %s: %s", pkg, path, strings.Join(via, " -> "))
			}
		})
		if pkg == "scenario" && n < 4 {
			t.Errorf("scenario: only %d packages walked: the walk is not reading the imports", n)
		}
	}
	reaches(t, module+"results", func(path string, via []string) {
		if under(path, "backend") || under(path, "report") {
			t.Errorf("results reaches %s: %s", path, strings.Join(via, " -> "))
		}
	})
}

// The runner runs any workload on any backend through their contracts alone: it links no
// workload, no backend, no report and no part of the lab (their packages register themselves with
// the command).
func TestTheRunnerIsBlindToWorkloadsBackendsAndTheReport(t *testing.T) {
	n := reaches(t, module+"runner", func(path string, via []string) {
		plugin := strings.HasPrefix(path, module+"workload/") || strings.HasPrefix(path, module+"backend/") ||
			strings.HasPrefix(path, module+"lab/")
		if plugin || under(path, "report") {
			t.Errorf("runner reaches %s: %s", path, strings.Join(via, " -> "))
		}
	})
	if n < 10 {
		t.Errorf("runner: only %d packages walked: the walk is not reading the imports", n)
	}
}
