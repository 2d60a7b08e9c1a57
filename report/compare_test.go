package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"persistlab/results"
)

func TestCompareWithItselfReportsNoChange(t *testing.T) {
	r, err := Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	rows, missing := Compare(r, r)
	if len(rows) == 0 || len(missing) != 0 {
		t.Fatalf("%d rows, missing %v", len(rows), missing)
	}
	for _, row := range rows {
		if row.Mark != "same" || row.Ratio != 1 || strings.Contains(row.Verdict, "beyond") {
			t.Errorf("self comparison: %+v", row)
		}
	}
}

// two runs per cell; b's latencies scaled by f and rate by 1/f
func scaled(f float64, spread float64) *results.Results {
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("x", "y")}
	for rep := 1; rep <= 2; rep++ {
		c := cell("x", 4, rep, 10*f+spread*float64(rep), 9*f+spread*float64(rep), 100, 100)
		c.Metrics["p95_ms"], c.Metrics["p99_ms"], c.Metrics["rate"] = 20*f+spread*float64(rep), 30*f+spread*float64(rep), 400/f+10*spread*float64(rep)
		r.Cells = append(r.Cells, c)
	}
	return r
}

func TestCompareMarksAndVerdicts(t *testing.T) {
	base, slower := scaled(1, 0.1), scaled(2, 0.1)
	rows, _ := Compare(base, slower)
	for _, row := range rows {
		if row.Mark != "worse" || !strings.Contains(row.Verdict, "worse beyond") {
			t.Errorf("twice as slow: %+v", row)
		}
		if row.Metric == "rate" && (row.Ratio < 0.49 || row.Ratio > 0.51) {
			t.Errorf("rate ratio %v", row.Ratio)
		}
	}
	rows, _ = Compare(slower, base)
	for _, row := range rows {
		if row.Mark != "better" || !strings.Contains(row.Verdict, "better beyond") {
			t.Errorf("twice as fast: %+v", row)
		}
	}
	// A 5% change inside a wide spread of runs gets a mark but no verdict.
	noisy, noisier := scaled(1, 4), scaled(1.05, 4)
	rows, _ = Compare(noisy, noisier)
	for _, row := range rows {
		if row.Verdict != "within the runs' spread" {
			t.Errorf("change inside the spread: %+v", row)
		}
	}
	one := &results.Results{Schema: results.Schema, Scenario: counterSpec("x", "y"), Cells: []results.Cell{cell("x", 4, 1, 10, 9, 1, 1), cell("y", 2, 1, 1, 1, 1, 1)}}
	rows, missing := Compare(one, scaled(2, 0))
	if len(missing) != 1 || !strings.Contains(missing[0], "y at vus=2 only in A") {
		t.Errorf("missing %v", missing)
	}
	for _, row := range rows {
		if !strings.HasPrefix(row.Verdict, "no verdict") {
			t.Errorf("one run on a side: %+v", row)
		}
	}
}

func TestCSVHasEveryCell(t *testing.T) {
	r, err := Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != len(r.Cells)+1 {
		t.Fatalf("%d rows for %d cells", len(records), len(r.Cells))
	}
	col := map[string]int{}
	for i, h := range records[0] {
		col[h] = i
	}
	for _, h := range []string{"backend", "vus", "repeat", "med_ms", "avg_ms", "p95_ms", "rate", "errors", "lost_updates", "bucket_class_a"} {
		if _, ok := col[h]; !ok {
			t.Errorf("no column %s", h)
		}
	}
	for i, c := range r.Cells {
		row := records[i+1]
		if row[col["backend"]] != c.Backend || row[col["ok"]] == "" || row[col["avg_ms"]] == "" {
			t.Errorf("row %d %v for cell %+v", i, row, c.Cell)
		}
	}
}

func TestCompareWarnsAboutDifferentExperiments(t *testing.T) {
	a, b := scaled(1, 0), scaled(1, 0)
	b.Scenario = counterSpec("x", "y")
	b.Scenario.Workload.Params = map[string]string{"mode": "open", "rate": "50"}
	var out bytes.Buffer
	WriteComparison(&out, "a.json", "b.json", a, b)
	if !strings.Contains(out.String(), "warning: A and B are different experiments") || !strings.Contains(out.String(), `mode: "" against "open"`) {
		t.Errorf("no warning:\n%s", out.String())
	}
	out.Reset()
	WriteComparison(&out, "a.json", "a.json", a, a)
	if strings.Contains(out.String(), "warning") {
		t.Errorf("warning comparing a run with itself:\n%s", out.String())
	}
	// A default left out on one side and written out on the other is the same experiment; a
	// swept parameter is compared point by point, not as a difference of set-ups.
	a.Defaults, b.Defaults = map[string]string{"mode": "closed", "rate": "0", "vus": "1"}, map[string]string{"mode": "closed", "rate": "0", "vus": "1"}
	b.Scenario.Workload.Params = map[string]string{"mode": "closed", "vus": "9"}
	out.Reset()
	WriteComparison(&out, "a.json", "b.json", a, b)
	if strings.Contains(out.String(), "warning") {
		t.Errorf("warning for a default written out:\n%s", out.String())
	}
	b.Scenario.Workload.Params["rate"] = "50"
	out.Reset()
	WriteComparison(&out, "a.json", "b.json", a, b)
	if !strings.Contains(out.String(), `rate: "0" against "50"`) {
		t.Errorf("no warning for a changed rate:\n%s", out.String())
	}
}

func TestCSVQuotesFormulas(t *testing.T) {
	r := scaled(1, 0)
	r.Cells[0].Failure = "=HYPERLINK(\"http://x\")"
	var buf bytes.Buffer
	if err := WriteCSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "'=HYPERLINK") {
		t.Errorf("formula not neutralised:\n%s", buf.String())
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
	WriteComparison(&out, "go.json", "app.json", a, b)
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
	WriteComparison(&out, "go.json", "app.json", a, b)
	if strings.Contains(out.String(), "Inf") || strings.Contains(out.String(), "NaN") || !strings.Contains(out.String(), "x / y  2.00x     -  2.00x") {
		t.Errorf("a zero slope:\n%s", out.String())
	}
	b.Scenario.Workload.Type = "fio"
	out.Reset()
	WriteComparison(&out, "go.json", "fio.json", a, b)
	if !strings.Contains(out.String(), "nothing to compare") {
		t.Errorf("counter against fio compared:\n%s", out.String())
	}
}
