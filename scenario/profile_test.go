package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"persistlab/profile"
)

// A profile's figures reach every entry that takes them, except where the entry sets the option
// itself; what each took, kept and skipped is recorded.
func TestApplyProfileKeepsAnEntrysOwnOption(t *testing.T) {
	s := &Spec{Name: "x", Backends: []BackendSpec{
		{Name: "gcsfuse"},
		{Name: "litestream", Label: "ls-slow", Options: map[string]string{"read_median": "99ms", "sync_interval": "1s"}},
		{Name: "local"},
	}}
	p := &profile.Profile{Kind: "bucket", Figures: []profile.Figure{{Option: "read_median", Value: "50ms"}, {Option: "stream_mib_s", Value: "30"}}}
	use := s.ApplyProfile(p, "p.yaml", func(b BackendSpec) (bool, string) { return b.Name != "local", "no bucket" })
	if got := s.Backends[0].Options; !reflect.DeepEqual(got, map[string]string{"read_median": "50ms", "stream_mib_s": "30"}) {
		t.Errorf("gcsfuse options %v", got)
	}
	if got := s.Backends[1].Options; got["read_median"] != "99ms" || got["stream_mib_s"] != "30" || got["sync_interval"] != "1s" {
		t.Errorf("litestream options %v", got)
	}
	if s.Backends[2].Options != nil {
		t.Errorf("local took %v", s.Backends[2].Options)
	}
	want := []profile.EntryUse{
		{Entry: "gcsfuse", Took: []string{"read_median", "stream_mib_s"}},
		{Entry: "ls-slow", Took: []string{"stream_mib_s"}, Kept: []string{"read_median"}},
		{Entry: "local", Skipped: "no bucket"},
	}
	if s.ProfileUsed != use || !reflect.DeepEqual(use.Entries, want) || use.Path != "p.yaml" {
		t.Errorf("recorded %+v", use)
	}
	if !use.Took("gcsfuse", "read_median") || use.Took("ls-slow", "read_median") {
		t.Error("Took")
	}
}

// A scenario's profile: is read relative to its file, as its other files are.
func TestProfilePathIsRelativeToTheScenarioFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	body := "name: s\nworkload: {type: counter}\nbackends: [{name: gcsfuse}]\nprofile: cal/p.yaml\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ProfilePath(); got != filepath.Join(dir, "cal", "p.yaml") {
		t.Errorf("profile path %q", got)
	}
	s.Profile = "/abs/p.yaml"
	if got := s.ProfilePath(); got != "/abs/p.yaml" {
		t.Errorf("absolute profile path %q", got)
	}
}

// A kind whose entries check their options as a whole: an entry declines the figure that would
// make it invalid, keeps its model's own, and takes the rest; an entry of another type than the
// profile applies to takes nothing; an entry invalid on its own declines nothing.
func TestApplyProfileDeclinesWhatAnEntryCannotTake(t *testing.T) {
	profile.RegisterKind(profile.Kind{Name: "test-disk", Model: "test-disk", Fits: func(o map[string]string) error {
		if o["size"] == "" {
			return errors.New("option size: want a size")
		}
		if v := o["iops"]; v != "" && v < "3000" {
			return errors.New("option iops " + v + ": want 3000 or more")
		}
		return nil
	}})
	s := &Spec{Name: "x", Backends: []BackendSpec{
		{Name: "volume", Options: map[string]string{"type": "gp3", "size": "20GiB"}},
		{Name: "volume", Label: "ssd", Options: map[string]string{"type": "pd-ssd", "size": "20GiB"}},
		{Name: "volume", Label: "nosize", Options: map[string]string{"type": "gp3"}},
	}}
	p := &profile.Profile{Kind: "test-disk", AppliesTo: map[string]string{"type": "gp3"},
		Figures: []profile.Figure{{Option: "latency", Value: "2ms"}, {Option: "iops", Value: "2990"}}}
	use := s.ApplyProfile(p, "p.yaml", func(BackendSpec) (bool, string) { return true, "" })
	if got := s.Backends[0].Options; got["latency"] != "2ms" || got["iops"] != "" {
		t.Errorf("gp3 options %v", got)
	}
	e := use.Entries[0]
	if !reflect.DeepEqual(e.Took, []string{"latency"}) || len(e.Declined) != 1 || e.Declined[0].Option != "iops" || !strings.Contains(e.Declined[0].Why, "want 3000") {
		t.Errorf("gp3 entry %+v", e)
	}
	if e := use.Entries[1]; e.Skipped == "" || !strings.Contains(e.Skipped, "pd-ssd") || s.Backends[1].Options["latency"] != "" {
		t.Errorf("pd-ssd entry %+v, options %v", e, s.Backends[1].Options)
	}
	if e := use.Entries[2]; len(e.Declined) != 0 || len(e.Took) != 2 {
		t.Errorf("an entry invalid on its own: %+v", e)
	}
}
