package counter

import (
	"strings"
	"testing"
)

// A pragma SQLite would ignore (an unknown name, a value it does not know) is refused, naming
// what is allowed: the run would otherwise measure the default without a word.
func TestPragmasAreSQLitesOwn(t *testing.T) {
	for _, bad := range []struct{ in, want string }{
		{"journal_mode=BANANA", "WAL"},
		{"synchronus=FULL", "synchronous"},
		{"busy_timeout=soon", "whole number"},
		{"foreign_keys=maybe", "ON"},
	} {
		if _, err := ParsePragma(bad.in); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParsePragma(%q): %v", bad.in, err)
		}
	}
	for _, good := range []string{"journal_mode=wal", "synchronous=2", "busy_timeout=5000", "mmap_size=0", "cache_size=-2000", "foreign_keys=ON"} {
		if _, err := ParsePragma(good); err != nil {
			t.Errorf("ParsePragma(%q): %v", good, err)
		}
	}
	for _, p := range RailsPragmas { // the defaults pass their own check
		if _, err := ParsePragma(p.Name + "=" + p.Value); err != nil {
			t.Errorf("Rails default %v: %v", p, err)
		}
	}
}
