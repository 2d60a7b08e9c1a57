// Package provenance says where each figure of persistlab's cloud models comes from: published
// by the provider (the page and its date), assumed (why, and what it moves), fitted from one
// of the seeds' results (which seed, which table), or measured on a user's own target by
// `persistlab calibrate` (what, where, when, from which machine). A figure fitted from a seed is calibration for
// that seed, never a match: FittedFrom lists what a seed's scoreboard must not count.
//
// The models register their tables from their own packages (lab/bucket, lab/volume), beside the
// constants they describe, and build each Value from the constant itself, so a table cannot say
// one thing while the code does another; package provenance/scenarios registers the app figures
// that scenarios set (model "app"), so that the lab links no scenario. A program sees a model's
// table once it links the model's package, as every program that runs the model does.
package provenance

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"persistlab/lib/registry"
)

// Kind is where a figure comes from.
type Kind string

const (
	// Published: a provider's documentation says it; Source names the page and when it was read.
	Published Kind = "published"
	// Assumed: nobody publishes it; Source says why this value, Moves what it changes.
	Assumed Kind = "assumed"
	// Fitted: taken from a seed's results; Source names the seed's table or figure, FittedFrom
	// the seed. Calibration for that seed, prediction for the others.
	Fitted Kind = "fitted"
	// Measured: taken on the user's own target by a calibration (a profile, package profile);
	// Source says how, Measurement what, where, when and from which machine. Fitted from no seed,
	// so what it sets stays a prediction for every seed.
	Measured Kind = "measured"
)

// Measurement says where a measured figure was taken.
type Measurement struct {
	Target  string `json:"target"`  // what was measured: an endpoint's host and bucket, never credentials
	Machine string `json:"machine"` // the machine the probe ran on
	When    string `json:"when"`    // RFC 3339
	Profile string `json:"profile"` // the profile file that holds it
}

// Figure is one number (or rule) a model enforces, and its provenance.
type Figure struct {
	Model string `json:"model"` // "bucket", "volume", "app", "prices"
	Name  string `json:"name"`  // what it is, e.g. "gp2 baseline IOPS per GiB"
	// Go is the code that holds it: a constant or variable of the model's package (GP2IOPSPerGiB),
	// or an expression rooted in one (DefaultModel().Write.Median); for app figures, the workload
	// parameter.
	Go    string `json:"go"`
	Value string `json:"value"` // with its unit, formatted from the code's own value
	Kind  Kind   `json:"kind"`
	// Source: for published, the page (URL or the package's tag for it) and the date it was
	// read; for fitted, the seed and its table or figure; for assumed, the reason.
	Source string `json:"source"`
	// Moves is what results the figure changes.
	Moves string `json:"moves"`
	// FittedFrom is the seed id ("000") a fitted figure was taken from; "" for the other kinds.
	FittedFrom string `json:"fitted_from,omitempty"`

	// Where it applies; empty: wherever the model runs.
	Types     []string `json:"types,omitempty"`     // volume types (gp2, st1)
	Era       string   `json:"era,omitempty"`       // "2018" or "current": figures of one era only
	Instances []string `json:"instances,omitempty"` // instances whose own limit it is
	Option    string   `json:"option,omitempty"`    // the backend option that replaces it, if any
	// Scenarios are the built-in scenarios that set an app figure (model "app").
	Scenarios []string `json:"scenarios,omitempty"`
	// Measurement is where a measured figure was taken; nil for the other kinds.
	Measurement *Measurement `json:"measurement,omitempty"`
}

// MovesNothing opens the Moves of a figure a run records without applying (an instance's file
// system factors): it changes no result, only the reader's judgement.
const MovesNothing = "nothing a run measures"

// Check says what a figure lacks for its kind.
func (f Figure) Check() error {
	var errs []error
	need := func(ok bool, format string, a ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s %q: "+format, append([]any{f.Model, f.Name}, a...)...))
		}
	}
	need(f.Model != "" && f.Name != "" && f.Go != "" && f.Value != "", "model, name, go and value are required")
	need(strings.TrimSpace(f.Moves) != "", "say what it moves")
	switch f.Kind {
	case Published:
		need(hasYear(f.Source), "a published figure names its page and the year it was read: %q", f.Source)
		need(f.FittedFrom == "", "fitted_from is for fitted figures only")
	case Assumed:
		need(len(f.Source) >= 20, "an assumed figure says why: %q", f.Source)
		need(f.FittedFrom == "", "fitted_from is for fitted figures only")
	case Fitted:
		need(f.FittedFrom != "", "a fitted figure names its seed (fitted_from)")
		need(strings.Contains(f.Source, "seed "+f.FittedFrom), "a fitted figure's source names its seed's table: %q", f.Source)
	case Measured:
		need(f.FittedFrom == "", "fitted_from is for fitted figures only")
		need(strings.TrimSpace(f.Source) != "", "a measured figure says how it was measured")
		m := f.Measurement
		need(m != nil && m.Target != "" && m.Machine != "" && hasYear(m.When) && m.Profile != "",
			"a measured figure names its target, machine, time and profile: %+v", m)
	default:
		need(false, "kind %q: want published, assumed, fitted or measured", f.Kind)
	}
	if f.Kind != Measured {
		need(f.Measurement == nil, "a measurement is for measured figures only")
	}
	return errors.Join(errs...)
}

// hasYear says whether s holds a plausible year (the date a page was read).
func hasYear(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if (s[i:i+2] == "19" || s[i:i+2] == "20") && strings.Trim(s[i+2:i+4], "0123456789") == "" &&
			(i == 0 || s[i-1] < '0' || s[i-1] > '9') && (i+4 == len(s) || s[i+4] < '0' || s[i+4] > '9') {
			return true
		}
	}
	return false
}

// Model is a registered model: its table, and the figures one backend entry runs with.
type Model struct {
	Name    string
	Figures func() []Figure
	// For is the figures a backend with these options runs with, each noted where an option
	// replaces it or turns it off; nil: all of Figures, as they are.
	For func(opts map[string]string) ([]Use, error)
}

// Use is a figure as one backend or workload runs it.
type Use struct {
	Figure
	// Note says how the run departs from the table: "" as in the table; otherwise what replaced
	// it ("option write_median: 20ms") or that it is off.
	Note string `json:"note,omitempty"`
	// Off: the figure is not in effect here (the model or its part is off).
	Off bool `json:"off,omitempty"`
}

var models = registry.New[Model]("provenance: model")

// Register adds a model's table; models call it from init. A second model of one name panics.
func Register(m Model) { models.Register(m.Name, m) }

// Lookup finds a registered model by name.
func Lookup(name string) (Model, bool) { return models.Get(name) }

// Names lists the registered models' names, sorted.
func Names() []string { return models.Names() }

// All is every registered model's figures, model by model (sorted by name).
func All() []Figure {
	var out []Figure
	for _, name := range Names() {
		m, _ := Lookup(name)
		out = append(out, m.Figures()...)
	}
	return out
}

// FittedFrom is every figure fitted from seed (an id such as "000"): the figures whose effect on
// that seed's results is calibration, not a match.
func FittedFrom(seed string) []Figure {
	var out []Figure
	for _, f := range All() {
		if f.Kind == Fitted && f.FittedFrom == seed {
			out = append(out, f)
		}
	}
	return out
}

// Uses is figures as a table uses them, all in effect.
func Uses(figs []Figure) []Use {
	out := make([]Use, len(figs))
	for i, f := range figs {
		out[i] = Use{Figure: f}
	}
	return out
}

// Columns are the table's columns, in order.
var Columns = []string{"model", "figure", "value", "kind", "source", "moves"}

func row(f Figure) []string {
	return []string{f.Model, f.Name, f.Value, string(f.Kind), SourceText(f), f.Moves}
}

// SourceText is a figure's source as a table prints it: a measured figure's how, then what,
// where and when it was measured.
func SourceText(f Figure) string {
	if m := f.Measurement; f.Kind == Measured && m != nil {
		return fmt.Sprintf("%s; measured on %s from %s at %s (profile %s)", f.Source, m.Target, m.Machine, m.When, m.Profile)
	}
	return f.Source
}

// Print writes figures as an aligned table with Columns.
func Print(w io.Writer, figs []Figure) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(Columns, "\t")))
	for _, f := range figs {
		fmt.Fprintln(tw, strings.Join(row(f), "\t"))
	}
	return tw.Flush()
}

// Markdown writes figures as a Markdown table with Columns (docs/fidelity.md).
func Markdown(w io.Writer, figs []Figure) error {
	esc := strings.NewReplacer("|", `\|`, "\n", " ")
	var b strings.Builder
	b.WriteString("| " + strings.Join(Columns, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(Columns)) + "|\n")
	for _, f := range figs {
		cells := row(f)
		for i := range cells {
			cells[i] = esc.Replace(cells[i])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
