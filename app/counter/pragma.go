package counter

import (
	"fmt"
	"regexp"
	"strings"
)

// Pragma is one SQLite PRAGMA applied to every connection when it opens.
type Pragma struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// RailsPragmas are the connection settings a Rails 8 app uses by default: the SQLite3 adapter's
// DEFAULT_PRAGMAS (activerecord 8.0, sqlite3_adapter.rb) plus the 5000 ms `timeout` from the
// database.yml that `rails new` writes. busy_timeout comes first so the others can wait for a lock.
var RailsPragmas = []Pragma{
	{"busy_timeout", "5000"},
	{"foreign_keys", "ON"},
	{"journal_mode", "WAL"},
	{"synchronous", "NORMAL"},
	{"mmap_size", "134217728"},
	{"journal_size_limit", "67108864"},
	{"cache_size", "2000"},
}

var (
	pragmaName  = regexp.MustCompile(`^[a-z_]+$`)
	pragmaValue = regexp.MustCompile(`^-?[A-Za-z0-9_]+$`)
)

// ParsePragma reads "name=value" as given on the command line.
func ParsePragma(s string) (Pragma, error) {
	name, value, ok := strings.Cut(s, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	value = strings.TrimSpace(value)
	if !ok || !pragmaName.MatchString(name) || !pragmaValue.MatchString(value) {
		return Pragma{}, fmt.Errorf("pragma %q: want name=value, name of a-z and _, value a word or integer (e.g. journal_mode=DELETE)", s)
	}
	return Pragma{Name: name, Value: value}, nil
}

// WithOverrides returns base with each override replacing the pragma of the same name in place,
// or appended when base has none, so defaults keep their order.
func WithOverrides(base []Pragma, overrides []Pragma) []Pragma {
	out := append([]Pragma(nil), base...)
next:
	for _, o := range overrides {
		for i := range out {
			if out[i].Name == o.Name {
				out[i] = o
				continue next
			}
		}
		out = append(out, o)
	}
	return out
}
