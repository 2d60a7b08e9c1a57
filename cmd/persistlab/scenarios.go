package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"persistlab/param"
	"persistlab/provenance/scenarios"
	"persistlab/runner"
	"persistlab/scenario"
)

func cmdScenarios(args []string) error {
	if len(args) > 0 && args[0] == "show" {
		return cmdScenariosShow(args[1:], os.Stdout)
	}
	rest, err := parseInterspersed(newFlags("scenarios"), args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("want no arguments, or: show NAME [--provenance]")
	}
	var rows [][]string
	for _, name := range scenario.Builtins() {
		s, err := scenario.Load(name)
		if err != nil {
			return err
		}
		if _, err := scenario.NewPlan(s, runner.Known()); err != nil { // expands the sweep's values
			return err
		}
		var backends []string
		for _, b := range s.Backends {
			backends = append(backends, b.ID())
		}
		rows = append(rows, []string{s.Name, s.Seed, s.Workload.Type, strings.Join(backends, " "), sweepSummary(s.Sweep), strconv.Itoa(s.Repeat), s.Title})
	}
	width := terminalWidth(os.Stdout)
	lines, shortened := fitTable(scenarioColumns, rows, width)
	for _, l := range lines {
		fmt.Println(l)
	}
	if hint := "(abbreviated: persistlab scenarios show NAME prints one in full)"; shortened && len(hint) <= width {
		fmt.Println(hint)
	}
	return nil
}

// sweepSummary is a sweep in a few words: each axis as written when that is short ("vus
// 2..20/2"), else its number of values ("rw 4 values"), joined by " x ".
func sweepSummary(sweep scenario.Sweep) string {
	var parts []string
	for _, a := range sweep {
		switch {
		case len(a.Text) <= 12 || len(a.Values) == 0:
			parts = append(parts, a.Name+" "+strings.Trim(a.Text, "[]"))
		default:
			parts = append(parts, fmt.Sprintf("%s %d values", a.Name, len(a.Values)))
		}
	}
	return strings.Join(parts, " x ")
}

// column of a table fitted to a terminal: how it gives way when the table is too wide.
type column struct {
	header string
	min    int  // it may be shortened down to this width (0: never shortened)
	list   bool // shortened by items ("a b +3"), not by characters
	drop   int  // dropped in this order (1 first) when the table is still too wide; 0: never
}

// scenarioColumns: a title cut shorter than 24 characters says little, so it goes first (show
// NAME prints it); the name is never cut, being what show takes.
var scenarioColumns = []column{
	{header: "NAME"}, {header: "SEED", drop: 3}, {header: "WORKLOAD", drop: 4},
	{header: "BACKENDS", min: 12, list: true, drop: 6}, {header: "SWEEP", min: 12, drop: 5},
	{header: "REPEAT", drop: 2}, {header: "TITLE", min: 24, drop: 1},
}

const columnGap = 2

// fitTable lays rows out in columns no wider, together, than width: the columns that may give
// way do, the widest first; when they cannot give enough, columns are dropped in their order
// and the rest laid out again. shortened says whether any cell lost text.
func fitTable(cols []column, rows [][]string, width int) (lines []string, shortened bool) {
	natural := make([]int, len(cols))
	for i, c := range cols {
		natural[i] = utf8.RuneCountInString(c.header)
		for _, r := range rows {
			natural[i] = max(natural[i], utf8.RuneCountInString(r[i]))
		}
	}
	var widths []int
	var kept []bool
	for dropped := 0; dropped <= len(cols); dropped++ {
		widths, kept = slices.Clone(natural), make([]bool, len(cols))
		for i, c := range cols {
			kept[i] = c.drop == 0 || c.drop > dropped
		}
		if fitWidths(cols, widths, kept, width) {
			break
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, cell := range cells {
			if !kept[i] {
				continue
			}
			text := cell
			if utf8.RuneCountInString(text) > widths[i] {
				text, shortened = shorten(text, widths[i], cols[i].list), true
			}
			if b.Len() > 0 {
				b.WriteString(strings.Repeat(" ", columnGap))
			}
			b.WriteString(text + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(text)))
		}
		return strings.TrimRight(b.String(), " ")
	}
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = c.header
	}
	lines = append(lines, line(headers))
	for _, r := range rows {
		lines = append(lines, line(r))
	}
	return lines, shortened
}

// fitWidths narrows the kept columns that may give way, the widest first, until the row fits
// width; false if it cannot.
func fitWidths(cols []column, widths []int, kept []bool, width int) bool {
	total := -columnGap
	for i, w := range widths {
		if kept[i] {
			total += w + columnGap
		}
	}
	for ; total > width; total-- {
		widest := -1
		for i, c := range cols {
			if kept[i] && c.min > 0 && widths[i] > c.min && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return false
		}
		widths[widest]--
	}
	return true
}

// shorten fits text into width: a list keeps the items that fit and counts the rest ("a b
// +3"); other text is cut with "...". What fits in no way is cut.
func shorten(text string, width int, list bool) string {
	if list {
		items := strings.Fields(text)
		for keep := len(items) - 1; keep >= 1; keep-- {
			if s := fmt.Sprintf("%s +%d", strings.Join(items[:keep], " "), len(items)-keep); len(s) <= width {
				return s
			}
		}
		if s := fmt.Sprintf("%d backends", len(items)); len(s) <= width {
			return s
		}
	}
	r := []rune(text)
	if width > 3 {
		return strings.TrimRight(string(r[:width-3]), " ") + "..."
	}
	return string(r[:max(width, 0)])
}

// terminalWidth is the width to fit output to: $COLUMNS, else the terminal's, else 100.
func terminalWidth(f *os.File) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n >= 20 && n <= 1000 {
		return n
	}
	if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col >= 20 {
		return int(ws.Col)
	}
	return 100
}

// cmdScenariosShow prints a scenario as YAML, or with --provenance where each figure its backends
// and workload run with comes from, and which of them are calibration for the scenario's seed.
func cmdScenariosShow(args []string, w io.Writer) error {
	fs := newFlags("scenarios show")
	prov := fs.Bool("provenance", false, "the model and app figures each backend runs with, published, assumed, fitted or measured, and which are calibration for the seed's tables")
	profileFlag := fs.String("profile", "", "with --provenance: the figures as a profile persistlab calibrate wrote sets them (replaces the scenario's profile:)")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(names) != 1 {
		return fmt.Errorf("want: show NAME [--provenance]")
	}
	s, err := scenario.Load(names[0])
	if err != nil {
		return err
	}
	if !*prov {
		if *profileFlag != "" {
			return &param.FieldError{Field: "--profile", Value: *profileFlag, Allowed: "with --provenance (the scenario's YAML is printed as written)"}
		}
		return yaml.NewEncoder(w).Encode(s)
	}
	if _, err := useProfile(s, *profileFlag, terminalSafe(os.Stderr)); err != nil {
		return err
	}
	p, err := scenarios.ForScenario(s)
	if err != nil {
		return err
	}
	return p.Print(w)
}
