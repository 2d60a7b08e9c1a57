package counter

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
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

// pragmaValues are the pragmas a scenario may set and what each takes (SQLite's pragma.html):
// SQLite ignores an unknown pragma and, for some, a value it does not know, so a typo would run
// silently with the default. intValue marks a whole number.
var pragmaValues = map[string][]string{
	"journal_mode":         {"DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL", "OFF"},
	"synchronous":          {"0", "1", "2", "3", "OFF", "NORMAL", "FULL", "EXTRA"},
	"locking_mode":         {"NORMAL", "EXCLUSIVE"},
	"temp_store":           {"0", "1", "2", "DEFAULT", "FILE", "MEMORY"},
	"auto_vacuum":          {"0", "1", "2", "NONE", "FULL", "INCREMENTAL"},
	"foreign_keys":         boolValues,
	"checkpoint_fullfsync": boolValues,
	"fullfsync":            boolValues,
	"cell_size_check":      boolValues,
	"busy_timeout":         {intValue},
	"cache_size":           {intValue},
	"mmap_size":            {intValue},
	"journal_size_limit":   {intValue},
	"wal_autocheckpoint":   {intValue},
	"page_size":            {intValue},
	"cache_spill":          {intValue},
}

var boolValues = []string{"0", "1", "ON", "OFF", "TRUE", "FALSE", "YES", "NO"}

const intValue = "a whole number"

var intPattern = regexp.MustCompile(`^-?[0-9]{1,18}$`)

// ParsePragma reads "name=value" as given on the command line.
func ParsePragma(s string) (Pragma, error) {
	name, value, ok := strings.Cut(s, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	value = strings.TrimSpace(value)
	if !ok || !pragmaName.MatchString(name) || !pragmaValue.MatchString(value) {
		return Pragma{}, fmt.Errorf("pragma %q: want name=value, name of a-z and _, value a word or integer (e.g. journal_mode=DELETE)", s)
	}
	allowed, known := pragmaValues[name]
	if !known {
		names := make([]string, 0, len(pragmaValues))
		for n := range pragmaValues {
			names = append(names, n)
		}
		sort.Strings(names)
		return Pragma{}, fmt.Errorf("pragma %q: want one of %s", s, strings.Join(names, ", "))
	}
	if allowed[0] == intValue {
		if !intPattern.MatchString(value) {
			return Pragma{}, fmt.Errorf("pragma %q: want %s for %s", s, intValue, name)
		}
	} else if !slices.Contains(allowed, strings.ToUpper(value)) {
		return Pragma{}, fmt.Errorf("pragma %q: want %s one of %s", s, name, strings.Join(allowed, ", "))
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
