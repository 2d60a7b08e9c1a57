package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

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
	// A parameter the older file's version did not have (the runner's cpus, say) is no difference.
	b.Defaults["cpus"] = "0"
	out.Reset()
	WriteComparison(&out, "a.json", "b.json", a, b)
	if strings.Contains(out.String(), "warning") {
		t.Errorf("warning for a parameter one version lacks:\n%s", out.String())
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
