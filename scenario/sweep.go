package scenario

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"persistlab/param"
)

// Sweep is the parameters a scenario varies, in the order written; cells are their product.
type Sweep []Axis

// Axis is one swept parameter, or several that move together: `file_size+bs: [128KiB/128KiB,
// 1MiB/1MiB]` (a published table whose block size follows its file size). Text keeps what the user
// wrote (`2..20/2`, `[10KiB, 1GiB]`) so errors and results show their own words; Values is the
// expansion, filled by Validate (for linked parameters, their values joined by "/").
type Axis struct {
	Name   string   `json:"name"`
	Text   string   `json:"text"`
	Values []string `json:"values"`
}

// Params names the parameters the axis sets: one, or several linked by "+".
func (a Axis) Params() []string { return strings.Split(a.Name, "+") }

// Set gives each parameter of the axis its part of value.
func (a Axis) Set(value string, into map[string]string) {
	names := a.Params()
	if len(names) == 1 {
		into[a.Name] = value
		return
	}
	for i, part := range strings.Split(value, "/") {
		if i < len(names) {
			into[names[i]] = strings.TrimSpace(part)
		}
	}
}

// ValueOf is the axis's value at a point of the sweep (params holding each parameter's value).
func (a Axis) ValueOf(params map[string]string) string {
	var parts []string
	for _, n := range a.Params() {
		parts = append(parts, params[n])
	}
	return strings.Join(parts, "/")
}

// Has says whether the sweep sets a parameter, alone or linked.
func (s Sweep) Has(param string) bool {
	for _, a := range s {
		for _, n := range a.Params() {
			if n == param {
				return true
			}
		}
	}
	return false
}

// ParamNames lists every parameter the sweep sets, in order.
func (s Sweep) ParamNames() []string {
	var out []string
	for _, a := range s {
		out = append(out, a.Params()...)
	}
	return out
}

// MaxSweepValues bounds one axis: a range is refused before it is expanded.
const MaxSweepValues = 10000

const sweepSyntax = "a list like 2,4,8 or [10KiB, 1GiB], a range like 2..20/2 (whole numbers), or one value"

// Get finds the axis of a parameter.
func (s Sweep) Get(name string) (*Axis, bool) {
	for i := range s {
		if s[i].Name == name {
			return &s[i], true
		}
	}
	return nil, false
}

// Set replaces (or adds) the axis of a parameter.
func (s *Sweep) Set(a Axis) {
	if old, ok := s.Get(a.Name); ok {
		*old = a
		return
	}
	*s = append(*s, a)
}

// UnmarshalYAML reads a mapping of parameter names to a list or a text form.
func (s *Sweep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &param.FieldError{Field: "sweep", Value: n.Value, Allowed: "a mapping of parameter names to values, like {vus: 2..20/2}"}
	}
	*s = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, v := n.Content[i].Value, n.Content[i+1]
		a, err := axisFromNode(name, v)
		if err != nil {
			return err
		}
		if _, dup := s.Get(name); dup {
			return &param.FieldError{Field: "sweep." + name, Value: a.Text, Allowed: "each parameter once"}
		}
		*s = append(*s, a)
	}
	return nil
}

func axisFromNode(name string, v *yaml.Node) (Axis, error) {
	switch v.Kind {
	case yaml.SequenceNode:
		parts := make([]string, len(v.Content))
		for i, c := range v.Content {
			if c.Kind != yaml.ScalarNode {
				return Axis{}, &param.FieldError{Field: "sweep." + name, Value: fmt.Sprintf("line %d", c.Line), Allowed: sweepSyntax}
			}
			parts[i] = c.Value
		}
		return Axis{Name: name, Text: "[" + strings.Join(parts, ", ") + "]"}, nil
	case yaml.ScalarNode:
		return Axis{Name: name, Text: v.Value}, nil
	}
	return Axis{}, &param.FieldError{Field: "sweep." + name, Value: NodeText(v), Allowed: sweepSyntax}
}

// NodeText is a YAML node as the user wrote it, on one line, for messages.
func NodeText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	out, err := yaml.Marshal(flowStyle(n))
	if err != nil {
		return fmt.Sprintf("line %d", n.Line)
	}
	return strings.TrimSpace(string(out))
}

// flowStyle is a copy of n written on one line.
func flowStyle(n *yaml.Node) *yaml.Node {
	c := *n
	c.Style = yaml.FlowStyle
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = flowStyle(child)
	}
	return &c
}

// duplicate is the first value listed twice, or "".
func duplicate(values []string) string {
	seen := make(map[string]bool, len(values))
	for _, v := range values {
		if seen[v] {
			return v
		}
		seen[v] = true
	}
	return ""
}

// MarshalYAML writes the axes as the user wrote them.
func (s Sweep) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, a := range s {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: a.Name}, &yaml.Node{Kind: yaml.ScalarNode, Value: a.Text})
	}
	return n, nil
}

// UnmarshalJSON reads the list Sweep's default encoding writes, and the first results format's
// {"vus": {"text": ..., "values": [2, 4]}}.
func (s *Sweep) UnmarshalJSON(data []byte) error {
	var axes []Axis
	if err := json.Unmarshal(data, &axes); err == nil {
		*s = axes
		return nil
	}
	var old struct {
		VUs *struct {
			Text   string `json:"text"`
			Values []int  `json:"values"`
		} `json:"vus"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		return err
	}
	*s = nil
	if old.VUs != nil {
		a := Axis{Name: "vus", Text: old.VUs.Text}
		for _, v := range old.VUs.Values {
			a.Values = append(a.Values, strconv.Itoa(v))
		}
		*s = append(*s, a)
	}
	return nil
}

// items splits the text of an axis into its written values.
func (a Axis) items() []string {
	t := strings.TrimSpace(a.Text)
	t = strings.TrimSuffix(strings.TrimPrefix(t, "["), "]")
	var out []string
	for _, p := range strings.Split(t, ",") {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

// ExpandLinked checks an axis of linked parameters: each value is their values joined by "/",
// each checked against its own declaration (find), and fills Values.
func (a *Axis) ExpandLinked(find func(name string) (param.Param, bool)) error {
	names := a.Params()
	if len(names) == 1 {
		p, ok := find(a.Name)
		if !ok {
			return &param.FieldError{Field: "sweep." + a.Name, Value: a.Text, Allowed: "a declared parameter"}
		}
		return a.Expand(p)
	}
	fail := func(allowed string) error {
		return &param.FieldError{Field: "sweep." + a.Name, Value: a.Text, Allowed: allowed}
	}
	syntax := fmt.Sprintf("a list of %d values joined by /, one per parameter (%s), like [%s]", len(names), strings.Join(names, ", "), strings.Repeat("A/", len(names)-1)+"Z")
	items := a.items()
	if len(items) > MaxSweepValues {
		return fail(fmt.Sprintf("at most %d values", MaxSweepValues))
	}
	var values []string
	for _, item := range items {
		parts := strings.Split(item, "/")
		if len(parts) != len(names) {
			return fail(syntax)
		}
		for i, n := range names {
			p, ok := find(n)
			if !ok {
				return &param.FieldError{Field: "sweep." + a.Name, Value: n, Allowed: "declared parameters"}
			}
			parts[i] = strings.TrimSpace(parts[i])
			if err := p.Check("sweep."+a.Name, parts[i]); err != nil {
				return fail(fmt.Sprintf("%s for %s (%s)", p.Accepts(), n, syntax))
			}
		}
		values = append(values, strings.Join(parts, "/"))
	}
	if dup := duplicate(values); dup != "" {
		return fail("each value once (" + dup + " is listed twice: one value is one row; use repeat for more runs)")
	}
	a.Values = values
	return nil
}

// Expand checks every value of the axis against p and fills Values. A range (FROM..TO/STEP) is
// only for whole numbers, and its bounds are checked before it is expanded.
func (a *Axis) Expand(p param.Param) error {
	fail := func(allowed string) error {
		return &param.FieldError{Field: "sweep." + a.Name, Value: a.Text, Allowed: allowed}
	}
	t := strings.TrimSpace(a.Text)
	if t == "" || t == "[]" {
		return fail(sweepSyntax)
	}
	if lo, rest, ok := strings.Cut(t, ".."); ok && !strings.Contains(t, ",") {
		if p.Kind != param.KindInt {
			return fail(p.Accepts() + " (ranges are for whole numbers; list the values)")
		}
		hi, stepText, hasStep := strings.Cut(rest, "/")
		from, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		to, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
		step, err3 := int64(1), error(nil)
		if hasStep {
			step, err3 = strconv.ParseInt(strings.TrimSpace(stepText), 10, 64)
		}
		if err1 != nil || err2 != nil || err3 != nil {
			return fail(sweepSyntax)
		}
		if step < 1 || to < from {
			return fail("a range FROM..TO/STEP with FROM <= TO and a step of at least 1")
		}
		for _, end := range []int64{from, to} {
			if err := p.Check("sweep."+a.Name, strconv.FormatInt(end, 10)); err != nil {
				return fail(p.Accepts())
			}
		}
		// Counted in unsigned arithmetic before anything is expanded: to-from and from+i*step
		// both fit, where a signed sum past the largest value would wrap and never end.
		steps := (uint64(to) - uint64(from)) / uint64(step)
		if steps >= MaxSweepValues {
			return fail(fmt.Sprintf("at most %d values in one range", MaxSweepValues))
		}
		a.Values = make([]string, 0, steps+1)
		for i := uint64(0); i <= steps; i++ {
			a.Values = append(a.Values, strconv.FormatInt(int64(uint64(from)+i*uint64(step)), 10))
		}
		return nil
	}
	items := a.items()
	if len(items) > MaxSweepValues {
		return fail(fmt.Sprintf("at most %d values", MaxSweepValues))
	}
	for _, v := range items {
		if v == "" {
			return fail(sweepSyntax)
		}
		if err := p.Check("sweep."+a.Name, v); err != nil {
			return fail(p.Accepts())
		}
	}
	if dup := duplicate(items); dup != "" {
		return fail("each value once (" + dup + " is listed twice: one value is one row; use repeat for more runs)")
	}
	a.Values = items
	return nil
}
