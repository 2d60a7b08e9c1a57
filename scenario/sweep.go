package scenario

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// IntSweep is a list of integers written as a list (`[2, 4, 8]`), a comma list (`2,4,8`), a single
// value (`4`) or a range with a step (`2..20/2`, step 1 when left out). It keeps what was written
// so errors and results show the user's own words.
type IntSweep struct {
	Values []int
	Text   string
}

const sweepSyntax = "a list like 2,4,8, a range like 2..20/2, or one integer"

// ParseIntSweep reads the text forms of an IntSweep.
func ParseIntSweep(s string) (IntSweep, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return IntSweep{}, fmt.Errorf("empty: want %s", sweepSyntax)
	}
	if lo, rest, ok := strings.Cut(s, ".."); ok {
		hi, stepText, hasStep := strings.Cut(rest, "/")
		step := 1
		from, err1 := strconv.Atoi(strings.TrimSpace(lo))
		to, err2 := strconv.Atoi(strings.TrimSpace(hi))
		var err3 error
		if hasStep {
			step, err3 = strconv.Atoi(strings.TrimSpace(stepText))
		}
		if err1 != nil || err2 != nil || err3 != nil {
			return IntSweep{}, fmt.Errorf("%q: want %s", s, sweepSyntax)
		}
		if step < 1 || to < from {
			return IntSweep{}, fmt.Errorf("%q: a range needs FROM <= TO and a step of at least 1", s)
		}
		sw := IntSweep{Text: s}
		for v := from; v <= to; v += step {
			sw.Values = append(sw.Values, v)
		}
		return sw, nil
	}
	sw := IntSweep{Text: s}
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return IntSweep{}, fmt.Errorf("%q: want %s", s, sweepSyntax)
		}
		sw.Values = append(sw.Values, v)
	}
	return sw, nil
}

// UnmarshalYAML accepts every form ParseIntSweep does, and YAML lists of integers.
func (s *IntSweep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		parts := make([]string, len(n.Content))
		for i, c := range n.Content {
			parts[i] = c.Value
		}
		n = &yaml.Node{Kind: yaml.ScalarNode, Value: strings.Join(parts, ",")}
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want %s", n.Line, sweepSyntax)
	}
	parsed, err := ParseIntSweep(n.Value)
	if err != nil {
		return &FieldError{Field: "sweep", Value: n.Value, Allowed: sweepSyntax}
	}
	*s = parsed
	return nil
}

// MarshalYAML writes the sweep as the user wrote it.
func (s IntSweep) MarshalYAML() (any, error) { return s.Text, nil }

// MarshalJSON records both the text and the expanded values in results files.
func (s IntSweep) MarshalJSON() ([]byte, error) {
	vals := make([]string, len(s.Values))
	for i, v := range s.Values {
		vals[i] = strconv.Itoa(v)
	}
	return []byte(fmt.Sprintf(`{"text":%q,"values":[%s]}`, s.Text, strings.Join(vals, ","))), nil
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *IntSweep) UnmarshalJSON(data []byte) error {
	var v struct {
		Text   string `json:"text"`
		Values []int  `json:"values"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	s.Text, s.Values = v.Text, v.Values
	return nil
}
