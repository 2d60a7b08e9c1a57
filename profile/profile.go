// Package profile is what a calibration (persistlab calibrate) writes: figures measured on the
// user's own target, each replacing one model default of a run (run --profile, a scenario's
// profile:), and the probe points it held out to show how far the fitted model predicts.
//
// A profile has a kind (bucket, volume, instance): the model package of that kind
// registers which options its figures may set and how they are checked together, so this package
// links no model.
package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"persistlab/lib/readfile"
	"persistlab/lib/registry"
	"persistlab/param"
	"persistlab/provenance"
)

// Schema names the profile format; bump it when a field changes meaning.
const Schema = "persistlab.profile/1"

// MaxBytes bounds a profile file: one is a few KiB.
const MaxBytes = 64 << 10

// Profile is one calibration's result.
type Profile struct {
	Schema   string   `yaml:"schema" json:"schema"`
	Kind     string   `yaml:"kind" json:"kind"`
	Measured Measured `yaml:"measured" json:"measured"`
	Figures  []Figure `yaml:"figures" json:"figures"`
	// NotFitted are the options the probe measured but could not fit (no 429 in a burst): the
	// model keeps its default for them, and the profile says why.
	NotFitted []NotFitted `yaml:"not_fitted,omitempty" json:"not_fitted,omitempty"`
	HeldOut   []HeldOut   `yaml:"held_out" json:"held_out"`
	// AppliesTo are option values an entry must hold for the figures to apply to it (a volume
	// profile's calibrated type: a gp3's latency says nothing of a pd-ssd); empty: every entry
	// that runs the model.
	AppliesTo map[string]string `yaml:"applies_to,omitempty" json:"applies_to,omitempty"`
	// Reference is the machine the figures are relative to, where they are ratios (an instance
	// profile's speed factors: the target's time over this machine's); nil for absolute figures.
	Reference *Machine `yaml:"reference,omitempty" json:"reference,omitempty"`
}

// Measured says what was measured, from where, when, and with which persistlab.
type Measured struct {
	Target  string  `yaml:"target" json:"target"` // as the kind names it (Kind.Target): never credentials
	Machine Machine `yaml:"machine" json:"machine"`
	When    string  `yaml:"when" json:"when"` // RFC 3339
	Commit  string  `yaml:"persistlab_commit" json:"persistlab_commit"`
}

// Machine is the machine the probe ran on.
type Machine struct {
	Hostname string `yaml:"hostname" json:"hostname"`
	CPU      string `yaml:"cpu" json:"cpu"`
	Kernel   string `yaml:"kernel" json:"kernel"`
}

// String is the machine in one phrase: "vm-1 (Intel Xeon; Linux 6.1 x86_64)".
func (m Machine) String() string { return fmt.Sprintf("%s (%s; %s)", m.Hostname, m.CPU, m.Kernel) }

// Figure is one measured figure: the backend option it sets, its value as that option takes
// it, and how it was measured.
type Figure struct {
	Option     string `yaml:"option" json:"option"`
	Value      string `yaml:"value" json:"value"`
	Provenance string `yaml:"provenance" json:"provenance"` // always measured
	How        string `yaml:"how" json:"how"`
}

// NotFitted is an option the probe could not fit, and why.
type NotFitted struct {
	Option string `yaml:"option" json:"option"`
	Why    string `yaml:"why" json:"why"`
}

// HeldOut is a probe point the fit did not use: the fitted model's prediction of it beside what
// was measured. Error is (predicted - measured) / measured.
type HeldOut struct {
	Point     string  `yaml:"point" json:"point"` // "8 MiB read"
	Unit      string  `yaml:"unit" json:"unit"`
	Predicted float64 `yaml:"predicted" json:"predicted"`
	Measured  float64 `yaml:"measured" json:"measured"`
	Error     float64 `yaml:"error" json:"error"`
}

// Kind is a kind of profile, registered by the model package its figures replace.
type Kind struct {
	Name  string // "bucket"
	Model string // the provenance model whose figures it replaces
	// Options are what its figures may set: backend options of the backends that run the model.
	Options []param.Param
	// Check checks the figures as one set of options (a p99 below its median); nil: none.
	Check func(opts map[string]string) error
	// Target says what measured.target holds, for errors, and ValidTarget checks it; unset: an
	// endpoint's host and a bucket.
	Target      string
	ValidTarget func(string) bool
	// Selectors are the options applies_to may name.
	Selectors []param.Param
	// Fits checks one backend entry's options as a whole: a figure whose addition makes them
	// invalid (an IOPS below the minimum the entry's type provisions) is declined by that entry,
	// with the error as the reason. nil: every figure fits every entry.
	Fits func(opts map[string]string) error
	// Relative: the figures are ratios to the machine the calibration ran on, which the profile
	// names (reference); a run elsewhere is told they are not its own.
	Relative bool
}

var kinds = registry.New[Kind]("profile: kind")

// RegisterKind makes a kind of profile known; model packages call it from init. A second
// registration of one name panics.
func RegisterKind(k Kind) { kinds.Register(k.Name, k) }

// LookupKind finds a registered kind.
func LookupKind(name string) (Kind, bool) { return kinds.Get(name) }

// KindNames lists the registered kinds, sorted.
func KindNames() []string { return kinds.Names() }

// Error says which field of a profile is wrong, what it holds and what it may hold.
type Error struct {
	Profile string // the file
	Field   string // "figures[2].value"
	Value   string
	Allowed string
}

func (e *Error) Error() string {
	return fmt.Sprintf("profile %s: %s: %q is not allowed: want %s", e.Profile, e.Field, e.Value, e.Allowed)
}

// Load reads a profile file through MaxBytes and checks every field.
func Load(path string) (*Profile, error) {
	data, err := readfile.Regular(path, MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	return Parse(data, path)
}

// Parse reads a profile from YAML, refusing unknown fields, and checks every field.
func Parse(data []byte, source string) (*Profile, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("profile %s: %d bytes: want a profile under %d KiB", source, len(data), MaxBytes>>10)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("profile %s: the file is empty: want a profile persistlab calibrate wrote", source)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile %s: %w (want the YAML persistlab calibrate writes, schema %s)", source, err, Schema)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, &Error{Profile: source, Field: "---", Value: "a second document", Allowed: "one YAML document per profile"}
	}
	if err := p.Check(source); err != nil {
		return nil, err
	}
	return &p, nil
}

// Bounds of the free-text fields: a profile holds figures, not prose.
const (
	maxName = 200
	maxHow  = 400
)

// Check checks every field of the profile; source names it in errors.
func (p *Profile) Check(source string) error {
	fail := func(field, value, allowed string) error {
		return &Error{Profile: source, Field: field, Value: value, Allowed: allowed}
	}
	if p.Schema != Schema {
		return fail("schema", p.Schema, Schema)
	}
	kind, ok := LookupKind(p.Kind)
	if !ok {
		return fail("kind", p.Kind, "one of "+strings.Join(KindNames(), ", "))
	}
	m := p.Measured
	validT, targetText := validTarget, "the endpoint's host and the bucket, like storage.googleapis.com/my-bucket (no user, password, query or spaces)"
	if kind.ValidTarget != nil {
		validT, targetText = kind.ValidTarget, kind.Target
	}
	if !validT(m.Target) || !validText(m.Target, maxName) {
		return fail("measured.target", m.Target, targetText)
	}
	for field, v := range map[string]string{"measured.machine.hostname": m.Machine.Hostname, "measured.machine.cpu": m.Machine.CPU,
		"measured.machine.kernel": m.Machine.Kernel, "measured.persistlab_commit": m.Commit} {
		if !validText(v, maxName) {
			return fail(field, v, fmt.Sprintf("text of 1 to %d printable characters", maxName))
		}
	}
	if _, err := time.Parse(time.RFC3339, m.When); err != nil {
		return fail("measured.when", m.When, "a time in RFC 3339, like 2026-11-25T10:00:00Z")
	}
	switch r := p.Reference; {
	case kind.Relative && r == nil:
		return fail("reference", "", "the machine the figures are relative to (hostname, cpu, kernel): a "+p.Kind+" profile's figures are ratios to it")
	case !kind.Relative && r != nil:
		return fail("reference", r.String(), "no reference: a "+p.Kind+" profile's figures are absolute")
	case r != nil:
		for field, v := range map[string]string{"reference.hostname": r.Hostname, "reference.cpu": r.CPU, "reference.kernel": r.Kernel} {
			if !validText(v, maxName) {
				return fail(field, v, fmt.Sprintf("text of 1 to %d printable characters", maxName))
			}
		}
	}
	if len(p.Figures) == 0 {
		return fail("figures", "", "at least one measured figure")
	}
	opts := map[string]string{}
	for i, f := range p.Figures {
		at := fmt.Sprintf("figures[%d]", i)
		o, ok := param.Find(kind.Options, f.Option)
		switch {
		case !ok:
			return fail(at+".option", f.Option, "one of "+strings.Join(param.Names(kind.Options), ", ")+" (a "+p.Kind+" profile's options)")
		case opts[f.Option] != "":
			return fail(at+".option", f.Option, "each option once")
		case o.Check(at+".value", f.Value) != nil || f.Value == "":
			return fail(at+".value", f.Value, "a value of option "+f.Option+": "+o.Accepts())
		case f.Provenance != string(provenance.Measured):
			return fail(at+".provenance", f.Provenance, string(provenance.Measured)+" (a profile holds only what was measured)")
		case !validText(f.How, maxHow):
			return fail(at+".how", f.How, fmt.Sprintf("how it was measured, in 1 to %d printable characters", maxHow))
		}
		opts[f.Option] = f.Value
	}
	if kind.Check != nil {
		if err := kind.Check(opts); err != nil {
			return fmt.Errorf("profile %s: figures: %w", source, err)
		}
	}
	for i, n := range p.NotFitted {
		at := fmt.Sprintf("not_fitted[%d]", i)
		if _, ok := param.Find(kind.Options, n.Option); !ok || opts[n.Option] != "" {
			return fail(at+".option", n.Option, "an option of a "+p.Kind+" profile that no figure sets")
		}
		if !validText(n.Why, maxHow) {
			return fail(at+".why", n.Why, fmt.Sprintf("why, in 1 to %d printable characters", maxHow))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.AppliesTo)) {
		at, v := "applies_to."+name, p.AppliesTo[name]
		sel, ok := param.Find(kind.Selectors, name)
		if !ok {
			allowed := "no applies_to: a " + p.Kind + " profile applies to every entry that runs its model"
			if len(kind.Selectors) > 0 {
				allowed = "one of " + strings.Join(param.Names(kind.Selectors), ", ")
			}
			return fail(at, name, allowed)
		}
		if sel.Check(at, v) != nil || v == "" {
			return fail(at, v, sel.Accepts())
		}
	}
	for i, h := range p.HeldOut {
		at := fmt.Sprintf("held_out[%d]", i)
		positive := func(x float64) bool { return x > 0 && x < 1e12 }
		switch {
		case !validText(h.Point, maxName):
			return fail(at+".point", h.Point, "the probe point held out, like 8 MiB read")
		case !validText(h.Unit, maxName):
			return fail(at+".unit", h.Unit, "the unit of predicted and measured, like s")
		case !positive(h.Predicted):
			return fail(at+".predicted", fmt.Sprint(h.Predicted), "a number above 0 and below 1e12")
		case !positive(h.Measured):
			return fail(at+".measured", fmt.Sprint(h.Measured), "a number above 0 and below 1e12")
		case math.Abs(h.Error-(h.Predicted-h.Measured)/h.Measured) > 1e-3:
			return fail(at+".error", fmt.Sprint(h.Error), fmt.Sprintf("(predicted - measured) / measured = %.4f", (h.Predicted-h.Measured)/h.Measured))
		}
	}
	return nil
}

// validTarget: host[:port]/bucket, nothing that could carry a credential.
func validTarget(s string) bool {
	host, bucketName, ok := strings.Cut(s, "/")
	return ok && host != "" && bucketName != "" && validText(s, maxName) && !strings.ContainsAny(s, "@?# \t")
}

// validText: 1 to max printable characters.
func validText(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Write writes the profile as YAML, a comment on what it is first.
func (p *Profile) Write(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "# persistlab calibrate %s: figures measured on %s; use with persistlab run --profile FILE\n", p.Kind, p.Measured.Target); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return err
	}
	return enc.Close()
}

// Options are the profile's figures as backend options.
func (p *Profile) Options() map[string]string {
	opts := make(map[string]string, len(p.Figures))
	for _, f := range p.Figures {
		opts[f.Option] = f.Value
	}
	return opts
}

// OptionNames lists the options the profile's figures set, in its order.
func (p *Profile) OptionNames() []string {
	var names []string
	for _, f := range p.Figures {
		names = append(names, f.Option)
	}
	return names
}

// WorstHeldOut is the held-out point predicted worst; ok false when there is none.
func (p *Profile) WorstHeldOut() (h HeldOut, ok bool) {
	for _, x := range p.HeldOut {
		if !ok || math.Abs(x.Error) > math.Abs(h.Error) {
			h, ok = x, true
		}
	}
	return h, ok
}

// Provenance is the profile's figures as measured figures of its kind's model, by option: each
// a copy of the model's figure for that option (its name, code and what it moves) with the
// measured value, how, and where and when. path names the profile file.
func (p *Profile) Provenance(path string) (map[string]provenance.Figure, error) {
	kind, ok := LookupKind(p.Kind)
	if !ok {
		return nil, fmt.Errorf("profile %s: kind %q is not known to this program", path, p.Kind)
	}
	model, ok := provenance.Lookup(kind.Model)
	if !ok {
		return nil, fmt.Errorf("profile %s: model %q is not registered", path, kind.Model)
	}
	// The model's own figure of each option, before a named variant's; of the type the profile
	// applies to, where figures are per type (a pd-ssd's service time, not an SSD's).
	typ := p.AppliesTo["type"]
	base := map[string]provenance.Figure{}
	for _, f := range model.Figures() {
		if f.Option == "" {
			continue
		}
		b, seen := base[f.Option]
		if !seen || (typ != "" && !slices.Contains(b.Types, typ) && slices.Contains(f.Types, typ)) {
			base[f.Option] = f
		}
	}
	at := &provenance.Measurement{Target: p.Measured.Target, Machine: p.Measured.Machine.String(), When: p.Measured.When, Profile: path}
	out := map[string]provenance.Figure{}
	for _, f := range p.Figures {
		b, ok := base[f.Option]
		if !ok {
			return nil, fmt.Errorf("profile %s: option %s: no figure of model %s takes it", path, f.Option, kind.Model)
		}
		o, _ := param.Find(kind.Options, f.Option)
		b.Value = f.Value
		if o.Unit != "" {
			b.Value += " " + o.Unit
		}
		b.Kind, b.FittedFrom, b.Source, b.Measurement = provenance.Measured, "", f.How, at
		out[f.Option] = b
	}
	return out, nil
}

// Use is a profile as a run took it: the file, what it holds, and what each backend entry took.
type Use struct {
	Path    string     `json:"path"`
	Profile Profile    `json:"profile"`
	Entries []EntryUse `json:"entries"`
	// Effect is what the profile did to the run as a whole, where that is more than the options
	// each entry took (an instance profile: the CPU limit each instance ran under, or why none).
	Effect string `json:"effect,omitempty"`
}

// EntryUse is what one backend entry took from the profile.
type EntryUse struct {
	Entry string `json:"entry"` // the entry's label, or its backend's name
	// Took are the options set from the profile (an instance profile: the runner's parameters
	// cpu_quota and cpu_period its figures gave).
	Took []string `json:"took,omitempty"`
	// Kept are the options the entry sets itself: its own value wins over the profile's.
	Kept []string `json:"kept,omitempty"`
	// Skipped says why the entry took none (it runs no model of the profile's kind, or not the
	// one the profile applies to).
	Skipped string `json:"skipped,omitempty"`
	// Declined are the figures the entry could not take (a value its volume type does not
	// provision): it runs with its own model's figure for them.
	Declined []Declined `json:"declined,omitempty"`
}

// Declined is a figure an entry could not take, and why.
type Declined struct {
	Option string `json:"option"`
	Why    string `json:"why"`
}

// Mismatch says why an entry with options opts is not one the profile applies to (its
// applies_to); "" when it is.
func (p *Profile) Mismatch(opts map[string]string) string {
	for _, name := range slices.Sorted(maps.Keys(p.AppliesTo)) {
		if want, got := p.AppliesTo[name], opts[name]; got != want {
			if got == "" {
				got = "unset"
			}
			return fmt.Sprintf("its %s is %s; the profile measured %s %s and applies to no other", name, got, name, want)
		}
	}
	return ""
}

// Took says whether entry took option from the profile.
func (u *Use) Took(entry, option string) bool {
	if u == nil {
		return false
	}
	for _, e := range u.Entries {
		if e.Entry == entry {
			return slices.Contains(e.Took, option)
		}
	}
	return false
}

// Summary is the profile in one line, for a run's caveats: "model from profile P measured on X
// at T; held-out 8 MiB read predicted within 4.1%".
func (u *Use) Summary() string {
	s := fmt.Sprintf("%s model from profile %s measured on %s at %s", u.Profile.Kind, u.Path, u.Profile.Measured.Target, u.Profile.Measured.When)
	if u.Effect != "" {
		s += ": " + u.Effect
	}
	if h, ok := u.Profile.WorstHeldOut(); ok {
		s += fmt.Sprintf("; held-out %s predicted within %.1f%%", h.Point, 100*math.Abs(h.Error))
	} else {
		s += "; it holds no held-out point, so how far its fit predicts is unknown"
	}
	return s
}
