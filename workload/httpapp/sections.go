package httpapp

import (
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"persistlab/internal/tools"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
	"persistlab/workload/httpload"
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
			w.env, err = environment("workload.env", section)
		case "mysql_env":
			w.mysqlEnv, err = environment("workload.mysql_env", section)
		case "requests":
			w.requests, w.requestKeys, err = requestList(section)
		default:
			err = &param.FieldError{Field: "workload." + name, Value: fmt.Sprint(section),
				Allowed: "command, prepare (argv lists), env, mysql_env (mappings), requests (a list of requests), or a parameter: " + paramNames()}
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
	}; uses(w.command) || uses(w.prepare) || uses(w.env) || uses(w.mysqlEnv) {
		var err error
		if w.examples, err = tools.FindDir("examples"); err != nil {
			return nil, &param.FieldError{Field: "workload.command", Value: ExamplesPlaceholder, Allowed: "a persistlab checkout's examples directory: " + err.Error()}
		}
		for _, args := range [][]string{w.command, w.prepare, w.env, w.mysqlEnv} {
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], ExamplesPlaceholder, w.examples)
			}
		}
	}
	if err := w.fillScenarioDir(); err != nil {
		return nil, err
	}
	if err := w.checkServerPlaceholders(); err != nil {
		return nil, err
	}
	if len(w.command) == 0 {
		return nil, &param.FieldError{Field: "workload.command", Value: "", Allowed: "the app's command as a list, like [python3, \"{scenario_dir}/app.py\", --port, \"{port}\", --db, \"{dir}/app.db\"]"}
	}
	if !slices.ContainsFunc(w.command, func(a string) bool { return strings.Contains(a, PortPlaceholder) }) &&
		!slices.ContainsFunc(w.env, func(kv string) bool { return strings.Contains(kv, PortPlaceholder) }) {
		return nil, &param.FieldError{Field: "workload.command", Value: strings.Join(w.command, " "),
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
			return nil, &param.FieldError{Field: c.field, Value: c.args[0], Allowed: "a program that is installed (" + err.Error() + ")"}
		}
	}
	return w, nil
}

// fillScenarioDir replaces {scenario_dir} in the command, its preparation and its environment.
func (w *Workload) fillScenarioDir() error {
	for _, c := range []struct {
		field string
		args  []string
	}{{"workload.command", w.command}, {"workload.prepare", w.prepare}, {"workload.env", w.env}, {"workload.mysql_env", w.mysqlEnv}} {
		for i, a := range c.args {
			if !strings.Contains(a, ScenarioDirPlaceholder) {
				continue
			}
			if w.scenarioDir == "" {
				return &param.FieldError{Field: c.field, Value: a, Allowed: ScenarioDirPlaceholder + " only in a scenario read from a file (a built-in scenario has no directory: use " + ExamplesPlaceholder + " or an absolute path)"}
			}
			c.args[i] = strings.ReplaceAll(a, ScenarioDirPlaceholder, w.scenarioDir)
		}
	}
	return nil
}

// checkServerPlaceholders refuses a server's placeholder ({mysql_port}) outside mysql_env: the
// command, its preparation and env are the same on every backend, and only a backend that names
// a server (cloudsql, mysql) has one to fill it with.
func (w *Workload) checkServerPlaceholders() error {
	for _, c := range []struct {
		field string
		args  []string
	}{{"workload.command", w.command}, {"workload.prepare", w.prepare}, {"workload.env", w.env}} {
		for _, a := range c.args {
			for _, ph := range ServerPlaceholders {
				if strings.Contains(a, ph) {
					return &param.FieldError{Field: c.field, Value: a,
						Allowed: ph + " only in workload.mysql_env, the environment the app gets where its backend names a MySQL server (cloudsql, mysql); the command, prepare and env are the same on every backend"}
				}
			}
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
			return &param.FieldError{Field: fmt.Sprintf("%s[%d]", field, i), Value: a,
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
		return nil, &param.FieldError{Field: field, Value: fmt.Sprint(section), Allowed: "a non-empty list of arguments, like [python3, app.py] (never a shell string)"}
	}
	out := make([]string, len(list))
	for i, item := range list {
		switch v := item.(type) {
		case string, int, float64, bool:
			out[i] = fmt.Sprint(v)
		default:
			return nil, &param.FieldError{Field: fmt.Sprintf("%s[%d]", field, i), Value: fmt.Sprint(item), Allowed: "a word: text or a number"}
		}
		if strings.ContainsAny(out[i], "\x00\n\r") {
			return nil, &param.FieldError{Field: fmt.Sprintf("%s[%d]", field, i), Value: out[i], Allowed: "one line"}
		}
	}
	return out, nil
}

// environment reads a mapping of variable names to values.
func environment(field string, section any) ([]string, error) {
	m, ok := section.(map[string]any)
	if !ok {
		return nil, &param.FieldError{Field: field, Value: fmt.Sprint(section), Allowed: "a mapping of variables to values, like {RAILS_ENV: production}"}
	}
	var out []string
	for k, v := range m {
		value := fmt.Sprint(v)
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsAny(value, "\x00") {
			return nil, &param.FieldError{Field: field + "." + k, Value: value, Allowed: "a variable name without '=' and a value without NUL"}
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
		return nil, nil, &param.FieldError{Field: field, Value: fmt.Sprint(section),
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
			return nil, nil, &param.FieldError{Field: at + ".name", Value: r.Name, Allowed: fmt.Sprintf("a name no other request has (%s[%d] has it; a name defaults to \"METHOD path\")", field, j)}
		case key == "":
			return nil, nil, &param.FieldError{Field: at + ".name", Value: r.Name, Allowed: "a name with an ASCII letter or digit (its counters are req_NAME_ok and req_NAME_errors)"}
		}
		if j, dup := keyOwner[key]; dup {
			return nil, nil, &param.FieldError{Field: at + ".name", Value: r.Name,
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
		return r, &param.FieldError{Field: at, Value: fmt.Sprint(item), Allowed: "a mapping of method, path and optionally body, headers, weight and name, like {method: POST, path: /count_up, weight: 9}"}
	}
	fail := func(key string, value any, allowed string) error {
		return &param.FieldError{Field: at + "." + key, Value: fmt.Sprint(value), Allowed: allowed}
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
