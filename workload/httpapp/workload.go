// Package httpapp puts any HTTP app a user can start with a command under load: the app keeps its
// data in the backend's directory, persistlab starts it per cell on a loopback port it chose,
// waits until it answers, and drives it with its own load driver (k6's closed and open loops).
package httpapp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"persistlab/backend"
	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/internal/tools"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
	"persistlab/workload/httpload"
)

// Name is the workload's name in scenarios.
const Name = "http"

// Params are the load's (httpload's declarations), and how the app is started, found ready and
// asked what it acknowledged.
var Params = append(loadParams(),
	param.Param{Name: "ready", Kind: param.KindString, Default: "/", Help: "a path polled with GET until it answers below 500: then the app is ready"},
	param.Param{Name: "ready_timeout", Kind: param.KindDuration, Default: "60s", Min: 0.1, Max: 3600, Help: "how long the app may take to become ready"},
	param.Param{Name: "prepare_timeout", Kind: param.KindDuration, Default: "10m", Min: 1, Max: 86400, Help: "how long prepare may run: then it is killed with everything it started, and the start fails"},
	param.Param{Name: "k6_script", Kind: param.KindString, Default: "", Help: "your own k6 script, run by the real k6 with the app's URL in __ENV." + URLVariable + " (a relative path is the scenario file's, like " + ScenarioDirPlaceholder + "/test.js; for a built-in scenario the working directory's); persistlab's vus and duration replace the script's"},
	param.Param{Name: "sqlite", Kind: param.KindString, Default: "", Help: "the SQLite file the app keeps in {dir}, by name (fixed in the scenario): backends that replicate one database (Litestream) replicate it"},
	param.Param{Name: "ack", Kind: param.KindString, Default: "", Help: "the JSON field of a 200 answer that carries a count or id growing with every write the app acknowledged (crash runs: what a recovery lost)"},
	param.Param{Name: "recover", Kind: param.KindString, Default: "", Help: "a path answering GET with the highest persisted count, in the ack field (crash runs)"},
)

// loadParams are httpload's declarations of the load, with what a list of requests or a k6
// script changes in them.
func loadParams() []param.Param {
	var out []param.Param
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
			"command": `the app's command as a list of words, like [python3, app.py, --port, "{port}"] (never a shell string)`,
			"prepare": `a command run before every start, as a list of words, like [bin/rails, db:prepare] (never a shell string)`,
			"env":     "a mapping of environment variables to values, like {RAILS_ENV: production}",
			"mysql_env": "variables set only where the backend names a MySQL server (cloudsql, mysql), with its " + strings.Join(ServerPlaceholders, ", ") +
				", like {DATABASE_URL: \"mysql2://{mysql_user}@{mysql_host}:{mysql_port}/app\"}; a password, where the server has one, is in MYSQL_PWD",
			"requests": "a list of requests, like [{method: POST, path: /count_up, weight: 9}]",
		},
		NeedsOf: func(spec scenario.Workload) backend.Needs {
			name, _ := spec.Param("sqlite")
			_, server := spec.Sections["mysql_env"]
			return backend.Needs{SQLite: name, SQLiteParam: "sqlite", MySQL: server}
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

// The MySQL server a backend names (Target.DSN), for mysql_env alone: its loopback address, port
// and user. Its password, where it has one, is never put in a command or a variable of persistlab's
// making: the app inherits MYSQL_PWD, as MySQL's own clients read it.
const (
	MySQLHostPlaceholder = "{mysql_host}"
	MySQLPortPlaceholder = "{mysql_port}"
	MySQLUserPlaceholder = "{mysql_user}"
)

// ServerPlaceholders are the server's placeholders, in the order the help lists them.
var ServerPlaceholders = []string{MySQLHostPlaceholder, MySQLPortPlaceholder, MySQLUserPlaceholder}

const host = "127.0.0.1"

// Workload is the app's command line and environment, checked.
type Workload struct {
	command, prepare []string
	env              []string // NAME=value
	mysqlEnv         []string // NAME=value, set only where the backend names a MySQL server
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
			return &param.FieldError{Field: "workload." + d.Name, Value: v, Allowed: "its default (" + d.Default + ") with a list of requests (workload.requests): each entry has its own"}
		case d.Name == "k6_script" && v != "":
			return &param.FieldError{Field: "workload.requests", Value: fmt.Sprintf("%d requests", len(w.requests)),
				Allowed: "no list of requests with a k6_script (" + v + "): the script says what it requests"}
		}
	}
	return nil
}

// settings are one cell's parameters, read.
type settings struct {
	httpload.Load
	Ready          string        `param:"ready"`
	ReadyTimeout   time.Duration `param:"ready_timeout"`
	PrepareTimeout time.Duration `param:"prepare_timeout"`
	Script         string        `param:"k6_script"` // as written
	Ack            string        `param:"ack"`
	Recover        string        `param:"recover"`
	SQLite         string        `param:"sqlite"`
	k6Script       string        // Script, absolute; "" for persistlab's own driver
}

// read checks one cell's parameters; a relative k6_script is the scenario file's (base), or,
// for a built-in scenario, the working directory's.
func read(p workload.Params, base string) (settings, error) {
	var s settings
	if err := param.Decode(Params, p, &s); err != nil {
		return s, param.Under("workload.", err)
	}
	if s.Ack != "" && !ackField.MatchString(s.Ack) {
		return s, &param.FieldError{Field: "workload.ack", Value: s.Ack, Allowed: "a JSON field name of letters, digits and _, like count or id"}
	}
	paths := []struct{ name, path string }{{"path", s.Path}, {"ready", s.Ready}}
	if s.Recover != "" {
		paths = append(paths, struct{ name, path string }{"recover", s.Recover})
	}
	for _, f := range paths {
		if !appPath(f.path) {
			return s, &param.FieldError{Field: "workload." + f.name, Value: f.path, Allowed: pathAllowed}
		}
	}
	if s.k6Script = s.Script; strings.ContainsFunc(s.k6Script, func(r rune) bool { return r == '%' || unicode.IsControl(r) }) {
		// k6 reads a path as a URL: it decodes %XX (the file it ran would not be the one
		// persistlab checked) and refuses control characters.
		return s, &param.FieldError{Field: "workload.k6_script", Value: s.k6Script, Allowed: "a path without '%' or control characters (k6 reads a path as a URL)"}
	}
	if s.k6Script != "" {
		if strings.Contains(s.k6Script, ExamplesPlaceholder) {
			examples, err := tools.FindDir("examples")
			if err != nil {
				return s, &param.FieldError{Field: "workload.k6_script", Value: s.k6Script, Allowed: "a persistlab checkout's examples directory: " + err.Error()}
			}
			s.k6Script = strings.ReplaceAll(s.k6Script, ExamplesPlaceholder, examples)
		}
		if strings.Contains(s.k6Script, ScenarioDirPlaceholder) {
			if base == "" {
				return s, &param.FieldError{Field: "workload.k6_script", Value: s.k6Script, Allowed: ScenarioDirPlaceholder + " only in a scenario read from a file (a built-in scenario has no directory)"}
			}
			s.k6Script = strings.ReplaceAll(s.k6Script, ScenarioDirPlaceholder, base)
		}
		if !filepath.IsAbs(s.k6Script) && base != "" {
			s.k6Script = filepath.Join(base, s.k6Script)
		}
		abs, err := filepath.Abs(s.k6Script)
		if err != nil {
			return s, &param.FieldError{Field: "workload.k6_script", Value: s.k6Script, Allowed: "a path: " + err.Error()}
		}
		s.k6Script = abs
		for _, d := range Params { // the script says what it requests; persistlab gives it vus, duration and a rate
			if (d.Name == "method" || d.Name == "path" || d.Name == "network_rtt") && p[d.Name] != d.Default {
				return s, &param.FieldError{Field: "workload." + d.Name, Value: p[d.Name], Allowed: "its default (" + d.Default + ") with a k6_script: the script says what it requests, persistlab gives it vus, duration and, in an open loop, a rate"}
			}
		}
	}
	if name := s.SQLite; name != "" && (name != filepath.Base(name) || name == "." || name == ".." || strings.ContainsAny(name, "{}")) {
		return s, &param.FieldError{Field: "workload.sqlite", Value: name, Allowed: "a file name in the backend's directory, like app.db"}
	}
	return s, httpload.CheckRate(s.Mode, s.Rate, p["rate"])
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
	case s.Ack == "" || s.Recover == "":
		return &param.FieldError{Field: "workload.ack", Value: s.Ack, Allowed: "a JSON field and a recover path for crash runs: the app must state what it acknowledged and what persisted (without them a crash run cannot count what was lost)"}
	case s.k6Script != "":
		return &param.FieldError{Field: "workload.k6_script", Value: p["k6_script"], Allowed: "none in crash runs: persistlab's driver reads every acknowledgement"}
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
			return &param.FieldError{Field: d.field, Value: d.v.String(), Allowed: "at least " + k6MinDuration.String() + " with a k6_script (or no warm-up): k6 refuses a shorter run"}
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
	return httpload.CheckVUsPerInstance(s.VUs, p["vus"], n)
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
		return &param.FieldError{Field: "workload.k6_script", Value: p["k6_script"], Allowed: "a k6 script k6 can read: " + err.Error()}
	}
	if err := checkK6Options(ctx, bin, s.k6Script); err != nil {
		return &param.FieldError{Field: "workload.k6_script", Value: p["k6_script"], Allowed: err.Error()}
	}
	if w.k6Version == "" {
		w.k6Version = sysinfo.ProgramVersion(bin, "version")
	}
	if s.Mode == httpload.ModeOpen { // the script must run under k6's arrival-rate executor too
		dir, err := os.MkdirTemp("", "persistlab-k6-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		wrapper, err := writeArrivalScript(filepath.Join(dir, "k6-arrival.js"), s.k6Script, s.Rate, s.VUs, time.Second)
		if err != nil {
			return err
		}
		if err := proc.RunDiscarded(proc.Command(ctx, bin, "inspect", "--execution-requirements", wrapper), 3); err != nil {
			return &param.FieldError{Field: "workload.k6_script", Value: p["k6_script"], Allowed: "a script with a default function for an open loop (mode open runs it under k6's constant-arrival-rate): " + proc.OutputOf(err)}
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
