// Package benchgoal records a benchmark's figure against its goal: each benchmark prints its
// rows as it goes, and `make bench` gathers every row into one table at the end (bench/goals).
package benchgoal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"persistlab/lib/readfile"
)

// FileEnv names the file `make bench` gathers the rows in; unset, rows are only printed.
const FileEnv = "PERSISTLAB_BENCH_GOALS"

// Row is one figure against its goal.
type Row struct {
	Name  string  // what is measured, e.g. "driver hello: persistlab/wrk req/s"
	Got   float64 // the figure
	Op    string  // ">=" or "<="
	Goal  float64
	Basis string // how it was measured, or what it is compared with
}

// Met says whether the figure meets its goal.
func (r Row) Met() bool {
	if r.Op == "<=" {
		return r.Got <= r.Goal
	}
	return r.Got >= r.Goal
}

// Verdict is "met" or "missed".
func (r Row) Verdict() string {
	if r.Met() {
		return "met"
	}
	return "missed"
}

// Report prints r to w and appends it to the gathering file when there is one.
func Report(w io.Writer, r Row) error {
	if _, err := fmt.Fprintf(w, "goal: %s %.3f (%s %.3f): %s; %s\n", r.Name, r.Got, r.Op, r.Goal, r.Verdict(), r.Basis); err != nil {
		return err
	}
	path := os.Getenv(FileEnv)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	clean := func(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }
	_, err = fmt.Fprintf(f, "%s\t%g\t%s\t%g\t%s\n", clean(r.Name), r.Got, r.Op, r.Goal, clean(r.Basis))
	return errors.Join(err, f.Close())
}

// Load reads the rows a bench run gathered, in order.
func Load(path string) ([]Row, error) {
	data, err := readfile.Regular(path, 1<<20)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			return nil, fmt.Errorf("%s line %d: %d fields, want 5", path, i+1, len(f))
		}
		got, err1 := strconv.ParseFloat(f[1], 64)
		goal, err2 := strconv.ParseFloat(f[3], 64)
		if err := errors.Join(err1, err2); err != nil || (f[2] != ">=" && f[2] != "<=") {
			return nil, fmt.Errorf("%s line %d: %q is not a goal row", path, i+1, line)
		}
		rows = append(rows, Row{Name: f[0], Got: got, Op: f[2], Goal: goal, Basis: f[4]})
	}
	return rows, nil
}
