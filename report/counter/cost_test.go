package counter

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// bucketCell is a counter cell of one run that answered ok requests in seconds and counted
// classA and classB bucket operations.
func bucketCell(backend, vus string, seconds, ok, classA, classB float64) results.Cell {
	return results.Cell{Cell: scenario.Cell{Backend: backend, Params: map[string]string{"vus": vus}, Repeat: 1}, ElapsedS: seconds,
		Metrics:      map[string]float64{"ok": ok, "count": ok},
		BackendStats: map[string]float64{"bucket_class_a": classA, "bucket_class_b": classB}}
}

// A 5 s gcsfuse cell that caught no checkpoint, and one that caught one (3 uploads), are neither
// priced at $0 nor extrapolated to a month: marked, and the backend priced pooled, here too thin
// even so. Litestream's thin cell is marked too, and its backend priced from both its cells summed.
func TestThinCellsAreMarkedAndTheBackendPricedPooled(t *testing.T) {
	spec := counterSpec("gcsfuse", "litestream")
	spec.Thresholds = thresholds(t, "usd_per_month < 1000")
	r := &results.Results{Schema: results.Schema, Scenario: spec, Cells: []results.Cell{
		bucketCell("gcsfuse", "2", 5, 500, 0, 0),
		bucketCell("gcsfuse", "4", 5, 600, 3, 0),
		bucketCell("litestream", "2", 30, 3000, 30, 0),
		bucketCell("litestream", "4", 5, 400, 4, 0),
	}}
	report.Summarize(r)
	if len(r.Aggregates) != 4 {
		t.Fatalf("aggregates %+v", r.Aggregates)
	}
	for i, thin := range []bool{true, true, false, true} {
		u := r.Aggregates[i].Bucket
		if u == nil || u.TooFewToPrice != thin || (len(u.Costs) == 0) != thin {
			t.Errorf("%s %s: %+v, want too few to price %v", r.Aggregates[i].Backend, r.Aggregates[i].Point, u, thin)
		}
	}
	if u := r.Aggregates[1].Bucket; u.ClassAOps != 3 || u.ClassAPerS != 0.6 {
		t.Errorf("gcsfuse vus=4 counts %+v", u)
	}
	// A thin row carries no cost for a threshold to judge: not judged, never taken as $0.
	if j := report.Judge(r)[0]; j.Held != 1 || len(j.Unjudged) != 3 {
		t.Errorf("usd_per_month judged %+v", j)
	}

	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	flat := strings.Join(strings.Fields(text), " ")
	rows := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && (f[0] == "gcsfuse" || f[0] == "litestream") && strings.HasPrefix(f[1], "vus=") {
			if _, seen := rows[f[0]+" "+f[1]]; !seen && len(f) >= 12 {
				rows[f[0]+" "+f[1]] = f
			}
		}
	}
	// backend point classA classB KiBup KiBdown 429s $GCS $S3 A/s $month lag [mark]
	for _, row := range []string{"gcsfuse vus=2", "gcsfuse vus=4", "litestream vus=4"} {
		f := rows[row]
		if len(f) < 12 || f[7] != "*" || f[8] != "*" || f[10] != "*" || f[12] != "*" {
			t.Errorf("%s is not marked: %q\n%s", row, f, text)
		}
	}
	if f := rows["litestream vus=2"]; len(f) != 12 || f[10] != "12.96" { // 1/s for 30 days at $0.005 per 1,000
		t.Errorf("litestream vus=2 row %q", f)
	}
	// The one checkpoint's 0.6 uploads/s would have been $7.78 a month; no such figure appears.
	for _, want := range []string{
		"* 0 class A, 0 class B in the run",
		"* 3 class A, 0 class B in the run",
		"* not priced: gcsfuse vus=2, gcsfuse vus=4 and litestream vus=4 count too few bucket operations in a run to price",
		"fewer than 10",
		"gcsfuse: 3 class A, 0 class B in 2 run(s) of 2 row(s), 10.0 s: too few to price even pooled",
		// 34 uploads over 3,400 requests and 35 s: 10 per 1,000, $0.05 per million, 0.97/s, $12.59 a month.
		"litestream: 34 class A, 0 class B in 2 run(s) of 2 row(s), 35.0 s: 10.00 class A and 0.00 class B per 1,000 app requests, $0.0500/1M req GCS, $0.0500/1M req S3; 0.97 class A/s, $12.59/month GCS",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "7.78") || strings.Contains(text, "0.0000") {
		t.Errorf("a thin cell was priced:\n%s", text)
	}
}
