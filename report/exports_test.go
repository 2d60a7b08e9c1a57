package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"persistlab/results"
	"persistlab/scenario"
)

// exportFixture is the recorded quick run with the units its workload declares and two
// thresholds, one of which some rows cross.
func exportFixture(t *testing.T) *results.Results {
	t.Helper()
	r, err := Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	r.Units = map[string]string{}
	for _, c := range r.Cells {
		for m := range c.Metrics {
			switch {
			case strings.HasSuffix(m, "_ms"):
				r.Units[m] = "ms"
			case strings.HasSuffix(m, "_util"):
				r.Units[m] = "share"
			case m == "rate":
				r.Units[m] = "requests/s"
			case m == "app_cpu_s":
				r.Units[m] = "s"
			default:
				r.Units[m] = "count"
			}
		}
	}
	r.Scenario.Thresholds = thresholds(t, "p95_ms < 100ms", "error_rate < 1%")
	return r
}

// crashFixture is a crash run of two backends, three crashes each.
func crashFixture() *results.Results {
	spec := counterSpec("gcsfuse", "litestream")
	spec.Crash = &scenario.Crash{Count: 3}
	r := &results.Results{Schema: results.Schema, Scenario: spec, Finished: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, b := range []string{"gcsfuse", "litestream"} {
		for i := 1; i <= 3; i++ {
			lost := int64(0)
			if b == "litestream" {
				lost = int64(i * 10)
			}
			r.Crashes = append(r.Crashes, results.CrashRun{Cell: scenario.Cell{Index: len(r.Crashes), Backend: b, Params: map[string]string{"vus": "4"}, Repeat: i},
				MaxAcked: 100, Recovered: 100 - lost, Lost: lost, LostWindowMs: 900, LostReachMs: 950, RecoveryMs: 300, LoadS: 2, OKBeforeKill: 100, Integrity: "ok",
				BackendStats: map[string]float64{"bucket_class_a": 300, "bucket_class_b": 1200}})
		}
	}
	Summarize(r)
	return r
}

// markdownTables splits a Markdown document into its tables: each a list of rows of cells, the
// cells' escapes undone.
func markdownTables(t *testing.T, doc string) [][][]string {
	t.Helper()
	var tables [][][]string
	var cur [][]string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "|") {
			if cur != nil {
				tables, cur = append(tables, cur), nil
			}
			continue
		}
		if !strings.HasSuffix(line, "|") {
			t.Errorf("table row does not end with |: %q", line)
		}
		var cells []string
		var cell strings.Builder
		for i := 1; i < len(line); i++ {
			switch c := line[i]; {
			case c == '\\' && i+1 < len(line):
				i++
				cell.WriteByte(line[i])
			case c == '|':
				cells = append(cells, strings.TrimSpace(cell.String()))
				cell.Reset()
			default:
				cell.WriteByte(c)
			}
		}
		cur = append(cur, cells)
	}
	if cur != nil {
		tables = append(tables, cur)
	}
	return tables
}

// Markdown sets every table of the text report as a GitHub table: each row with every column,
// a delimiter row under the header, and the same figures as the text's line for that row.
func TestMarkdownTablesMatchTheTextTables(t *testing.T) {
	for name, r := range map[string]*results.Results{"recorded": exportFixture(t), "crash": crashFixture(), "repeats": scaledWithBucket()} {
		var text, md bytes.Buffer
		WriteTables(&text, r)
		if err := WriteMarkdown(&md, r); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(md.String(), "## "+r.Scenario.Name) {
			t.Errorf("%s: markdown begins %q", name, firstLine(md.String()))
		}
		tables := markdownTables(t, md.String())
		textTables := strings.Count(text.String(), "\n\n") // at least one paragraph per table
		if len(tables) == 0 || len(tables) > textTables {
			t.Errorf("%s: %d markdown tables", name, len(tables))
		}
		textLines := map[string]bool{}
		for _, l := range strings.Split(text.String(), "\n") {
			textLines[strings.Join(strings.Fields(l), " ")] = true
		}
		for _, tab := range tables {
			if len(tab) < 3 {
				t.Errorf("%s: a table without a row: %q", name, tab)
				continue
			}
			for i, row := range tab {
				if len(row) != len(tab[0]) {
					t.Errorf("%s: row %d has %d cells, the header %d: %q", name, i, len(row), len(tab[0]), row)
				}
				if i == 1 {
					for _, c := range row {
						if c != "---" && c != "---:" {
							t.Errorf("%s: delimiter row %q", name, row)
						}
					}
					continue
				}
				joined := strings.Join(strings.Fields(strings.Join(row, " ")), " ")
				if tab[0][len(tab[0])-1] == "note" && i == 0 {
					joined = strings.TrimSuffix(joined, " note")
				}
				if !textLines[joined] {
					t.Errorf("%s: markdown row %q is no line of the text report", name, joined)
				}
			}
		}
	}
}

// What Markdown would read as markup in a name from a file reads as itself.
func TestMarkdownEscapesMarkup(t *testing.T) {
	for in, want := range map[string]string{
		"a|b":             `a\|b`,
		"*bold* _em_":     `\*bold\* \_em\_`,
		"p95_ms":          "p95_ms",
		"# not a heading": `\# not a heading`,
		"1. not a list":   `1\. not a list`,
		"- not an item":   `\- not an item`,
		"<script>":        `\<script\>`,
	} {
		if got := escapeMarkdown(in); got != want {
			t.Errorf("escapeMarkdown(%q) = %q, want %q", in, got, want)
		}
	}
	r := crashFixture()
	r.Scenario.Name = "x|y"
	var md bytes.Buffer
	WriteMarkdown(&md, r)
	if !strings.HasPrefix(md.String(), `## x\|y`) {
		t.Errorf("title %q", firstLine(md.String()))
	}
}

// scaledWithBucket is a counter run of two runs per cell whose backend wrote a bucket.
func scaledWithBucket() *results.Results {
	r := scaled(1, 2)
	r.Units = map[string]string{"avg_ms": "ms", "p95_ms": "ms", "rate": "requests/s"}
	for i := range r.Cells {
		r.Cells[i].ElapsedS = 10
	}
	Summarize(r)
	for i := range r.Aggregates { // the generic presenter counts no work to price per unit
		r.Aggregates[i].Bucket = &results.BucketUse{Unit: "app request", ClassA: 0.5, ClassB: 2, ClassAPerS: 50, ClassBPerS: 200,
			Costs: []results.Cost{{Prices: "GCS", USDPerUnit: 2.5e-6, USDPerMonth: 648}}}
	}
	return r
}

// The JSON summary decodes into its documented shape: every row with its medians, a spread where
// it has several runs that holds the median, its bucket's cost; thresholds with their verdicts.
func TestSummaryJSONHasTheDocumentedShape(t *testing.T) {
	for name, r := range map[string]*results.Results{"recorded": exportFixture(t), "repeats": scaledWithBucket(), "crash": crashFixture()} {
		var out bytes.Buffer
		if err := WriteSummaryJSON(&out, r); err != nil {
			t.Fatal(err)
		}
		var loose map[string]any
		if err := json.Unmarshal(out.Bytes(), &loose); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range []string{"schema", "answer", "scenario", "status", "machine", "rows"} {
			if _, ok := loose[k]; !ok {
				t.Errorf("%s: no %q in %s", name, k, out.String())
			}
		}
		dec := json.NewDecoder(&out)
		dec.DisallowUnknownFields()
		var s Summary
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Schema != SummarySchema || s.Scenario.Name != r.Scenario.Name || len(s.Rows) != len(r.Aggregates) || len(s.Crashes) != len(r.CrashSummaries) {
			t.Errorf("%s: %+v", name, s)
		}
		if want := AnswerOf(r); len(s.Answer.Findings) == 0 || !slices.Equal(s.Answer.Findings, want.Findings) || !slices.Equal(s.Answer.Caveats, want.Caveats) {
			t.Errorf("%s: answer %+v, want the text's %+v", name, s.Answer, want)
		}
		for _, row := range s.Rows {
			if row.Runs > 1 && len(row.Spread) == 0 || row.Runs == 1 && len(row.Spread) > 0 {
				t.Errorf("%s: %s %s: %d runs, spread %v", name, row.Backend, row.Point, row.Runs, row.Spread)
			}
			for m, rg := range row.Spread {
				if med := row.Median[m]; med < rg.Min || med > rg.Max || rg.Min > rg.Max {
					t.Errorf("%s: %s: median %v outside %v", name, m, med, rg)
				}
			}
			if row.Params == nil || len(row.Median) == 0 {
				t.Errorf("%s: row %+v", name, row)
			}
		}
		if len(s.Thresholds) != len(r.Scenario.Thresholds) {
			t.Errorf("%s: %d thresholds, want %d", name, len(s.Thresholds), len(r.Scenario.Thresholds))
		}
	}
	var out bytes.Buffer
	WriteSummaryJSON(&out, scaledWithBucket())
	var s Summary
	json.Unmarshal(out.Bytes(), &s)
	if b := s.Rows[0].Bucket; b == nil || len(b.Costs) == 0 || b.NotPriced != "" || b.ClassAPerS != 50 {
		t.Errorf("bucket %+v", b)
	}
	if s.Units["p95_ms"] != "ms" {
		t.Errorf("units %v", s.Units)
	}
	var recorded bytes.Buffer
	WriteSummaryJSON(&recorded, exportFixture(t))
	json.Unmarshal(recorded.Bytes(), &s)
	if th := s.Thresholds[0]; th.Verdict != "crossed" || len(th.Crossed) == 0 || th.Held+len(th.Crossed) != len(s.Rows) {
		t.Errorf("p95 threshold %+v", th)
	}
}

// Every sample line decodes with the keys PerfKitBenchmarker's have, one per metric per cell, in
// the unit the workload declared.
func TestSamplesAreOneJSONObjectPerMetricPerCell(t *testing.T) {
	for name, r := range map[string]*results.Results{"recorded": exportFixture(t), "crash": crashFixture()} {
		var out bytes.Buffer
		if err := WriteSamples(&out, r); err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, c := range r.Cells {
			if c.Failure == "" {
				want += len(c.Metrics)
			}
		}
		lines := 0
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			lines++
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: line %d: %v", name, lines, err)
			}
			for _, k := range []string{"metric", "value", "unit", "labels", "timestamp"} {
				if _, ok := m[k]; !ok {
					t.Errorf("%s: line %d lacks %q: %s", name, lines, k, sc.Text())
				}
			}
			labels, _ := m["labels"].(map[string]any)
			for _, k := range []string{"scenario", "backend", "repeat", "cell", "vus"} {
				if _, ok := labels[k].(string); !ok {
					t.Errorf("%s: line %d: label %q missing: %s", name, lines, k, sc.Text())
				}
			}
			metric, _ := m["metric"].(string)
			if u := r.Units[metric]; u != "" && m["unit"] != u {
				t.Errorf("%s: %s in %v, declared %s", name, metric, m["unit"], u)
			}
			if ts, _ := m["timestamp"].(float64); ts < 1e9 {
				t.Errorf("%s: timestamp %v", name, m["timestamp"])
			}
		}
		if name == "recorded" && lines != want {
			t.Errorf("%s: %d lines, want %d", name, lines, want)
		}
		if name == "crash" && lines < len(r.Crashes)*4 {
			t.Errorf("crash: %d lines for %d crashes", lines, len(r.Crashes))
		}
	}
}

// The OpenMetrics text parses under the format's rules, and each row's median reads back in the
// family's base unit.
func TestOpenMetricsParses(t *testing.T) {
	for name, r := range map[string]*results.Results{"recorded": exportFixture(t), "repeats": scaledWithBucket(), "crash": crashFixture()} {
		var out bytes.Buffer
		if err := WriteOpenMetrics(&out, r, map[string]string{"p95_ms": `95th "percentile" \ latency`}); err != nil {
			t.Fatal(err)
		}
		fams, err := parseOpenMetrics(out.String())
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out.String())
		}
		if len(r.Aggregates) > 0 {
			p95 := fams["persistlab_p95_seconds"]
			if p95 == nil || p95.unit != "seconds" || !strings.Contains(p95.help, `95th "percentile"`) {
				t.Fatalf("%s: p95 family %+v", name, p95)
			}
			if len(p95.samples) != len(r.Aggregates) {
				t.Errorf("%s: %d p95 samples for %d rows", name, len(p95.samples), len(r.Aggregates))
			}
			for _, a := range r.Aggregates {
				key := `backend="` + a.Backend + `",scenario="` + r.Scenario.Name + `",vus="` + a.Params["vus"] + `"`
				if v, ok := p95.samples[key]; !ok || math.Abs(v-a.Median["p95_ms"]/1000) > 1e-12 {
					t.Errorf("%s: %s: %v, want %v s", name, key, v, a.Median["p95_ms"]/1000)
				}
			}
		}
		if len(r.CrashSummaries) > 0 {
			lost := fams["persistlab_crash_lost_acked"]
			if lost == nil || len(lost.samples) != len(r.CrashSummaries) {
				t.Fatalf("crash: lost family %+v", lost)
			}
			if v := lost.samples[`backend="litestream",scenario="t",vus="4"`]; v != 30 {
				t.Errorf("crash: litestream lost at most %v, want 30", v)
			}
		}
	}
	// a metric named like a counter's sample gets a name no reader takes for one
	if name, _ := omName("count", "count"); name != "persistlab_count_value" {
		t.Errorf("count: %s", name)
	}
	for metric, want := range map[string]string{"read_mib_s": "persistlab_read_bytes_per_second", "read_iops": "persistlab_read_ops_per_second",
		"rate": "persistlab_requests_per_second", "changes_per_s": "persistlab_changes_per_second", "app_cpu_util": "persistlab_app_cpu_util_ratio"} {
		unit := map[string]string{"read_mib_s": "MiB/s", "read_iops": "IOPS", "rate": "requests/s", "changes_per_s": "changes/s", "app_cpu_util": "share"}[metric]
		if got, _ := omName(metric, unit); got != want {
			t.Errorf("omName(%s, %s) = %s, want %s", metric, unit, got, want)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
