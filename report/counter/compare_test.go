package counter

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
)

func TestCompareWithItselfReportsNoChange(t *testing.T) {
	r, err := report.Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	rows, missing := report.Compare(r, r)
	if len(rows) == 0 || len(missing) != 0 {
		t.Fatalf("%d rows, missing %v", len(rows), missing)
	}
	for _, row := range rows {
		if row.Mark != "same" || row.Ratio != 1 || strings.Contains(row.Verdict, "beyond") {
			t.Errorf("self comparison: %+v", row)
		}
	}
}

func TestCompareMarksAndVerdicts(t *testing.T) {
	base, slower := scaled(1, 0.1), scaled(2, 0.1)
	rows, _ := report.Compare(base, slower)
	for _, row := range rows {
		if row.Mark != "worse" || !strings.Contains(row.Verdict, "worse beyond") {
			t.Errorf("twice as slow: %+v", row)
		}
		if row.Metric == "rate" && (row.Ratio < 0.49 || row.Ratio > 0.51) {
			t.Errorf("rate ratio %v", row.Ratio)
		}
	}
	rows, _ = report.Compare(slower, base)
	for _, row := range rows {
		if row.Mark != "better" || !strings.Contains(row.Verdict, "better beyond") {
			t.Errorf("twice as fast: %+v", row)
		}
	}
	// A 5% change inside a wide spread of runs gets a mark but no verdict.
	noisy, noisier := scaled(1, 4), scaled(1.05, 4)
	rows, _ = report.Compare(noisy, noisier)
	for _, row := range rows {
		if row.Verdict != "within the runs' spread" {
			t.Errorf("change inside the spread: %+v", row)
		}
	}
	one := &results.Results{Schema: results.Schema, Scenario: counterSpec("x", "y"), Cells: []results.Cell{cell("x", 4, 1, 10, 9, 1, 1), cell("y", 2, 1, 1, 1, 1, 1)}}
	rows, missing := report.Compare(one, scaled(2, 0))
	if len(missing) != 1 || !strings.Contains(missing[0], "y at vus=2 only in A") {
		t.Errorf("missing %v", missing)
	}
	for _, row := range rows {
		if !strings.HasPrefix(row.Verdict, "no verdict") {
			t.Errorf("one run on a side: %+v", row)
		}
	}
}

// The Go counter and a real app under the same HTTP load are compared cell by cell, with the
// seed's slopes beside both; workloads that measure different things are not.
func TestCompareSetsAnAppBesideTheCounter(t *testing.T) {
	a, b := scaled(1, 0), scaled(1, 0)
	b.Scenario.Workload.Type = "http"
	a.Fits = []results.Fit{{Backend: "x", AvgMsPerVU: 2, Published: 8}, {Backend: "y", AvgMsPerVU: 1, Published: 4}}
	b.Fits = []results.Fit{{Backend: "x", AvgMsPerVU: 6, Published: 8}, {Backend: "y", AvgMsPerVU: 4, Published: 4}}
	var out bytes.Buffer
	report.WriteComparison(&out, "go.json", "app.json", a, b)
	text := out.String()
	for _, want := range []string{`workload "counter" against "http"`, "avg_ms", "x / y  2.00x  1.50x  2.00x"} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "nothing to compare") {
		t.Errorf("refused:\n%s", text)
	}
	b.Fits[1].AvgMsPerVU = 0 // a slope of 0 gives no ratio
	out.Reset()
	report.WriteComparison(&out, "go.json", "app.json", a, b)
	if strings.Contains(out.String(), "Inf") || strings.Contains(out.String(), "NaN") || !strings.Contains(out.String(), "x / y  2.00x     -  2.00x") {
		t.Errorf("a zero slope:\n%s", out.String())
	}
	b.Scenario.Workload.Type = "fio"
	out.Reset()
	report.WriteComparison(&out, "go.json", "fio.json", a, b)
	if !strings.Contains(out.String(), "nothing to compare") {
		t.Errorf("counter against fio compared:\n%s", out.String())
	}
}
