package report

import (
	"bytes"
	"regexp"
	"testing"

	"persistlab/results"
)

// tableCatcher takes the report as the page does: tables whole, the rest as text.
type tableCatcher struct {
	bytes.Buffer
	tables []Table
}

func (c *tableCatcher) WriteTable(t Table) { c.tables = append(c.tables, t) }

// Columns align right two spaces apart; a headerless last column is a remark after them.
func TestTableText(t *testing.T) {
	tb := Table{Title: "costs", Columns: []string{"backend", "$/month", ""},
		Rows: [][]string{{"gcsfuse", "*", "* 3 class A in the run"}, {"litestream", "46.58", ""}}, Notes: []string{"* not priced"}}
	var out bytes.Buffer
	tb.WriteText(&out)
	want := "\ncosts\n     backend  $/month\n     gcsfuse        *  * 3 class A in the run\n  litestream    46.58\n  * not priced\n"
	if out.String() != want {
		t.Errorf("text\n%q, want\n%q", out.String(), want)
	}
	var c tableCatcher
	WriteTable(&c, tb)
	if c.Len() != 0 || len(c.tables) != 1 || c.tables[0].Rows[1][1] != "46.58" {
		t.Errorf("a table writer got text %q, tables %+v", c.String(), c.tables)
	}
}

func TestGenericTable(t *testing.T) {
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("x")}
	r.Scenario.Workload.Type = "no-presenter"
	r.Cells = append(r.Cells, cell("x", 2, 1, 10, 9, 100, 100))
	Summarize(r)
	var c tableCatcher
	WriteTables(&c, r)
	if len(c.tables) == 0 || c.tables[0].Columns[0] != "backend" || c.tables[0].Rows[0][0] != "x" ||
		!regexp.MustCompile(`^1 run\(s\) per row`).MatchString(c.tables[0].Title) {
		t.Errorf("generic table %+v", c.tables)
	}
}
