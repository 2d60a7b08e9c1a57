package report

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"persistlab/results"
)

// LineTable is a table of the report written as a tabwriter takes it: a line per row, each cell
// ended by a tab; what follows a row's last tab is a remark beside the row ("! 2.0% errors").
// On a terminal it is aligned text (a tabwriter with flags); in a Markdown document
// (WriteMarkdown) a GitHub table. Every table of the report and of the workloads' presenters is
// made this way, so both renderings show the same rows.
type LineTable struct {
	text *tabwriter.Writer
	md   *markdown
	rows bytes.Buffer
}

// NewTable starts a table on w; Flush writes it.
func NewTable(w io.Writer, flags uint) *LineTable {
	if md, ok := w.(*markdown); ok {
		return &LineTable{md: md}
	}
	return &LineTable{text: tabwriter.NewWriter(w, 0, 0, 2, ' ', flags)}
}

func (t *LineTable) Write(p []byte) (int, error) {
	if t.text != nil {
		return t.text.Write(p)
	}
	return t.rows.Write(p)
}

// Flush writes the table.
func (t *LineTable) Flush() error {
	if t.text != nil {
		return t.text.Flush()
	}
	t.md.table(strings.Split(strings.TrimRight(t.rows.String(), "\n"), "\n"))
	t.rows.Reset()
	return nil
}

// WriteMarkdown writes the report's text (WriteTables) as GitHub Markdown, for a pull request's
// comment: the title a heading, each table a Markdown table (the line above a table its caption,
// in bold), every other line as it reads on a terminal.
func WriteMarkdown(w io.Writer, r *results.Results) error { return WriteMarkdownView(w, r, ViewDetail) }

// WriteMarkdownView is WriteMarkdown of as much as view asks.
func WriteMarkdownView(w io.Writer, r *results.Results, view View) error {
	md := &markdown{w: w}
	WriteView(md, r, view)
	md.close()
	return md.err
}

// markdown renders the report's text lines as Markdown: a line written by writeTitle becomes a
// heading, tables (NewTable) become tables, and runs of other lines paragraphs.
type markdown struct {
	w       io.Writer
	partial []byte   // a line not ended yet
	para    []string // the lines of the paragraph being written
	err     error
}

func (m *markdown) Write(p []byte) (int, error) {
	m.partial = append(m.partial, p...)
	for {
		i := bytes.IndexByte(m.partial, '\n')
		if i < 0 {
			break
		}
		m.line(string(m.partial[:i]))
		m.partial = m.partial[i+1:]
	}
	return len(p), nil
}

func (m *markdown) line(s string) {
	if strings.TrimSpace(s) == "" {
		m.endParagraph()
		return
	}
	m.para = append(m.para, s)
}

func (m *markdown) print(s string) {
	if m.err == nil {
		_, m.err = io.WriteString(m.w, s)
	}
}

// heading writes a heading of the document.
func (m *markdown) heading(s string) {
	m.endParagraph()
	m.print("## " + escapeMarkdown(s) + "\n\n")
}

// endParagraph writes the lines gathered so far as one paragraph, each on its own line.
func (m *markdown) endParagraph() {
	if len(m.para) == 0 {
		return
	}
	lines := make([]string, len(m.para))
	for i, l := range m.para {
		lines[i] = escapeMarkdown(strings.TrimSpace(l))
	}
	m.print(strings.Join(lines, "  \n") + "\n\n") // two spaces: a line break inside the paragraph
	m.para = nil
}

func (m *markdown) close() {
	if len(m.partial) > 0 {
		m.line(string(m.partial))
		m.partial = nil
	}
	m.endParagraph()
}

// table writes a table's tabwriter lines as a Markdown table. A paragraph of one line just above
// it is its caption. Cells ended by a tab are columns; the text after a line's last tab is one
// more column (named by the header's own text there, else "note"); every row gets every column.
func (m *markdown) table(lines []string) {
	if len(m.para) == 1 {
		m.print("**" + escapeMarkdown(strings.TrimSpace(m.para[0])) + "**\n\n")
		m.para = nil
	}
	m.endParagraph()
	var rows [][]string
	columns, remarks := 0, false
	for _, l := range lines {
		cells := strings.Split(l, "\t")
		remark := cells[len(cells)-1]
		cells = cells[:len(cells)-1]
		columns = max(columns, len(cells))
		if strings.TrimSpace(remark) != "" {
			remarks = true
		}
		rows = append(rows, append(cells, remark))
	}
	if len(rows) == 0 {
		return
	}
	width := columns
	if remarks {
		width++
	}
	for i, row := range rows {
		cells, remark := row[:len(row)-1], row[len(row)-1]
		out := make([]string, width)
		for j := range out {
			switch {
			case j < len(cells):
				out[j] = escapeCell(cells[j])
			case j == width-1 && remarks:
				out[j] = escapeCell(remark)
			}
		}
		if i == 0 && remarks && out[width-1] == "" {
			out[width-1] = "note"
		}
		rows[i] = out
	}
	m.print("| " + strings.Join(rows[0], " | ") + " |\n")
	align := make([]string, width)
	for j := range align {
		align[j] = "---"
		if numericColumn(rows[1:], j) {
			align[j] = "---:"
		}
	}
	m.print("|" + strings.Join(align, "|") + "|\n")
	for _, row := range rows[1:] {
		m.print("| " + strings.Join(row, " | ") + " |\n")
	}
	m.print("\n")
}

// number is a table cell that reads as a figure: 12, -3.5, 1.2e+03, 45%, 1.10x, $0.25, 3 / 4.
var number = regexp.MustCompile(`^[-+]?\$?[0-9][0-9.,]*(e[-+]?[0-9]+)?(%|x)?( / [-+]?[0-9][0-9.,]*)?$`)

// numericColumn says whether column j of rows holds figures (and dashes for none) only: it is
// aligned right, as on a terminal.
func numericColumn(rows [][]string, j int) bool {
	any := false
	for _, row := range rows {
		v := strings.TrimSpace(row[j])
		switch {
		case v == "" || v == "-":
		case number.MatchString(v):
			any = true
		default:
			return false
		}
	}
	return any
}

// markdownEscaper backslash-escapes what Markdown would read as markup (CommonMark allows the
// escape before any ASCII punctuation).
var markdownEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "~", `\~`)

// escapeMarkup escapes s's markup; an underscore inside a word (p95_ms) is left as it is, since
// it cannot start or end emphasis there.
func escapeMarkup(s string) string {
	s = markdownEscaper.Replace(s)
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && !(i > 0 && isWordByte(s[i-1]) && i+1 < len(s) && isWordByte(s[i+1])) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// lineStart is what makes a line a heading, a list item or a quote where it begins one.
var lineStart = regexp.MustCompile(`^([#+=-]|[0-9]+[.)](\s|$))`)

// escapeMarkdown makes a line of the report's text read as itself in Markdown.
func escapeMarkdown(s string) string {
	s = escapeMarkup(s)
	if m := lineStart.FindStringIndex(s); m != nil {
		if s[0] >= '0' && s[0] <= '9' { // "1. " would start a list: escape its dot
			i := strings.IndexAny(s, ".)")
			return s[:i] + `\` + s[i:]
		}
		return `\` + s
	}
	return s
}

// escapeCell is a table cell's text in Markdown: on one line, a '|' escaped.
func escapeCell(s string) string {
	return escapeMarkup(strings.Join(strings.Fields(s), " "))
}

// writeTitle writes the report's title: its first line on a terminal, a heading in Markdown.
func writeTitle(w io.Writer, title string) {
	if md, ok := w.(*markdown); ok {
		md.heading(title)
		return
	}
	io.WriteString(w, title+"\n")
}

// WriteTable implements TableWriter: a table of the report's model as a Markdown table, its title
// the caption and its notes a paragraph under it.
func (m *markdown) WriteTable(t Table) {
	if len(m.partial) > 0 {
		m.line(string(m.partial))
		m.partial = nil
	}
	m.endParagraph()
	if t.Title != "" {
		m.para = []string{t.Title}
	}
	columns, remark := t.Columns, t.hasRemark()
	if remark {
		columns = columns[:len(columns)-1]
	}
	lines := []string{cellsText(columns)}
	for _, row := range t.Rows {
		cells, rest := row, ""
		if remark && len(row) == len(t.Columns) {
			cells, rest = row[:len(row)-1], row[len(row)-1]
		}
		lines = append(lines, cellsText(cells)+rest)
	}
	m.table(lines)
	for _, n := range t.Notes {
		m.line(n)
	}
	m.endParagraph()
}

// answer writes the run's answer: the question in bold, the findings a list, each caveat marked.
func (m *markdown) answer(a Answer) {
	m.endParagraph()
	if a.Question != "" {
		m.print("**" + escapeMarkup(a.Question) + "**\n\n")
	}
	for _, f := range append(append([]string(nil), a.Findings...), a.ClaimLines()...) {
		m.print("- " + escapeMarkup(f) + "\n")
	}
	for _, c := range a.Caveats {
		m.print("- ⚠ " + escapeMarkup(c) + "\n")
	}
	if a.Fidelity != "" {
		m.print("- fidelity: " + escapeMarkup(a.Fidelity) + "\n")
	}
	m.print("\n")
}
