// Package httpapp puts any HTTP app a user can start with a command under load: the app keeps its
// data in the backend's directory, persistlab starts it per cell on a loopback port it chose,
// waits until it answers, and drives it with its own load driver (k6's closed and open loops).
package httpapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/internal/tools"
	"persistlab/measure"
	"persistlab/scenario"
	"persistlab/workload"
	"persistlab/workload/httpload"
)

// Name is the workload's name in scenarios.
const Name = "http"

// Params are the load's (httpload's declarations), and how the app is started, found ready and
// asked what it acknowledged.
var Params = append(loadParams(),
	scenario.Param{Name: "ready", Kind: scenario.KindString, Default: "/", Help: "a path polled with GET until it answers below 500: then the app is ready"},
	scenario.Param{Name: "ready_timeout", Kind: scenario.KindDuration, Default: "60s", Min: 0.1, Max: 3600, Help: "how long the app may take to become ready"},
	scenario.Param{Name: "prepare_timeout", Kind: scenario.KindDuration, Default: "10m", Min: 1, Max: 86400, Help: "how long prepare may run: then it is killed with everything it started, and the start fails"},
	scenario.Param{Name: "k6_script", Kind: scenario.KindString, Default: "", Help: "your own k6 script, run by the real k6 with the app's URL in __ENV." + URLVariable + " (a relative path is the scenario file's, like " + ScenarioDirPlaceholder + "/test.js; for a built-in scenario the working directory's); persistlab's vus and duration replace the script's"},
	scenario.Param{Name: "sqlite", Kind: scenario.KindString, Default: "", Help: "the SQLite file the app keeps in {dir}, by name (fixed in the scenario): backends that replicate one database (Litestream) replicate it"},
	scenario.Param{Name: "ack", Kind: scenario.KindString, Default: "", Help: "the JSON field of a 200 answer that carries a count or id growing with every write the app acknowledged (crash runs: what a recovery lost)"},
	scenario.Param{Name: "recover", Kind: scenario.KindString, Default: "", Help: "a path answering GET with the highest persisted count, in the ack field (crash runs)"},
)

// loadParams are httpload's declarations of the load, with what a list of requests or a k6
// script changes in them.
func loadParams() []scenario.Param {
	var out []scenario.Param
	for _, p := range httpload.Params {
		switch p.Name {
		case "method", "path":
			p.Help += " (with a requests list, each entry has its own)"
		case "rate":
			p.Help += "; with a k6_script, iterations of its default function started per second (k6's constant-arrival-rate, vus its VUs)"
		}
		out = append(out, p)
	}
	return out
}

// Metrics are the load's, and the k6 script's own checks.
var Metrics = append(slices.Clone(httpload.Metrics),
	workload.Metric{Name: "checks_failed", Unit: "count", Help: "check() calls of the k6 script that failed (k6_script only)"},
	workload.Metric{Name: "checks_passed", Unit: "count", Help: "check() calls of the k6 script that passed (k6_script only)"},
	workload.Metric{Name: "dropped", Unit: "count", Help: "iterations k6's arrival-rate executor could not start because every VU was busy (k6_script in an open loop)"})

func init() {
	workload.Register(workload.Info{
		Name:        Name,
		Description: "any HTTP app started by a command, with its data in the backend's directory, under k6-style load",
		Params:      Params,
		Metrics:     Metrics,
		Timed:       true,
		New:         New,
		Sections: map[string]string{
			"command":  `the app's command as a list of words, like [python3, app.py, --port, "{port}"] (never a shell string)`,
			"prepare":  `a command run before every start, as a list of words, like [bin/rails, db:prepare] (never a shell string)`,
			"env":      "a mapping of environment variables to values, like {RAILS_ENV: production}",
			"requests": "a list of requests, like [{method: POST, path: /count_up, weight: 9}]",
		},
		NeedsOf: func(spec scenario.Workload) backend.Needs {
			name, _ := spec.Param("sqlite")
			return backend.Needs{SQLite: name, SQLiteParam: "sqlite"}
		},
	})
}

// Placeholders a command, its preparation and its environment may use.
const (
	DirPlaceholder  = "{dir}"  // the backend's directory, where the app keeps its data
	PortPlaceholder = "{port}" // the loopback port persistlab chose for the app
	HostPlaceholder = "{host}" // the loopback address the app must bind: 127.0.0.1
	// ExamplesPlaceholder is persistlab's examples directory (its built-in apps, like seed 000's
	// Rails counter).
	ExamplesPlaceholder = "{examples}"
	// ScenarioDirPlaceholder is the directory of the scenario file: where a user's app sits
	// beside the scenario that runs it.
	ScenarioDirPlaceholder = "{scenario_dir}"
)

const host = "127.0.0.1"

// Workload is the app's command line and environment, checked.
type Workload struct {
	command, prepare []string
	env              []string // NAME=value
	examples         string   // the examples directory, when a setting names it
	scenarioDir      string   // the scenario file's directory; "" for a built-in
	sqlite           string   // the app's SQLite file in its directory, if named
	// requests is the list of requests, if any, and requestKeys each entry's name in its
	// counters' keys.
	requests    []httpload.Request
	requestKeys []string
	// k6Version is the version of the k6 that checked the script, if any.
	k6Version string
}

var (
	_ workload.Workload     = (*Workload)(nil)
	_ workload.Inspector    = (*Workload)(nil)
	_ workload.Shared       = (*instance)(nil)
	_ workload.Acknowledged = (*instance)(nil)
	_ workload.Sharer       = (*Workload)(nil)
	_ workload.Merger       = (*Workload)(nil)
)

// New reads the sections: command (required) and prepare, argv lists (never a shell string);
// env, a mapping of variables; requests, a list of weighted requests.
func New(spec scenario.Workload) (workload.Workload, error) {
	w := &Workload{scenarioDir: spec.Dir}
	w.sqlite, _ = spec.Param("sqlite")
	for name, section := range spec.Sections {
		var err error
		switch name {
		case "command":
			w.command, err = argv("workload.command", section)
		case "prepare":
			w.prepare, err = argv("workload.prepare", section)
		case "env":
			w.env, err = environment(section)
		case "requests":
			w.requests, w.requestKeys, err = requestList(section)
		default:
			err = &scenario.FieldError{Field: "workload." + name, Value: fmt.Sprint(section),
				Allowed: "command, prepare (argv lists), env (a mapping), requests (a list of requests), or a parameter: " + paramNames()}
		}
		if err != nil {
			return nil, err
		}
	}
	if err := w.checkRequestParams(spec.Params); err != nil {
		return nil, err
	}
	if uses := func(args []string) bool {
		return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, ExamplesPlaceholder) })
	}; uses(w.command) || uses(w.prepare) || uses(w.env) {
		var err error
		if w.examples, err = tools.FindDir("examples"); err != nil {
			return nil, &scenario.FieldError{Field: "workload.command", Value: ExamplesPlaceholder, Allowed: "a persistlab checkout's examples directory: " + err.Error()}
		}
		for _, args := range [][]string{w.command, w.prepare, w.env} {
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], ExamplesPlaceholder, w.examples)
			}
		}
	}
	if err := w.fillScenarioDir(); err != nil {
		return nil, err
	}
	if len(w.command) == 0 {
		return nil, &scenario.FieldError{Field: "workload.command", Value: "", Allowed: "the app's command as a list, like [python3, \"{scenario_dir}/app.py\", --port, \"{port}\", --db, \"{dir}/app.db\"]"}
	}
	if !slices.ContainsFunc(w.command, func(a string) bool { return strings.Contains(a, PortPlaceholder) }) &&
		!slices.ContainsFunc(w.env, func(kv string) bool { return strings.Contains(kv, PortPlaceholder) }) {
		return nil, &scenario.FieldError{Field: "workload.command", Value: strings.Join(w.command, " "),
			Allowed: "a command or env that gives the app its port, " + PortPlaceholder + " (persistlab picks a free loopback port per instance)"}
	}
	for _, c := range []struct {
		field string
		args  []string
	}{{"workload.command", w.command}, {"workload.prepare", w.prepare}} {
		if len(c.args) == 0 {
			continue
		}
		if err := w.checkRelativeWords(c.field, c.args); err != nil {
			return nil, err
		}
		if _, err := exec.LookPath(c.args[0]); err != nil {
			return nil, &scenario.FieldError{Field: c.field, Value: c.args[0], Allowed: "a program that is installed (" + err.Error() + ")"}
		}
	}
	return w, nil
}

// fillScenarioDir replaces {scenario_dir} in the command, its preparation and its environment.
func (w *Workload) fillScenarioDir() error {
	for _, c := range []struct {
		field string
		args  []string
	}{{"workload.command", w.command}, {"workload.prepare", w.prepare}, {"workload.env", w.env}} {
		for i, a := range c.args {
			if !strings.Contains(a, ScenarioDirPlaceholder) {
				continue
			}
			if w.scenarioDir == "" {
				return &scenario.FieldError{Field: c.field, Value: a, Allowed: ScenarioDirPlaceholder + " only in a scenario read from a file (a built-in scenario has no directory: use " + ExamplesPlaceholder + " or an absolute path)"}
			}
			c.args[i] = strings.ReplaceAll(a, ScenarioDirPlaceholder, w.scenarioDir)
		}
	}
	return nil
}

// checkRelativeWords refuses a relative path to a file beside the scenario (or in the working
// directory) in a command: the app runs in the backend's directory, where that path names
// nothing, or something else. A program's own relative path (bin/server) is made absolute;
// an argument is not, since it may as well name a file the app keeps in {dir}.
func (w *Workload) checkRelativeWords(field string, args []string) error {
	bases := []string{w.scenarioDir}
	if wd, err := os.Getwd(); err == nil && wd != w.scenarioDir {
		bases = append(bases, wd)
	}
	for i, a := range args {
		if a == "" || filepath.IsAbs(a) || strings.HasPrefix(a, "-") || strings.ContainsAny(a, "={}") || (i > 0 && args[i-1] == "-m") {
			continue // a flag, a placeholder, or a module name (python3 -m NAME)
		}
		if i == 0 && !strings.Contains(a, "/") {
			continue // a program found on PATH
		}
		for _, base := range bases {
			if base == "" {
				continue
			}
			p := filepath.Join(base, a)
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				continue // a directory may as well be one the app makes in {dir}
			}
			if i == 0 {
				args[0] = p
				break
			}
			fix := ScenarioDirPlaceholder + "/" + a
			if base != w.scenarioDir {
				fix = p
			}
			return &scenario.FieldError{Field: fmt.Sprintf("%s[%d]", field, i), Value: a,
				Allowed: fmt.Sprintf("a path the app can open: it runs in the backend's directory (%s), where %s is not %s; write %s for that file, or %s/%s for one the app keeps with its data",
					DirPlaceholder, a, p, fix, DirPlaceholder, a)}
		}
	}
	return nil
}

// argv reads a list of strings; a bare string is refused: no shell ever splits or expands it.
func argv(field string, section any) ([]string, error) {
	list, ok := section.([]any)
	if !ok || len(list) == 0 {
		return nil, &scenario.FieldError{Field: field, Value: fmt.Sprint(section), Allowed: "a non-empty list of arguments, like [python3, app.py] (never a shell string)"}
	}
	out := make([]string, len(list))
	for i, item := range list {
		switch v := item.(type) {
		case string, int, float64, bool:
			out[i] = fmt.Sprint(v)
		default:
			return nil, &scenario.FieldError{Field: fmt.Sprintf("%s[%d]", field, i), Value: fmt.Sprint(item), Allowed: "a word: text or a number"}
		}
		if strings.ContainsAny(out[i], "\x00\n\r") {
			return nil, &scenario.FieldError{Field: fmt.Sprintf("%s[%d]", field, i), Value: out[i], Allowed: "one line"}
		}
	}
	return out, nil
}

// environment reads a mapping of variable names to values.
func environment(section any) ([]string, error) {
	m, ok := section.(map[string]any)
	if !ok {
		return nil, &scenario.FieldError{Field: "workload.env", Value: fmt.Sprint(section), Allowed: "a mapping of variables to values, like {RAILS_ENV: production}"}
	}
	var out []string
	for k, v := range m {
		value := fmt.Sprint(v)
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsAny(value, "\x00") {
			return nil, &scenario.FieldError{Field: "workload.env." + k, Value: value, Allowed: "a variable name without '=' and a value without NUL"}
		}
		out = append(out, k+"="+value)
	}
	slices.Sort(out)
	return out, nil
}

func paramNames() string {
	var names []string
	for _, p := range Params {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// Bounds of a list of requests.
const (
	maxRequests = 100
	maxWeight   = 1_000_000
	maxBody     = 64 << 10
	maxName     = 100
)

// requestList reads the requests section: 1 to maxRequests entries, each a mapping of method
// (default GET), path (required), body, headers, weight (default 1) and name (default "METHOD
// path"; unique). It returns the entries and their names as they go into counters' keys.
func requestList(section any) ([]httpload.Request, []string, error) {
	const field = "workload.requests"
	list, ok := section.([]any)
	if !ok || len(list) == 0 || len(list) > maxRequests {
		return nil, nil, &scenario.FieldError{Field: field, Value: fmt.Sprint(section),
			Allowed: fmt.Sprintf("a list of 1 to %d requests, like [{method: POST, path: /count_up, weight: 9}, {path: /count}]", maxRequests)}
	}
	reqs, keys := make([]httpload.Request, len(list)), make([]string, len(list))
	names, keyOwner := map[string]int{}, map[string]int{}
	for i, item := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		r, err := requestEntry(at, item)
		if err != nil {
			return nil, nil, err
		}
		if r.Name == "" {
			r.Name = r.Method + " " + r.Path
		}
		key := metricKey(r.Name)
		switch j, dup := names[r.Name]; {
		case dup:
			return nil, nil, &scenario.FieldError{Field: at + ".name", Value: r.Name, Allowed: fmt.Sprintf("a name no other request has (%s[%d] has it; a name defaults to \"METHOD path\")", field, j)}
		case key == "":
			return nil, nil, &scenario.FieldError{Field: at + ".name", Value: r.Name, Allowed: "a name with an ASCII letter or digit (its counters are req_NAME_ok and req_NAME_errors)"}
		}
		if j, dup := keyOwner[key]; dup {
			return nil, nil, &scenario.FieldError{Field: at + ".name", Value: r.Name,
				Allowed: fmt.Sprintf("a name whose letters and digits differ from %s[%d]'s (%q): both would count in req_%s_ok", field, j, reqs[j].Name, key)}
		}
		names[r.Name], keyOwner[key] = i, i
		reqs[i], keys[i] = r, key
	}
	return reqs, keys, nil
}

var methodToken = regexp.MustCompile(`^[A-Z]{1,20}$`)

// requestEntry reads one entry of the requests section; at names it (workload.requests[2]).
func requestEntry(at string, item any) (httpload.Request, error) {
	r := httpload.Request{Method: "GET", Weight: 1}
	entry, ok := item.(map[string]any)
	if !ok {
		return r, &scenario.FieldError{Field: at, Value: fmt.Sprint(item), Allowed: "a mapping of method, path and optionally body, headers, weight and name, like {method: POST, path: /count_up, weight: 9}"}
	}
	fail := func(key string, value any, allowed string) error {
		return &scenario.FieldError{Field: at + "." + key, Value: fmt.Sprint(value), Allowed: allowed}
	}
	for _, key := range slices.Sorted(maps.Keys(entry)) { // the first error is the same in every run
		v := entry[key]
		text, isText := v.(string)
		switch key {
		case "method":
			if !isText || !methodToken.MatchString(text) || text == "CONNECT" {
				return r, fail(key, v, "an HTTP method in capital letters, like GET, POST or PUT (not CONNECT)")
			}
			r.Method = text
		case "path":
			if !isText || !appPath(text) {
				return r, fail(key, v, pathAllowed)
			}
			r.Path = text
		case "body":
			if !isText || len(text) > maxBody {
				return r, fail(key, v, "text of at most 64 KiB (persistlab sets Content-Length from it)")
			}
			r.Body = []byte(text)
		case "headers":
			headers, ok := v.(map[string]any)
			if !ok {
				return r, fail(key, v, "a mapping of header names to values, like {Content-Type: application/json}")
			}
			for _, name := range slices.Sorted(maps.Keys(headers)) {
				value, ok := scalarText(headers[name])
				switch {
				case !httpload.IsToken(name):
					return r, fail(key+"."+name, headers[name], "a header name that is an HTTP token: letters, digits and !#$%&'*+-.^_`|~")
				case httpload.ReservedHeader(name):
					return r, fail(key+"."+name, headers[name], "none: persistlab sets Host, Content-Length, Transfer-Encoding and Connection itself, and sends no Expect or Upgrade (its client reads one final answer per request)")
				case !ok || strings.ContainsAny(value, "\r\n\x00"):
					return r, fail(key+"."+name, headers[name], "a value: text or a number, without CR, LF or NUL")
				}
				r.Headers = append(r.Headers, [2]string{name, value})
			}
		case "weight":
			n, ok := wholeNumber(v)
			if !ok || n < 1 || n > maxWeight {
				return r, fail(key, v, "a whole number from 1 to 1000000: the entry's share of the requests against the others' weights")
			}
			r.Weight = int(n)
		case "name":
			if !isText || text == "" || len(text) > maxName || strings.ContainsFunc(text, unicode.IsControl) {
				return r, fail(key, v, fmt.Sprintf("text of 1 to %d characters on one line, unique among the requests", maxName))
			}
			r.Name = text
		default:
			return r, fail(key, v, "none: an entry has method, path, body, headers, weight and name")
		}
	}
	if r.Path == "" {
		return r, fail("path", "", pathAllowed+" (every request names its path)")
	}
	return r, nil
}

// scalarText is a YAML or JSON scalar as the text it was written as: a header's value.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// wholeNumber is a YAML integer or a JSON number without a fraction.
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		return int64(min(x, math.MaxInt64)), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

// metricKey is a request's name as it goes into counters' keys: ASCII letters (lowercased) and
// digits, every run of anything else one underscore, none at either end ("POST /count_up":
// post_count_up).
func metricKey(name string) string {
	var b strings.Builder
	gap := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			gap = true
			continue
		}
		if gap && b.Len() > 0 {
			b.WriteByte('_')
		}
		gap = false
		b.WriteByte(c)
	}
	return b.String()
}

// checkRequestParams refuses, with a list of requests, the parameters it replaces: a method or
// path other than the default (each entry has its own), and a k6 script (it says what it
// requests).
func (w *Workload) checkRequestParams(params map[string]string) error {
	if len(w.requests) == 0 {
		return nil
	}
	for _, d := range Params {
		v, set := params[d.Name]
		switch {
		case !set:
		case (d.Name == "method" || d.Name == "path") && v != d.Default:
			return &scenario.FieldError{Field: "workload." + d.Name, Value: v, Allowed: "its default (" + d.Default + ") with a list of requests (workload.requests): each entry has its own"}
		case d.Name == "k6_script" && v != "":
			return &scenario.FieldError{Field: "workload.requests", Value: fmt.Sprintf("%d requests", len(w.requests)),
				Allowed: "no list of requests with a k6_script (" + v + "): the script says what it requests"}
		}
	}
	return nil
}

// settings are one cell's parameters, read.
type settings struct {
	vus                               int
	mode, method, path, ready         string
	k6Script                          string // absolute; "" for persistlab's own driver
	ack, recover                      string
	rate                              float64
	timeout, readyTimeout, networkRTT time.Duration
	prepareTimeout                    time.Duration
}

// read checks one cell's parameters; a relative k6_script is the scenario file's (base), or,
// for a built-in scenario, the working directory's.
func read(p workload.Params, base string) (settings, error) {
	var s settings
	for _, d := range Params { // bounds and enums first: a cell may be given values directly
		if err := d.Check("workload."+d.Name, p[d.Name]); err != nil {
			return s, err
		}
	}
	s.vus, _ = strconv.Atoi(p["vus"])
	s.mode, s.method, s.path, s.ready = p["mode"], p["method"], p["path"], p["ready"]
	s.rate, _ = strconv.ParseFloat(p["rate"], 64)
	s.timeout, _ = time.ParseDuration(p["timeout"])
	s.readyTimeout, _ = time.ParseDuration(p["ready_timeout"])
	s.prepareTimeout, _ = time.ParseDuration(p["prepare_timeout"])
	s.networkRTT, _ = time.ParseDuration(p["network_rtt"])
	s.ack, s.recover = p["ack"], p["recover"]
	if s.ack != "" && !ackField.MatchString(s.ack) {
		return s, &scenario.FieldError{Field: "workload.ack", Value: s.ack, Allowed: "a JSON field name of letters, digits and _, like count or id"}
	}
	paths := []struct{ name, path string }{{"path", s.path}, {"ready", s.ready}}
	if s.recover != "" {
		paths = append(paths, struct{ name, path string }{"recover", s.recover})
	}
	for _, f := range paths {
		if !appPath(f.path) {
			return s, &scenario.FieldError{Field: "workload." + f.name, Value: f.path, Allowed: pathAllowed}
		}
	}
	if s.k6Script = p["k6_script"]; strings.ContainsFunc(s.k6Script, func(r rune) bool { return r == '%' || unicode.IsControl(r) }) {
		// k6 reads a path as a URL: it decodes %XX (the file it ran would not be the one
		// persistlab checked) and refuses control characters.
		return s, &scenario.FieldError{Field: "workload.k6_script", Value: s.k6Script, Allowed: "a path without '%' or control characters (k6 reads a path as a URL)"}
	}
	if s.k6Script != "" {
		if strings.Contains(s.k6Script, ExamplesPlaceholder) {
			examples, err := tools.FindDir("examples")
			if err != nil {
				return s, &scenario.FieldError{Field: "workload.k6_script", Value: s.k6Script, Allowed: "a persistlab checkout's examples directory: " + err.Error()}
			}
			s.k6Script = strings.ReplaceAll(s.k6Script, ExamplesPlaceholder, examples)
		}
		if strings.Contains(s.k6Script, ScenarioDirPlaceholder) {
			if base == "" {
				return s, &scenario.FieldError{Field: "workload.k6_script", Value: s.k6Script, Allowed: ScenarioDirPlaceholder + " only in a scenario read from a file (a built-in scenario has no directory)"}
			}
			s.k6Script = strings.ReplaceAll(s.k6Script, ScenarioDirPlaceholder, base)
		}
		if !filepath.IsAbs(s.k6Script) && base != "" {
			s.k6Script = filepath.Join(base, s.k6Script)
		}
		abs, err := filepath.Abs(s.k6Script)
		if err != nil {
			return s, &scenario.FieldError{Field: "workload.k6_script", Value: s.k6Script, Allowed: "a path: " + err.Error()}
		}
		s.k6Script = abs
		for _, d := range Params { // the script says what it requests; persistlab gives it vus, duration and a rate
			if (d.Name == "method" || d.Name == "path" || d.Name == "network_rtt") && p[d.Name] != d.Default {
				return s, &scenario.FieldError{Field: "workload." + d.Name, Value: p[d.Name], Allowed: "its default (" + d.Default + ") with a k6_script: the script says what it requests, persistlab gives it vus, duration and, in an open loop, a rate"}
			}
		}
	}
	if name := p["sqlite"]; name != "" && (name != filepath.Base(name) || name == "." || name == ".." || strings.ContainsAny(name, "{}")) {
		return s, &scenario.FieldError{Field: "workload.sqlite", Value: name, Allowed: "a file name in the backend's directory, like app.db"}
	}
	return s, httpload.CheckRate(s.mode, s.rate, p["rate"])
}

var ackField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// appPath says whether a path stays on the app: it follows the app's own loopback address, and
// nothing may turn it into another host.
func appPath(path string) bool {
	return strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "//") && !strings.ContainsAny(path, " \t\r\n\x00#@\\")
}

const pathAllowed = "a path on the app, starting with a single /, without spaces, '#', '@' or '\\'"

// CheckCrash implements workload.CrashChecker: a crash run needs the app to state what it
// acknowledged (ack) and what persisted (recover), and persistlab's own driver, which reads every
// answer.
func (w *Workload) CheckCrash(p workload.Params) error {
	s, err := read(p, w.scenarioDir)
	switch {
	case err != nil:
		return err
	case s.ack == "" || s.recover == "":
		return &scenario.FieldError{Field: "workload.ack", Value: s.ack, Allowed: "a JSON field and a recover path for crash runs: the app must state what it acknowledged and what persisted (without them a crash run cannot count what was lost)"}
	case s.k6Script != "":
		return &scenario.FieldError{Field: "workload.k6_script", Value: p["k6_script"], Allowed: "none in crash runs: persistlab's driver reads every acknowledgement"}
	}
	return nil
}

// Inspect implements workload.Inspector: whether the app's SQLite file (sqlite) exists, and
// SQLite's integrity_check of it; what count it holds only the app can say (recover).
func (w *Workload) Inspect(dir, file string) workload.Survivor {
	if file == "" {
		if w.sqlite == "" {
			return workload.Survivor{} // no SQLite file named: nothing to check (Integrity "")
		}
		file = filepath.Join(dir, w.sqlite)
	}
	return integrity(file)
}

// k6MinDuration is the shortest --duration k6 runs ("the duration must be at least 1s").
const k6MinDuration = time.Second

// CheckDurations implements workload.DurationChecker: with a k6 script, the measured time and
// any warm-up (each a k6 run of its own) must be at least k6's shortest.
func (w *Workload) CheckDurations(p workload.Params, duration, warmup time.Duration) error {
	if p["k6_script"] == "" {
		return nil
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"duration", duration}, {"warmup", warmup}} {
		if d.v > 0 && d.v < k6MinDuration {
			return &scenario.FieldError{Field: d.field, Value: d.v.String(), Allowed: "at least " + k6MinDuration.String() + " with a k6_script (or no warm-up): k6 refuses a shorter run"}
		}
	}
	return nil
}

// CheckShare implements workload.Sharer: every instance drives at least one VU.
func (w *Workload) CheckShare(p workload.Params, n int) error {
	s, err := read(p, w.scenarioDir)
	if err != nil {
		return err
	}
	return httpload.CheckVUsPerInstance(s.vus, p["vus"], n)
}

// MergeShares implements workload.Merger, as every workload of httpload joins its instances' figures.
func (w *Workload) MergeShares(merged *workload.Result, parts []*workload.Result) {
	httpload.JoinInstanceFigures(merged, parts)
}

// Check implements workload.Workload: the parameters, and a k6 script as k6 reads it.
func (w *Workload) Check(ctx context.Context, p workload.Params) error {
	if err := w.checkRequestParams(p); err != nil {
		return err
	}
	s, err := read(p, w.scenarioDir)
	if err != nil || s.k6Script == "" {
		return err
	}
	bin, err := checkScript(ctx, s.k6Script)
	if err != nil {
		return &scenario.FieldError{Field: "workload.k6_script", Value: p["k6_script"], Allowed: "a k6 script k6 can read: " + err.Error()}
	}
	if err := checkK6Options(ctx, bin, s.k6Script); err != nil {
		return &scenario.FieldError{Field: "workload.k6_script", Value: p["k6_script"], Allowed: err.Error()}
	}
	if w.k6Version == "" {
		w.k6Version = sysinfo.ProgramVersion(bin, "version")
	}
	if s.mode == httpload.ModeOpen { // the script must run under k6's arrival-rate executor too
		dir, err := os.MkdirTemp("", "persistlab-k6-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		wrapper, err := writeArrivalScript(filepath.Join(dir, "k6-arrival.js"), s.k6Script, s.rate, s.vus, time.Second)
		if err != nil {
			return err
		}
		if err := proc.RunDiscarded(proc.Command(ctx, bin, "inspect", "--execution-requirements", wrapper), 3); err != nil {
			return &scenario.FieldError{Field: "workload.k6_script", Value: p["k6_script"], Allowed: "a script with a default function for an open loop (mode open runs it under k6's constant-arrival-rate): " + proc.OutputOf(err)}
		}
	}
	return nil
}

// Versions implements workload.Workload: the app is the user's; k6's, when a script runs in it.
func (w *Workload) Versions() map[string]string {
	if w.k6Version == "" {
		return nil
	}
	return map[string]string{"k6": w.k6Version}
}

// substitute fills the placeholders of args.
func substitute(args []string, dir string, port int) []string {
	r := strings.NewReplacer(DirPlaceholder, dir, PortPlaceholder, strconv.Itoa(port), HostPlaceholder, host)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// Start runs the preparation, if any, then the app on a free loopback port in the instance, and
// waits until it answers.
func (w *Workload) Start(ctx context.Context, env workload.Env) (workload.Instance, error) {
	s, err := read(env.Params, w.scenarioDir)
	if err == nil {
		err = w.checkRequestParams(env.Params)
	}
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	environ := append(os.Environ(), substitute(w.env, env.Target.Dir, port)...)
	// In the emulated instance (Target.Wrap), on the app's CPUs (the driver has the others).
	var pin []string
	if len(env.CPUs) > 0 {
		list := make([]string, len(env.CPUs))
		for i, c := range env.CPUs {
			list[i] = strconv.Itoa(c)
		}
		pin = []string{"taskset", "-c", strings.Join(list, ",")}
	}
	// The preparation and the app in a cgroup of their own, inside the instance's: whatever they
	// start is stopped with them.
	group, noGroup := httpload.NewAppGroup(env)
	started := false
	defer func() {
		if !started {
			group.Close(cgroup.GroupWait) // a failed start leaves nothing of the app
		}
	}()
	inInstance := func(args []string) []string {
		return slices.Concat(env.Target.Wrap, group.Wrap(), pin, args)
	}
	log, tag := httpload.AppLog(env.CellDir)
	if len(w.prepare) > 0 {
		args := inInstance(substitute(w.prepare, env.Target.Dir, port))
		if err := w.runPrepare(ctx, args, environ, env.Target.Dir, filepath.Join(env.CellDir, "prepare"+tag+".log"), s.prepareTimeout); err != nil {
			return nil, err
		}
	}
	child, err := proc.Start("app", log, environ, inInstance(substitute(w.command, env.Target.Dir, port))...)
	if err != nil {
		return nil, err
	}
	in := &instance{s: s, tag: tag, child: child, group: group, noGroup: noGroup, url: "http://" + net.JoinHostPort(host, strconv.Itoa(port)), port: port, log: log, cpus: len(env.CPUs), cellDir: env.CellDir,
		requests: w.requests, requestKeys: w.requestKeys}
	if s.k6Script != "" {
		if in.k6, err = tools.Find("k6"); err != nil {
			in.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if err := in.waitReady(ctx); err != nil {
		in.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	started = true
	return in, nil
}

// runPrepare runs the preparation (args, as it runs in the instance) in dir, its output appended
// to logPath, for at most timeout: then it is killed with its whole process group.
func (w *Workload) runPrepare(ctx context.Context, args, environ []string, dir, logPath string, timeout time.Duration) error {
	bounded, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	prep := proc.Command(bounded, args[0], args[1:]...)
	prep.Env, prep.Dir = environ, dir
	err := proc.RunLogged(prep, logPath, 10)
	ce, ran := errors.AsType[*proc.CommandError](err)
	if !ran {
		if err != nil {
			return fmt.Errorf("prepare (%s): %w", strings.Join(w.prepare, " "), err)
		}
		return nil
	}
	end := "nothing in " + logPath
	if ce.Output != "" {
		end = "the end of " + logPath + ":\n" + ce.Output
	}
	if ctx.Err() == nil && bounded.Err() != nil {
		return fmt.Errorf("prepare (%s) did not end within %v (prepare_timeout): it was killed with what it started; %s", strings.Join(w.prepare, " "), timeout, end)
	}
	// The command line named is the scenario's, without the instance's prefix.
	return fmt.Errorf("prepare (%s): %w; %s", strings.Join(w.prepare, " "), ce.Err, end)
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// instance is a running app.
type instance struct {
	s     settings
	child *proc.Child
	url   string
	port  int
	log   string
	cpus  int
	// cellDir holds k6's log and output; k6 is its path when the load is the user's k6 script.
	cellDir, k6 string
	// tag tells this instance's files from another's in one cell: "" for the first, "-2", ...
	tag string
	// requests is the list of requests, if any (then s.method and s.path are unused), and
	// requestKeys their names in counters' keys.
	requests    []httpload.Request
	requestKeys []string
	// group holds the app and all it starts; nil where no cgroup could be made (noGroup says why),
	// and then the app's process group alone is stopped.
	group   *cgroup.Group
	noGroup string
}

// waitReady polls the ready path until the app answers below 500. Before each poll the app's
// sockets are checked (checkSockets): every one it listens on is on loopback, and what listens on
// its port is the app. The app exiting first, or the timeout passing, fails with its last log
// lines.
func (in *instance) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(in.s.readyTimeout)
	for {
		// Before any request: what listens on the port must be the app, on loopback only.
		listening, err := checkSockets(in.port, in.processes)
		if err != nil {
			return err
		}
		if listening {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.url+in.s.ready, nil)
			if err != nil {
				return err
			}
			if resp, err := appClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode < 500 {
					return nil
				}
			}
		}
		select {
		case <-in.child.Done():
			return fmt.Errorf("the app exited before it answered GET %s; the end of %s:\n%s", in.s.ready, in.log, tailFile(in.log, 10))
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the app did not answer GET %s below 500 within %v (ready_timeout); the end of %s:\n%s", in.s.ready, in.s.readyTimeout, in.log, tailFile(in.log, 10))
		}
	}
}

// appClient asks the app itself: a redirect is an answer, never followed elsewhere.
var appClient = &http.Client{
	Timeout:       2 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// tailFile is the last n lines of a log, read through a limit.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	const limit = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		f.Seek(st.Size()-limit, 0)
	}
	buf := make([]byte, limit)
	k, _ := f.Read(buf)
	return lastLines(string(buf[:k]), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (in *instance) config(d time.Duration, share workload.Share) httpload.Config {
	vus, rate := in.load(share)
	return httpload.Config{URL: in.url + in.s.path, Method: in.s.method, Mode: in.s.mode, VUs: vus, Rate: rate,
		Duration: d, Timeout: in.s.timeout, NetworkRTT: in.s.networkRTT, AckField: in.s.ack, Requests: in.requests}
}

// load is this instance's share of the VUs and of the rate, when several instances share a
// backend.
func (in *instance) load(share workload.Share) (vus int, rate float64) {
	return httpload.Split(in.s.vus, in.s.rate, share)
}

// DriveAcked implements workload.Acknowledged: persistlab's driver with every acknowledged count
// (the ack field of each 200 answer) recorded, until d passes or ctx ends (a crash run's kill).
func (in *instance) DriveAcked(ctx context.Context, d time.Duration) (*workload.Result, *measure.AckLog, error) {
	if in.s.ack == "" {
		return nil, nil, errors.New("workload.ack: unset: the app states no acknowledged count")
	}
	if _, err := checkSockets(in.port, in.processes); err != nil {
		return nil, nil, err
	}
	c := in.config(d, workload.Share{})
	c.RecordAcks = true
	r, err := httpload.Run(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	out := in.result(r)
	httpload.AddGroupFact(out, in.noGroup)
	return out, measure.NewAckLog(r.Acks), nil
}

// Kill implements workload.Acknowledged: SIGKILL to every process of the app, without waiting.
func (in *instance) Kill() {
	in.group.Kill()
	in.child.SignalKill()
}

// Exited implements workload.Acknowledged.
func (in *instance) Exited() <-chan struct{} { return in.child.Done() }

// Count implements workload.Acknowledged: the ack field of the app's answer to GET recover.
func (in *instance) Count(ctx context.Context) (int64, error) {
	if in.s.recover == "" {
		return 0, errors.New("workload.recover: unset: the app states no persisted count")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.url+in.s.recover, nil)
	if err != nil {
		return 0, err
	}
	resp, err := appClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: HTTP %d: %.200s", in.s.recover, resp.StatusCode, body)
	}
	n, ok := httpload.FieldValue(body, []byte(`"`+in.s.ack+`":`))
	if !ok {
		return 0, fmt.Errorf("GET %s: no %q number in the answer: %.200s", in.s.recover, in.s.ack, body)
	}
	return n, nil
}

// Drive runs the load for d.
func (in *instance) Drive(ctx context.Context, d time.Duration) (*workload.Result, error) {
	return in.DriveShare(ctx, d, workload.Share{})
}

// DriveShare implements workload.Shared: this instance's share of the VUs and of the rate, while
// other instances of the app on other mounts of one backend take theirs.
func (in *instance) DriveShare(ctx context.Context, d time.Duration, share workload.Share) (*workload.Result, error) {
	if in.child.Exited() {
		return nil, fmt.Errorf("the app exited before the load began; the end of %s:\n%s", in.log, tailFile(in.log, 10))
	}
	// Once more before the load: a socket the app opened after it was ready.
	if _, err := checkSockets(in.port, in.processes); err != nil {
		return nil, err
	}
	cpuBefore, _ := proc.CPUTime(in.child.Pid())
	var out *workload.Result
	var elapsed time.Duration
	if in.k6 != "" {
		vus, rate := in.load(share)
		r, err := in.driveK6(ctx, d, vus, rate)
		if err != nil {
			return nil, err
		}
		out, elapsed = r, r.Elapsed
	} else {
		r, err := httpload.Run(ctx, in.config(d, share))
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		out, elapsed = in.result(r), r.Elapsed
	}
	cpuAfter, _ := proc.CPUTime(in.child.Pid())
	if in.child.Exited() {
		return nil, fmt.Errorf("the app exited during the load; the end of %s:\n%s", in.log, tailFile(in.log, 10))
	}
	out.Metrics["app_cpu_s"] = (cpuAfter - cpuBefore).Seconds()
	out.Metrics["app_cpu_util"] = httpload.CPUUtil(cpuAfter-cpuBefore, elapsed, in.cpus)
	httpload.AddGroupFact(out, in.noGroup)
	return out, nil
}

// result turns persistlab's driver's measurements into a workload result; an acknowledged count
// only where the app states one; with a list of requests, each entry's 200 answers and errors
// as counters req_NAME_ok and req_NAME_errors.
func (in *instance) result(r *httpload.Result) *workload.Result {
	out := httpload.ResultOf(r, in.s.mode == httpload.ModeOpen)
	if in.s.ack == "" {
		delete(out.Metrics, "max_acked")
	}
	for i, c := range r.ByRequest {
		out.Counters["req_"+in.requestKeys[i]+"_ok"] = c.OK
		out.Counters["req_"+in.requestKeys[i]+"_errors"] = c.Errors
	}
	return out
}

// Stop stops the app by its process id and group (SIGTERM, then SIGKILL after 10 s), then
// whatever else of it is left in its cgroup (SIGKILL), and removes the cgroup. One that does not
// empty is left for clean, a *cgroup.StuckError.
func (in *instance) Stop(ctx context.Context) error {
	err := in.child.Stop(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, in.group.Close(cgroup.GroupWait))
}
