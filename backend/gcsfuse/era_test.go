package gcsfuse

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/param"
)

// v2.4's flags differ by version: v3.2.8 refuses the flags of later releases and still has
// --precondition-errors; the negative TTL follows the metadata TTL as v2.4's did, and an option
// that sets the stat cache's size is not overridden.
func TestV24FlagsFollowTheVersionAndTheOptions(t *testing.T) {
	current := v24Flags("3.11.4", settings{})
	var s settings
	if err := param.Decode(Options, map[string]string{"metadata_cache_ttl_secs": "3600", "stat_cache_max_size_mb": "64"}, &s); err != nil {
		t.Fatal(err)
	}
	oldest := v24Flags(OldestVersion, s)
	for _, f := range []string{"--enable-streaming-writes=false", "--file-cache-enable-parallel-downloads=false", "--enable-new-reader=false", "--disable-autoconfig=true"} {
		if !slices.Contains(current, f) || !slices.Contains(oldest, f) {
			t.Errorf("%s missing: current %v, oldest %v", f, current, oldest)
		}
	}
	if !slices.Contains(current, "--metadata-cache-negative-ttl-secs=60") || !slices.Contains(current, "--stat-cache-max-size-mb=32") {
		t.Errorf("current, no options: %v", current)
	}
	if !slices.Contains(oldest, "--metadata-cache-negative-ttl-secs=3600") || slices.ContainsFunc(oldest, func(f string) bool { return strings.HasPrefix(f, "--stat-cache-max-size-mb") }) {
		t.Errorf("oldest, ttl 3600 and a stat cache size: %v", oldest)
	}
	if !slices.Contains(oldest, "--precondition-errors=false") || slices.Contains(current, "--precondition-errors=false") {
		t.Errorf("--precondition-errors: oldest %v, current %v", oldest, current)
	}
	for _, later := range []string{"--enable-type-cache-deprecation=false", "--enable-metadata-prefetch=false", "--enable-http-dns-cache=false"} {
		if slices.Contains(oldest, later) || !slices.Contains(current, later) {
			t.Errorf("%s: oldest %v, current %v", later, oldest, current)
		}
	}
}

func TestVersionNumber(t *testing.T) {
	for line, want := range map[string]string{
		"gcsfuse version 3.11.4 (Go version go1.26.8)": "3.11.4",
		"gcsfuse version 3.2.8 (Go version go1.26.8)":  "3.2.8",
		"gcsfuse version unknown":                      "",
		"":                                             "",
		"something else 3.2.8":                         "",
	} {
		if got := versionNumber(line); got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

// Bad values of version and defaults, and a flag the era sets given again in flags, are refused
// naming the option, the value and what is allowed.
func TestEraAndVersionOptionsAreChecked(t *testing.T) {
	for _, c := range []struct {
		options map[string]string
		want    []string
	}{
		{map[string]string{"version": "2.4.0"}, []string{"option version", `"2.4.0"`, OldestVersion}},
		{map[string]string{"defaults": "v2"}, []string{"defaults: ", `"v2"`, "current", EraV24}},
		{map[string]string{"defaults": EraV24, "flags": "--enable-streaming-writes=true"}, []string{"option flags", "--enable-streaming-writes", "defaults: current"}},
	} {
		_, err := New(backend.Env{WorkDir: t.TempDir(), Options: c.options})
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want %q in it", c.options, err, w)
			}
		}
	}
}

// With v2.4's defaults a new file's writes are staged on the instance's disk until it is closed,
// as v2.4 did; with the current defaults they stream to the bucket and nothing is staged. Both
// gcsfuse versions the backend runs take the era's flags (a refused flag would fail the mount).
func TestV24DefaultsStageWritesOnEachVersion(t *testing.T) {
	for _, c := range []struct {
		options map[string]string
		staged  bool
	}{
		{map[string]string{}, false},
		{map[string]string{"defaults": EraV24}, true},
		{map[string]string{"defaults": EraV24, "version": OldestVersion}, true},
		{map[string]string{"version": OldestVersion}, false},
	} {
		c.options["model"] = "no-delay"
		b, err := New(backend.Env{WorkDir: t.TempDir(), Options: c.options})
		if err != nil {
			t.Fatal(err)
		}
		g := b.(*Backend)
		if want := c.options["version"]; want != "" && versionNumber(g.version) != want {
			t.Errorf("%v: runs %q", c.options, g.version)
		}
		target, err := b.Start(context.Background())
		if err != nil {
			b.Stop(context.Background())
			t.Fatalf("%v: %v", c.options, err)
		}
		f, err := os.Create(filepath.Join(target.Dir, "new.bin"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
		// gcsfuse unlinks a staging file once it has it open: it is seen among gcsfuse's open files.
		if staged := stagingFiles(t, g.current()); (staged > 0) != c.staged {
			t.Errorf("%v: gcsfuse holds %d file(s) of --temp-dir open while the new file is, want staged %v", c.options, staged, c.staged)
		}
		if err := f.Close(); err != nil {
			t.Errorf("%v: close: %v", c.options, err)
		}
		if got, err := os.ReadFile(filepath.Join(target.Dir, "new.bin")); err != nil || len(got) != 1<<20 {
			t.Errorf("%v: read back %d bytes (%v)", c.options, len(got), err)
		}
		if err := b.Stop(context.Background()); err != nil {
			t.Errorf("%v: stop: %v", c.options, err)
		}
	}
}

// stagingFiles counts the files in the instance's --temp-dir its gcsfuse holds open.
func stagingFiles(t *testing.T, in *instance) int {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", in.child.Pid())
	entries, err := os.ReadDir(fds)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && strings.HasPrefix(target, in.staging+"/") {
			n++
		}
	}
	return n
}
