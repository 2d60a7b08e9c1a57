package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table is one table of a report, kept as rows and columns so the text report and the HTML page
// (and any other format) render the same figures.
//
// A last column whose header is "" holds a row's remark: text prints it after the aligned columns
// ("  * 3 class A, 0 class B in the run"), not as a column of its own.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	Notes   []string // sentences under the table: its marks and terms explained
}

// TableWriter is a writer that takes tables whole (the HTML page's), rather than as text.
type TableWriter interface {
	io.Writer
	WriteTable(t Table)
}

// WriteTable renders t onto w: whole, where w takes tables, as text otherwise.
func WriteTable(w io.Writer, t Table) {
	if tw, ok := w.(TableWriter); ok {
		tw.WriteTable(t)
		return
	}
	t.WriteText(w)
}

// WriteText prints the table as the text report shows it: its title after a blank line, columns
// right-aligned two spaces apart, each note wrapped and indented under it.
func (t Table) WriteText(w io.Writer) {
	if t.Title != "" {
		fmt.Fprintf(w, "\n%s\n", t.Title)
	}
	columns, remark := t.Columns, t.hasRemark()
	if remark {
		columns = columns[:len(columns)-1]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, cellsText(columns))
	for _, row := range t.Rows {
		cells, rest := row, ""
		if remark && len(row) == len(t.Columns) {
			cells, rest = row[:len(row)-1], row[len(row)-1]
			if rest != "" {
				rest = "  " + rest
			}
		}
		fmt.Fprintln(tw, cellsText(cells)+rest)
	}
	tw.Flush()
	for _, n := range t.Notes {
		fmt.Fprintln(w, indentWrap(n, "  ", "    "))
	}
}

// hasRemark says whether the last column holds remarks (its header is empty).
func (t Table) hasRemark() bool {
	return len(t.Columns) > 1 && t.Columns[len(t.Columns)-1] == ""
}

// cellsText is a tabwriter line: every cell terminated by a tab, so each is aligned.
func cellsText(cells []string) string {
	var b strings.Builder
	for _, c := range cells {
		b.WriteString(c)
		b.WriteByte('\t')
	}
	return b.String()
}
