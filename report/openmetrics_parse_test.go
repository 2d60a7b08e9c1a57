package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A strict reader of the OpenMetrics text format (its ABNF and rules for gauges), for the tests:
// the parsers that exist for it are in modules that would raise this module's own dependencies.

var (
	omMetricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	omLabelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	omNumber     = regexp.MustCompile(`^([-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?|[-+]Inf|NaN)$`)
	omTypes      = map[string]bool{"counter": true, "gauge": true, "histogram": true, "gaugehistogram": true, "stateset": true, "info": true, "summary": true, "unknown": true}
)

type parsedFamily struct {
	typ, unit, help string
	samples         map[string]float64 // by label set, as written
}

// parseOpenMetrics reads an exposition: every line ended by a newline, the last "# EOF"; each
// family's TYPE, UNIT and HELP at most once and before its samples, its lines together; a gauge's
// samples named as the family, their label sets distinct, values numbers.
func parseOpenMetrics(text string) (map[string]*parsedFamily, error) {
	if !strings.HasSuffix(text, "# EOF\n") && !strings.HasSuffix(text, "# EOF") {
		return nil, fmt.Errorf("does not end with # EOF")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	fams := map[string]*parsedFamily{}
	var cur string
	seen := map[string]bool{}
	meta := map[string]bool{}
	open := func(name string) (*parsedFamily, error) {
		if name != cur {
			if seen[name] {
				return nil, fmt.Errorf("family %s interleaved with another", name)
			}
			seen[name], cur = true, name
			fams[name] = &parsedFamily{samples: map[string]float64{}}
		}
		return fams[name], nil
	}
	for i, line := range lines {
		n := i + 1
		if line == "# EOF" {
			if n != len(lines) {
				return nil, fmt.Errorf("line %d: # EOF before the end", n)
			}
			return fams, nil
		}
		if strings.HasPrefix(line, "#") {
			parts := strings.SplitN(line, " ", 4)
			if len(parts) < 3 || parts[0] != "#" {
				return nil, fmt.Errorf("line %d: malformed %q", n, line)
			}
			kind, name := parts[1], parts[2]
			if !omMetricName.MatchString(name) {
				return nil, fmt.Errorf("line %d: metric name %q", n, name)
			}
			f, err := open(name)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			if len(f.samples) > 0 {
				return nil, fmt.Errorf("line %d: %s after %s's samples", n, kind, name)
			}
			if meta[name+" "+kind] {
				return nil, fmt.Errorf("line %d: a second %s for %s", n, kind, name)
			}
			meta[name+" "+kind] = true
			value := ""
			if len(parts) == 4 {
				value = parts[3]
			}
			switch kind {
			case "TYPE":
				if !omTypes[value] {
					return nil, fmt.Errorf("line %d: type %q", n, value)
				}
				f.typ = value
			case "UNIT":
				if value == "" || !strings.HasSuffix(name, "_"+value) {
					return nil, fmt.Errorf("line %d: unit %q is not the suffix of %s", n, value, name)
				}
				f.unit = value
			case "HELP":
				s, rest, err := omUnescape(value, false)
				if err != nil || rest != "" {
					return nil, fmt.Errorf("line %d: help %q: %v", n, value, err)
				}
				f.help = s
			default:
				return nil, fmt.Errorf("line %d: %q is no metadata line", n, kind)
			}
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if name != cur || fams[cur] == nil {
			return nil, fmt.Errorf("line %d: sample %q outside its family (%q)", n, name, cur)
		}
		f := fams[cur]
		if f.typ != "gauge" {
			return nil, fmt.Errorf("line %d: sample of family %s of type %q", n, name, f.typ)
		}
		labels := ""
		if strings.HasPrefix(rest, "{") {
			end, names, err := omLabelSet(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			seenLabel := map[string]bool{}
			for _, l := range names {
				if seenLabel[l] {
					return nil, fmt.Errorf("line %d: label %s twice", n, l)
				}
				seenLabel[l] = true
			}
			labels, rest = rest[1:end-1], rest[end:]
		}
		if !strings.HasPrefix(rest, " ") {
			return nil, fmt.Errorf("line %d: no space before the value", n)
		}
		fields := strings.Split(rest[1:], " ")
		if len(fields) > 2 || !omNumber.MatchString(fields[0]) {
			return nil, fmt.Errorf("line %d: value %q", n, rest[1:])
		}
		v, _ := strconv.ParseFloat(fields[0], 64)
		if _, dup := f.samples[labels]; dup {
			return nil, fmt.Errorf("line %d: label set {%s} twice in %s", n, labels, name)
		}
		f.samples[labels] = v
	}
	return nil, fmt.Errorf("no # EOF line")
}

// omLabelSet reads {name="value",...} at the start of s: where it ends, and the names.
func omLabelSet(s string) (end int, names []string, err error) {
	i := 1
	for {
		if i < len(s) && s[i] == '}' && len(names) == 0 {
			return i + 1, nil, nil
		}
		j := strings.IndexByte(s[i:], '=')
		if j < 0 {
			return 0, nil, fmt.Errorf("label set %q: no =", s)
		}
		name := s[i : i+j]
		if !omLabelName.MatchString(name) || strings.HasPrefix(name, "__") {
			return 0, nil, fmt.Errorf("label name %q", name)
		}
		names = append(names, name)
		i += j + 1
		if i >= len(s) || s[i] != '"' {
			return 0, nil, fmt.Errorf("label %s: value not quoted", name)
		}
		_, rest, err := omUnescape(s[i+1:], true)
		if err != nil {
			return 0, nil, fmt.Errorf("label %s: %v", name, err)
		}
		i = len(s) - len(rest)
		switch {
		case strings.HasPrefix(rest, ","):
			i++
		case strings.HasPrefix(rest, "}"):
			return i + 1, names, nil
		default:
			return 0, nil, fmt.Errorf("label %s: %q after its value", name, rest)
		}
	}
}

// omUnescape reads escaped text (\\, \" and \n only) up to a closing quote when quoted, else to
// its end; it returns the text and what follows the quote.
func omUnescape(s string, quoted bool) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			if i+1 >= len(s) {
				return "", "", fmt.Errorf("a backslash at the end")
			}
			i++
			switch s[i] {
			case '\\', '"':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			default:
				return "", "", fmt.Errorf("escape \\%c", s[i])
			}
		case c == '"' && quoted:
			return b.String(), s[i+1:], nil
		case c == '"':
			return "", "", fmt.Errorf("an unescaped quote")
		case c == '\n':
			return "", "", fmt.Errorf("a newline")
		default:
			b.WriteByte(c)
		}
	}
	if quoted {
		return "", "", fmt.Errorf("no closing quote")
	}
	return b.String(), "", nil
}
