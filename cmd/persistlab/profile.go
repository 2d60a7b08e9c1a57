package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"persistlab/backend"
	"persistlab/param"
	"persistlab/profile"
	"persistlab/scenario"
)

// useProfile reads the run's profile (flagPath, else the scenario's profile:), applies its
// figures to every backend entry that runs its model and does not set the option itself, and
// says on w what each entry took. It returns nil when there is no profile.
func useProfile(spec *scenario.Spec, flagPath string, w io.Writer) (*profile.Use, error) {
	path, from := flagPath, "--profile"
	if path == "" {
		path, from = spec.ProfilePath(), "the scenario's profile:"
	} else if spec.Profile != "" {
		fmt.Fprintf(w, "--profile %s replaces the scenario's profile: %s\n", flagPath, spec.Profile)
	}
	if path == "" {
		return nil, nil
	}
	p, err := profile.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	use := spec.ApplyProfile(p, path, func(b scenario.BackendSpec) (bool, string) {
		info, err := backend.Lookup(b.Name)
		if err != nil {
			return false, err.Error()
		}
		for _, f := range p.Figures {
			if _, ok := param.Find(info.Options, f.Option); !ok {
				return false, fmt.Sprintf("backend %s runs no %s model", b.Name, p.Kind)
			}
		}
		if b.Options["endpoint"] != "" {
			return false, "a real bucket (option endpoint): no lab model to replace"
		}
		return true, ""
	})
	writeProfileUse(w, use)
	return use, nil
}

// writeProfileUse says which entries took which of the profile's figures, and which kept their own.
func writeProfileUse(w io.Writer, use *profile.Use) {
	p := use.Profile
	var figures []string
	for _, f := range p.Figures {
		figures = append(figures, f.Option+" "+f.Value)
	}
	var took, skipped []string
	for _, e := range use.Entries {
		switch {
		case e.Skipped != "":
			skipped = append(skipped, e.Entry+" ("+e.Skipped+")")
		case len(e.Took) > 0:
			took = append(took, e.Entry)
		}
	}
	fmt.Fprintf(w, "profile %s: %s figures measured on %s at %s from %s: %s\n", use.Path, p.Kind, p.Measured.Target, p.Measured.When, p.Measured.Machine.Hostname, strings.Join(figures, ", "))
	if len(took) == 0 {
		fmt.Fprintf(w, "  no backend entry takes them: the profile changes nothing in this run\n")
	} else {
		fmt.Fprintf(w, "  they replace the %s model's defaults for %s\n", p.Kind, strings.Join(took, ", "))
	}
	for _, e := range use.Entries {
		if len(e.Kept) > 0 {
			fmt.Fprintf(w, "  %s sets %s itself: its own value wins over the profile's\n", e.Entry, strings.Join(e.Kept, ", "))
		}
		for _, d := range e.Declined {
			fmt.Fprintf(w, "  %s cannot take %s %s, so it keeps its model's own: %s\n", e.Entry, d.Option, p.Options()[d.Option], d.Why)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "  not for %s\n", strings.Join(skipped, "; "))
	}
	if h, ok := p.WorstHeldOut(); ok {
		fmt.Fprintf(w, "  its fit predicted the held-out %s within %.1f%%\n", h.Point, 100*math.Abs(h.Error))
	}
}
