package benchgoal

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Rows reported with the gathering file set come back from Load as they were, in order, with
// their verdicts; a line that is not a row is refused by its line number.
func TestRowsGatheredComeBackInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "goals.tsv")
	t.Setenv(FileEnv, path)
	want := []Row{
		{Name: "driver hello: persistlab/wrk req/s", Got: 0.983, Op: ">=", Goal: 1, Basis: "3 runs\tof 5 s"},
		{Name: "driver hello: persistlab/wrk CPU per request", Got: 0.985, Op: "<=", Goal: 1, Basis: "medians"},
	}
	for _, r := range want {
		if err := Report(io.Discard, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows back, %d reported", len(got), len(want))
	}
	want[0].Basis = "3 runs of 5 s" // a tab would split the row
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, reported %+v", i, got[i], want[i])
		}
	}
	if got[0].Met() || !got[1].Met() || got[0].Verdict() != "missed" {
		t.Errorf("verdicts %v %v", got[0].Verdict(), got[1].Verdict())
	}
	if err := os.WriteFile(path, []byte("a\t1\t>=\t2\tb\nnot a row\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad line: error %v, want one naming line 2", err)
	}
}
