package scenario

import (
	"maps"
	"path/filepath"
	"slices"

	"persistlab/profile"
)

// ApplyProfile sets the profile's figures as options of every backend entry that takes them
// (takes says whether one does, and if not why; the profile's applies_to must match the entry's
// options), except where the entry sets an option itself: its own value wins. A figure that
// would make a valid entry invalid (its kind's Fits: an IOPS its volume type cannot provision)
// is declined by that entry, with the reason. It records what each entry took in s.ProfileUsed,
// and returns it.
func (s *Spec) ApplyProfile(p *profile.Profile, path string, takes func(b BackendSpec) (ok bool, why string)) *profile.Use {
	use := &profile.Use{Path: path, Profile: *p}
	figures := p.Options()
	kind, _ := profile.LookupKind(p.Kind)
	for i := range s.Backends {
		b := &s.Backends[i]
		e := profile.EntryUse{Entry: b.ID()}
		if ok, why := takes(*b); !ok {
			e.Skipped = why
			use.Entries = append(use.Entries, e)
			continue
		}
		if why := p.Mismatch(b.Options); why != "" {
			e.Skipped = why
			use.Entries = append(use.Entries, e)
			continue
		}
		if b.Options == nil {
			b.Options = map[string]string{}
		} else {
			b.Options = maps.Clone(b.Options) // entries may share a map with another spec
		}
		// An entry invalid on its own fails with its own error: nothing to decline then.
		fits := kind.Fits
		if fits != nil && fits(b.Options) != nil {
			fits = nil
		}
		for _, name := range p.OptionNames() {
			if _, own := b.Options[name]; own {
				e.Kept = append(e.Kept, name)
				continue
			}
			if fits != nil {
				trial := maps.Clone(b.Options)
				trial[name] = figures[name]
				if err := fits(trial); err != nil {
					e.Declined = append(e.Declined, profile.Declined{Option: name, Why: err.Error()})
					continue
				}
			}
			b.Options[name] = figures[name]
			e.Took = append(e.Took, name)
		}
		slices.Sort(e.Kept)
		use.Entries = append(use.Entries, e)
	}
	s.ProfileUsed = use
	return use
}

// ProfilePath is the scenario's profile: as written when absolute or the scenario is a
// built-in, else relative to the scenario's file (as its own files are); "" for none.
func (s *Spec) ProfilePath() string {
	if s.Profile == "" || filepath.IsAbs(s.Profile) || s.Workload.Dir == "" {
		return s.Profile
	}
	return filepath.Join(s.Workload.Dir, s.Profile)
}
