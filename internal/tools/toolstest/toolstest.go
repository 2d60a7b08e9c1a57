// Package toolstest points a test at this checkout's installed programs and examples: a test
// binary runs from a temporary directory, beside no checkout, and persistlab never looks in the
// working directory. A test package that runs gcsfuse, Litestream, k6 or an example imports it
// for its effect; what is set already (by the Makefile, or by hand) is kept.
package toolstest

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"persistlab/internal/tools"
)

// ExamplesVariable is where tools.FindDir looks for the examples first.
const ExamplesVariable = "PERSISTLAB_EXAMPLES"

func init() {
	root := moduleRoot()
	if root == "" {
		return // outside a checkout: tools.Find says what to set
	}
	if os.Getenv(tools.ToolsVariable) == "" {
		os.Setenv(tools.ToolsVariable, filepath.Join(root, ".tools", "bin")+string(filepath.ListSeparator)+filepath.Join(root, ".venv", "bin"))
	}
	if os.Getenv(ExamplesVariable) == "" {
		os.Setenv(ExamplesVariable, filepath.Join(root, "examples"))
	}
}

// moduleRoot is the persistlab checkout go test runs the package in (it runs a test in its
// package's directory), found as go finds the module: the nearest go.mod above, here persistlab's.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if isPersistlabModule(filepath.Join(dir, "go.mod")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isPersistlabModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f) // a line over the scanner's limit ends the scan: not ours
	for sc.Scan() {
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(name) == "persistlab"
		}
	}
	return false
}
