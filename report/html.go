package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"persistlab/results"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Parse(pageTemplate))

type pageData struct {
	Title    string
	Status   string
	Started  string
	Answer   []string // the verdict's lines, opening the page
	Blocks   []pageBlock
	Charts   template.JS
	Colours  template.JS
	Machine  [][2]string
	Versions [][2]string
	Scenario string
	Command  string
}

// WriteHTML writes one self-contained page: charts drawn by an inline script from inline data, the
// tables, and the run's configuration, machine and versions. Its Content-Security-Policy forbids
// every request, so opening it never touches the network.
func WriteHTML(w io.Writer, r *results.Results) error {
	charts, err := ChartsFor(r)
	if err != nil {
		return err
	}
	data, err := json.Marshal(charts)
	if err != nil {
		return err
	}
	colours := groupColours(r, charts)
	colourJSON, err := json.Marshal(colours)
	if err != nil {
		return err
	}
	tables := &pageBuilder{colours: colours}
	writeHeader(tables, r) // the answer opens the page on its own, above the charts
	writeSections(tables, r, ViewDetail)
	scenarioJSON, _ := json.MarshalIndent(r.Scenario, "", "  ")
	title := r.Scenario.Name
	if r.Scenario.Title != "" {
		title = r.Scenario.Title
	}
	m := r.Machine
	machine := [][2]string{{"CPU", m.CPUModel}, {"cores", fmt.Sprint(m.Cores)}, {"memory", fmt.Sprintf("%.1f GiB", float64(m.MemoryBytes)/(1<<30))},
		{"kernel", m.Kernel}, {"OS", m.OS}, {"host", m.Hostname}}
	var dirs []string
	for d := range m.FileSystems {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		machine = append(machine, [2]string{"file system of " + d, m.FileSystems[d]})
	}
	if len(r.Placement.AppCPUs) > 0 {
		machine = append(machine, [2]string{"CPUs", fmt.Sprintf("app %v, driver %v", r.Placement.AppCPUs, r.Placement.DriverCPUs)})
	}
	var versions [][2]string
	for k, v := range r.Versions {
		versions = append(versions, [2]string{k, v})
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i][0] < versions[j][0] })
	cmd, _ := json.Marshal(r.Command)
	return page.Execute(w, pageData{
		Title: title, Status: r.Status, Started: r.Started.Format(time.RFC3339), Answer: AnswerOf(r).Lines(), Blocks: tables.blocks(),
		Charts: template.JS(data), Colours: template.JS(colourJSON), Machine: machine, Versions: versions, Scenario: string(scenarioJSON), Command: string(cmd),
	})
}

// palette is Tableau 10: colours most readers, colour-blind ones too, tell apart.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// groupColours gives each series group of a page one colour, by its name: the run's backends first,
// in the scenario's order, then the charts' other groups as they come. A backend is the same colour
// in every chart, legend and table of the page, whichever backends a chart leaves out.
func groupColours(r *results.Results, charts []Chart) map[string]string {
	colours := map[string]string{}
	add := func(group string) {
		if _, ok := colours[group]; !ok {
			colours[group] = colourAt(len(colours))
		}
	}
	for _, b := range r.BackendOrder() {
		add(b)
	}
	for _, a := range r.Aggregates {
		add(a.Backend)
	}
	for _, c := range charts {
		for _, s := range c.Series {
			add(s.Group)
		}
		for _, b := range c.Bars {
			add(b.Group)
		}
	}
	return colours
}

// colourAt is the palette's i-th colour, and past its end hues a golden angle apart.
func colourAt(i int) string {
	if i < len(palette) {
		return palette[i]
	}
	hue := math.Mod(float64(i-len(palette))*137.508+15, 360)
	return hslHex(hue, 0.55, 0.45)
}

// hslHex writes a colour given by hue (degrees), saturation and lightness as #rrggbb.
func hslHex(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	byteOf := func(v float64) int { return int(math.Round((v + m) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", byteOf(r), byteOf(g), byteOf(b))
}

// pageBlock is a piece of the page's tables section: a table, or text no table model holds yet.
type pageBlock struct {
	Text  string
	Table *htmlTable
}

// htmlTable is a Table as the page shows it: numbers right-aligned, backends with their colour.
type htmlTable struct {
	Title       string
	TitleGroup  string // the backend the table is about, with its colour
	TitleColour template.CSS
	Columns     []string
	Rows        [][]htmlCell
	Notes       []string
}

type htmlCell struct {
	Text    string
	Numeric bool
	Remark  bool   // a row's remark after the columns: wraps
	Group   string // the backend it names, with its colour
	Colour  template.CSS
}

// pageBuilder collects the text report as the page shows it: tables whole, the rest as text.
type pageBuilder struct {
	colours map[string]string
	parts   []pageBlock
}

func (p *pageBuilder) Write(b []byte) (int, error) {
	if n := len(p.parts); n > 0 && p.parts[n-1].Table == nil {
		p.parts[n-1].Text += string(b)
	} else {
		p.parts = append(p.parts, pageBlock{Text: string(b)})
	}
	return len(b), nil
}

var numericCell = regexp.MustCompile(`^(?:[-+]?\$?[0-9].*|[-*†])$`)

func (p *pageBuilder) WriteTable(t Table) {
	h := &htmlTable{Title: t.Title, Columns: t.Columns, Notes: t.Notes}
	h.TitleGroup, h.TitleColour = p.swatch(p.titleGroup(t.Title))
	for _, row := range t.Rows {
		cells := make([]htmlCell, len(row))
		for i, text := range row {
			cells[i] = htmlCell{Text: text, Numeric: numericCell.MatchString(text), Remark: t.hasRemark() && i == len(t.Columns)-1}
			if i < len(t.Columns) && t.Columns[i] == "backend" {
				cells[i].Group, cells[i].Colour = p.swatch(text)
			}
		}
		h.Rows = append(h.Rows, cells)
	}
	p.parts = append(p.parts, pageBlock{Table: h})
}

// swatch is a group's colour as a swatch's style, where the group has one.
func (p *pageBuilder) swatch(group string) (string, template.CSS) {
	if c := p.colours[group]; c != "" {
		return group, template.CSS("background: " + c)
	}
	return "", ""
}

// titleGroup is the backend a table's title is about ("backend gcsfuse", "gcsfuse beside the
// seed"), the longest name that fits, or "".
func (p *pageBuilder) titleGroup(title string) string {
	best := ""
	for g := range p.colours {
		if len(g) > len(best) && (title == "backend "+g || strings.HasPrefix(title, "backend "+g+" ") || strings.HasPrefix(title, g+" ")) {
			best = g
		}
	}
	return best
}

// blocks are the collected pieces, text trimmed of blank lines and empty text left out.
func (p *pageBuilder) blocks() []pageBlock {
	var out []pageBlock
	for _, b := range p.parts {
		if b.Table == nil {
			b.Text = strings.Trim(b.Text, "\n")
			if strings.TrimSpace(b.Text) == "" {
				continue
			}
		}
		out = append(out, b)
	}
	return out
}
