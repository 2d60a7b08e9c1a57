package counter

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/report/reporttest"
)

// tableCatcher takes the report as the page does: tables whole, the rest as text.
type tableCatcher struct {
	bytes.Buffer
	tables []report.Table
}

func (c *tableCatcher) WriteTable(t report.Table) { c.tables = append(c.tables, t) }

// The page's tables are the text report's: every row a table writer takes is a line of the text,
// cell for cell, and the bucket, crash and seed tables are among them.
func TestTablesAreTheTextTables(t *testing.T) {
	r, err := report.Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	reporttest.CrashRuns(r)
	report.Summarize(r)
	var text bytes.Buffer
	report.WriteTables(&text, r)
	var c tableCatcher
	report.WriteTables(&c, r)
	lines := map[string]bool{}
	for _, l := range strings.Split(text.String(), "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	titles := ""
	for _, tb := range c.tables {
		titles += tb.Title + "\n"
		if !lines[strings.Join(strings.Fields(strings.Join(tb.Columns, " ")), " ")] {
			t.Errorf("header of %q not in the text", tb.Title)
		}
		for _, row := range tb.Rows {
			if l := strings.Join(strings.Fields(strings.Join(row, " ")), " "); !lines[l] {
				t.Errorf("row %q of %q not in the text:\n%s", l, tb.Title, text.String())
			}
		}
	}
	for _, want := range []string{"bucket requests per", "crash runs:", "gcsfuse beside the seed", "litestream beside the seed"} {
		if !strings.Contains(titles, want) {
			t.Errorf("no table %q among:\n%s", want, titles)
		}
	}
	// What the tables hold is not also in the text the page shows as <pre>.
	if strings.Contains(c.String(), "class A/s") || strings.Contains(c.String(), "lost med") {
		t.Errorf("a table's header went out as text:\n%s", c.String())
	}
}
