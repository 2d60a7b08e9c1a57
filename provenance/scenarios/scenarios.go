package scenarios

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"persistlab/backend"
	"persistlab/profile"
	"persistlab/provenance"
	"persistlab/scenario"
)

// Entry is one backend entry of a scenario and the figures its cells run with.
type Entry struct {
	ID      string           `json:"id"` // the entry's label, or its backend's name
	Backend string           `json:"backend"`
	Model   string           `json:"model,omitempty"` // "" when no cloud model is in its way
	Note    string           `json:"note,omitempty"`  // why no model, when none
	Figures []provenance.Use `json:"figures,omitempty"`
	// Workload is the app figures its cells run with (its fixed parameters).
	Workload []provenance.Use `json:"workload,omitempty"`
}

// Table is one of the seed's published tables and the figures fitted from seeds that set the
// entry it is scored against.
type Table struct {
	Backend string `json:"backend"`
	Source  string `json:"source"`
	Found   bool   `json:"found"` // the scenario has an entry of that name
	// Calibration: in effect and fitted from this same seed; what they set is not a match.
	Calibration []provenance.Use `json:"calibration,omitempty"`
	// Elsewhere: in effect and fitted from another seed: predictions here.
	Elsewhere []provenance.Use `json:"elsewhere,omitempty"`
}

// Scenario is the provenance of a scenario's figures.
type Scenario struct {
	Name    string  `json:"name"`
	Seed    string  `json:"seed,omitempty"`
	Entries []Entry `json:"entries"`
	Tables  []Table `json:"tables,omitempty"`
	// Instance is the CPU the instances run on where an instance profile sets it (nil otherwise):
	// no backend's model holds those figures, the runner applies them to the system under test.
	Instance *Instance `json:"instance,omitempty"`
}

// Instance is an instance profile's figures as the scenario takes them.
type Instance struct {
	Profile string `json:"profile"`
	Effect  string `json:"effect,omitempty"` // what the run does with them (its CPU limit, or why none)
	// Took are the entries whose instances run under them.
	Took    []string         `json:"took,omitempty"`
	Figures []provenance.Use `json:"figures"`
}

// ForScenario lists the figures each backend entry of s runs with (its model's, as its options
// leave them, and the workload's app figures), and for each published table of the scenario's
// seed, the figures fitted from that seed that set it.
//
// Where the scenario took a profile (s.ProfileUsed), a figure an entry took from it is the
// profile's, measured: fitted from no seed, it is calibration for none.
func ForScenario(s *scenario.Spec) (*Scenario, error) {
	out := &Scenario{Name: s.Name, Seed: s.Seed}
	var measured map[string]provenance.Figure
	if u := s.ProfileUsed; u != nil {
		var err error
		if measured, err = u.Profile.Provenance(u.Path); err != nil {
			return nil, err
		}
	}
	if u := s.ProfileUsed; u != nil && u.Profile.Kind == instanceModel {
		out.Instance = instanceUse(u, measured)
	}
	for _, b := range s.Backends {
		e := Entry{ID: b.ID(), Backend: b.Name}
		info, err := backend.Lookup(b.Name)
		if err != nil {
			return nil, err
		}
		var note string
		if info.NoModel != nil {
			note = info.NoModel(b.Options)
		}
		switch model := info.CloudModel; {
		case note != "":
			e.Note = note
		case model == "":
			return nil, fmt.Errorf("backend %q: no cloud model named for it, and no reason for none (backend.Info.CloudModel, NoModel)", b.Name)
		default:
			m, ok := provenance.Lookup(model)
			if !ok {
				return nil, fmt.Errorf("backend %q: model %q is not registered (its package is not linked)", b.Name, model)
			}
			e.Model = model
			uses := provenance.Uses(m.Figures())
			if m.For != nil {
				var err error
				if uses, err = m.For(b.Options); err != nil {
					return nil, fmt.Errorf("backend %s: %w", e.ID, err)
				}
			}
			for i := range uses {
				if f, ok := measured[uses[i].Option]; ok && uses[i].Option != "" && s.ProfileUsed.Took(e.ID, uses[i].Option) {
					uses[i] = provenance.Use{Figure: f, Note: "profile " + s.ProfileUsed.Path}
				}
			}
			e.Figures = uses
		}
		e.Workload = appUses(s.FixedParams(e.ID), s.Sweep)
		out.Entries = append(out.Entries, e)
	}
	for _, p := range s.Published {
		t := Table{Backend: p.Backend, Source: p.Source}
		for _, e := range out.Entries {
			if e.ID != p.Backend {
				continue
			}
			t.Found = true
			for _, u := range append(append([]provenance.Use{}, e.Figures...), e.Workload...) {
				if u.Off || u.Kind != provenance.Fitted {
					continue
				}
				if u.FittedFrom == s.Seed {
					t.Calibration = append(t.Calibration, u)
				} else {
					t.Elsewhere = append(t.Elsewhere, u)
				}
			}
		}
		out.Tables = append(out.Tables, t)
	}
	return out, nil
}

// instanceModel names the model an instance profile's figures are of.
const instanceModel = "instance"

// instanceUse is the instance profile's figures, in its order, each measured; one a run records
// without applying (its model says it moves nothing a run measures) is marked so.
func instanceUse(u *profile.Use, measured map[string]provenance.Figure) *Instance {
	in := &Instance{Profile: u.Path, Effect: u.Effect}
	for _, e := range u.Entries {
		if len(e.Took) > 0 {
			in.Took = append(in.Took, e.Entry)
		}
	}
	for _, name := range u.Profile.OptionNames() {
		f, ok := measured[name]
		if !ok {
			continue
		}
		note := "profile " + u.Path
		if strings.HasPrefix(f.Moves, provenance.MovesNothing) {
			note += "; recorded, not emulated"
		}
		in.Figures = append(in.Figures, provenance.Use{Figure: f, Note: note})
	}
	return in
}

// Print writes the scenario's provenance: the figures of each entry (a model's figures once for
// entries that use them alike), then the verdict for each seed table.
func (sc *Scenario) Print(w io.Writer) error {
	seed := "no seed"
	if sc.Seed != "" {
		seed = "seed " + sc.Seed
	}
	fmt.Fprintf(w, "scenario %s (%s): where each figure its cells run with comes from\n", sc.Name, seed)
	printed := map[string]string{} // rendered figures -> the entry that printed them first
	for _, e := range sc.Entries {
		fmt.Fprintf(w, "\nbackend %s", e.ID)
		if e.ID != e.Backend {
			fmt.Fprintf(w, " (%s)", e.Backend)
		}
		if e.Model == "" {
			fmt.Fprintf(w, ": %s\n", e.Note)
		} else {
			fmt.Fprintf(w, ": %s model\n", e.Model)
			text := renderUses(e.Figures, "  ")
			if note, ok := allOff(e.Figures); ok {
				text = "  none of its figures in effect: " + note + "\n"
			}
			if first, ok := printed[text]; ok {
				fmt.Fprintf(w, "  the same figures as backend %s\n", first)
			} else {
				printed[text] = e.ID
				io.WriteString(w, text)
			}
		}
		if len(e.Workload) > 0 {
			text := renderUses(e.Workload, "    ")
			if first, ok := printed["workload:"+text]; ok {
				fmt.Fprintf(w, "  workload: the same app figures as backend %s\n", first)
			} else {
				printed["workload:"+text] = e.ID
				fmt.Fprintln(w, "  workload:")
				io.WriteString(w, text)
			}
		}
	}
	if in := sc.Instance; in != nil {
		took := "no entry runs under them"
		if len(in.Took) > 0 {
			took = "the instances of " + strings.Join(in.Took, ", ") + " run under them"
		}
		fmt.Fprintf(w, "\ninstance: the instance model, from profile %s (%s)\n", in.Profile, took)
		if in.Effect != "" {
			fmt.Fprintf(w, "  %s\n", in.Effect)
		}
		io.WriteString(w, renderUses(in.Figures, "  "))
	}
	fmt.Fprintln(w, "\n(every figure's source and what it moves: persistlab lab model all)")
	if sc.Seed == "" {
		fmt.Fprintln(w, "\nno seed: nothing here is scored, so nothing is calibration")
		return nil
	}
	fitted := provenance.FittedFrom(sc.Seed)
	var names []string
	for _, f := range fitted {
		names = append(names, fmt.Sprintf("%s %s (%s)", f.Model, f.Go, f.Value))
	}
	if len(names) == 0 {
		names = []string{"none"}
	}
	fmt.Fprintf(w, "\nfigures fitted from seed %s, in any model: %s\n", sc.Seed, strings.Join(names, "; "))
	if len(sc.Tables) == 0 {
		fmt.Fprintf(w, "seed %s's tables: none in this scenario (its scoreboard, if any, reads the seed's text)\n", sc.Seed)
		return nil
	}
	fmt.Fprintf(w, "seed %s's tables (calibration: set by a figure fitted from seed %s, not a match):\n", sc.Seed, sc.Seed)
	for _, t := range sc.Tables {
		fmt.Fprintf(w, "  %s: %s\n", t.Backend, t.Source)
		switch {
		case !t.Found:
			fmt.Fprintf(w, "    no backend entry %q in this scenario\n", t.Backend)
		case len(t.Calibration) == 0:
			fmt.Fprintf(w, "    prediction: no figure fitted from seed %s is in effect\n", sc.Seed)
		default:
			for _, u := range t.Calibration {
				fmt.Fprintf(w, "    calibration: %s %s = %s, fitted from seed %s (%s)\n", u.Model, u.Go, u.Value, u.FittedFrom, u.Source)
			}
		}
		for _, u := range t.Elsewhere {
			fmt.Fprintf(w, "    prediction here, calibration for seed %s: %s %s = %s\n", u.FittedFrom, u.Model, u.Go, u.Value)
		}
	}
	return nil
}

// renderUses is figures as indented aligned rows: name, value (or off), kind, the code that
// holds it and any note (sources: persistlab lab model; a calibration's, under its table).
func renderUses(uses []provenance.Use, indent string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, u := range uses {
		value := u.Value
		if u.Off {
			value = "off"
		}
		kind := string(u.Kind)
		switch {
		case u.Kind == provenance.Fitted:
			kind += " from seed " + u.FittedFrom
		case u.Kind == provenance.Measured && u.Measurement != nil:
			kind += " on " + u.Measurement.Target + " at " + u.Measurement.When
		}
		line := indent + u.Name + "\t" + value + "\t" + kind + "\t" + u.Go
		if u.Note != "" {
			line += "\t[" + u.Note + "]"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	return b.String()
}

// allOff says whether every use is off for one reason, and that reason.
func allOff(uses []provenance.Use) (string, bool) {
	if len(uses) == 0 {
		return "", false
	}
	for _, u := range uses {
		if !u.Off || u.Note != uses[0].Note {
			return "", false
		}
	}
	return uses[0].Note, true
}
