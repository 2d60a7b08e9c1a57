package report

import (
	"fmt"
	"strings"
)

// WrapText breaks text into lines of at most width characters, continued with two spaces.
func WrapText(text string, width int) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(text) {
		if i > 0 {
			if line+1+len(word) > width {
				b.WriteString("\n  ")
				line = 2
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

// ListAnd joins names as "a, b and c".
func ListAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// OrDash is s, or "-" for a table cell with nothing to show.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OptPct is the share m[k] as a whole percentage, or "-" where the row has no such share.
func OptPct(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%.0f%%", v*100)
	}
	return "-"
}
