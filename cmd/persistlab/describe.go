package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"persistlab/backend"
	"persistlab/param"
	"persistlab/runner"
	"persistlab/workload"
)

// cmdBackends prints every backend with what it is and every option it takes, from the backends'
// own declarations (backend.Info): aligned text, or with --markdown the tables docs/backends.md holds.
func cmdBackends(args []string, w io.Writer) error {
	markdown, err := describeFlags("backends", args)
	if err != nil {
		return err
	}
	var blocks []block
	for _, name := range backend.Names() {
		info, err := backend.Lookup(name)
		if err != nil {
			return err
		}
		b := block{name: name, about: info.Description}
		b.tables = append(b.tables, paramTable("option", info.Options))
		blocks = append(blocks, b)
	}
	return writeBlocks(w, blocks, markdown)
}

// cmdWorkloads prints every workload with what one cell runs, its parameters, its sections and
// the metrics it reports, from the workloads' own declarations (workload.Info): aligned text, or
// with --markdown the tables docs/workloads.md holds.
func cmdWorkloads(args []string, w io.Writer) error {
	markdown, err := describeFlags("workloads", args)
	if err != nil {
		return err
	}
	every := block{name: "every workload", about: "the runner's parameters and metrics, which every workload takes and reports alike"}
	every.tables = append(every.tables, paramTable("parameter", runner.Knobs), metricTable(runner.RunnerMetrics))
	blocks := []block{every}
	for _, name := range workload.Names() {
		info, err := workload.Lookup(name)
		if err != nil {
			return err
		}
		b := block{name: name, about: info.Description}
		b.tables = append(b.tables, paramTable("parameter", info.Params))
		if len(info.Sections) > 0 {
			t := table{header: []string{"section", "what it holds"}, code: []int{0}}
			for _, s := range sortedKeys(info.Sections) {
				t.rows = append(t.rows, []string{s, info.Sections[s]})
			}
			b.tables = append(b.tables, t)
		}
		b.tables = append(b.tables, metricTable(info.Metrics))
		blocks = append(blocks, b)
	}
	return writeBlocks(w, blocks, markdown)
}

// metricTable lists metrics with their units and help.
func metricTable(metrics []workload.Metric) table {
	t := table{header: []string{"metric", "unit", "help"}, code: []int{0}}
	for _, m := range metrics {
		t.rows = append(t.rows, []string{m.Name, m.Unit, m.Help})
	}
	return t
}

func describeFlags(name string, args []string) (markdown bool, err error) {
	fs := newFlags(name)
	md := fs.Bool("markdown", false, "Markdown tables (docs/"+name+".md holds them) instead of aligned columns")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return false, err
	}
	if len(rest) > 0 {
		return false, fmt.Errorf("want no arguments, or --markdown")
	}
	return *md, nil
}

// paramTable is one row per declared parameter or option: its name, its kind with what it allows,
// its default, its unit and its help.
func paramTable(what string, params []param.Param) table {
	t := table{header: []string{what, "kind", "default", "unit", "help"}, code: []int{0, 2}}
	for _, p := range params {
		t.rows = append(t.rows, []string{p.Name, kindText(p), p.Default, p.Unit, p.Help})
	}
	return t
}

// kindText is a parameter's kind with what it allows: "int from 1 to 10000", "duration of at
// least 0s", "enum: gcs, no-delay, off".
func kindText(p param.Param) string {
	switch {
	case p.Kind == param.KindEnum:
		return "enum: " + strings.Join(p.Allowed, ", ")
	case p.Bounded():
		return string(p.Kind) + " " + p.Bounds()
	}
	return string(p.Kind)
}

// block is one backend or workload: its name, a line on what it is, its tables and notes.
type block struct {
	name, about string
	tables      []table
	notes       []string
}

// table has a header and rows; its code columns (names, values as written) are code in Markdown.
type table struct {
	header []string
	rows   [][]string
	code   []int
}

func writeBlocks(w io.Writer, blocks []block, markdown bool) error {
	var b strings.Builder
	for i, bl := range blocks {
		if i > 0 {
			b.WriteString("\n")
		}
		if markdown {
			fmt.Fprintf(&b, "`%s`: %s\n", bl.name, mdCell(bl.about))
		} else {
			fmt.Fprintf(&b, "%s\n", strings.Join(wrap(bl.name+": "+bl.about, helpWidth+26), "\n  "))
		}
		for _, n := range bl.notes {
			fmt.Fprintf(&b, "\n%s\n", n)
		}
		for _, t := range bl.tables {
			b.WriteString("\n")
			if markdown {
				t.markdown(&b)
			} else if err := t.aligned(&b); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Widths at which the aligned text wraps a kind (an enum's values) and a help text.
const (
	kindWidth = 36
	helpWidth = 72
)

// aligned writes the table as columns, "-" for an empty cell but the last; a long kind or help
// wraps onto lines of its own within its column.
func (t table) aligned(w io.Writer) error {
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  "+strings.ToUpper(strings.Join(t.header, "\t")))
	last := len(t.header) - 1
	for _, r := range t.rows {
		cells := make([][]string, len(r))
		lines := 1
		for i, c := range r {
			switch {
			case c == "" && i < last:
				cells[i] = []string{"-"}
			case i == last:
				cells[i] = wrap(c, helpWidth)
			case t.header[i] == "kind":
				cells[i] = wrap(c, kindWidth)
			default:
				cells[i] = []string{c}
			}
			lines = max(lines, len(cells[i]))
		}
		for l := 0; l < lines; l++ {
			line := make([]string, len(cells))
			for i, c := range cells {
				if l < len(c) {
					line[i] = c[l]
				}
			}
			fmt.Fprintln(tw, "  "+strings.Join(line, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"[:len(line)-len(strings.TrimSuffix(line, "\n"))]); err != nil {
			return err
		}
	}
	return nil
}

// wrap breaks s at spaces into lines of at most width (a longer word stays whole).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

func (t table) markdown(b *strings.Builder) {
	b.WriteString("| " + strings.Join(t.header, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(t.header)) + "|\n")
	for _, r := range t.rows {
		cells := make([]string, len(r))
		for i, c := range r {
			switch {
			case c == "":
			case slices.Contains(t.code, i):
				cells[i] = "`" + mdCell(c) + "`"
			default:
				cells[i] = mdCell(c)
			}
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// mdCell keeps a text inside one Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
