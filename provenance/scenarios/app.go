// Package scenarios holds the provenance read from the built-in scenarios: the app figures their
// files set, and what figures each scenario runs with. It links the scenario package, which the
// provenance tables themselves (lab, cost) must not.
package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"persistlab/provenance"
	"persistlab/scenario"
)

// The app figures: workload parameters of the built-in scenarios that stand for something the
// seed's app did, read from the scenario files themselves (each from its home scenario), so the
// table shows what the scenarios set. Every built-in scenario was read for numbers taken from a
// seed's results rather than its configuration; cpu_per_request is the one.

func init() { provenance.Register(provenance.Model{Name: "app", Figures: appFigures}) }

// appFigure is an app figure before its value is read: the parameter, the scenario that holds
// it, and its provenance.
type appFigure struct {
	param, home string
	fig         func(value string) provenance.Figure
}

var appTable = []appFigure{
	{param: "cpu_per_request", home: "cloudrun-sqlite", fig: func(v string) provenance.Figure {
		return provenance.Figure{Name: "CPU burnt per request by the Go counter", Kind: provenance.Fitted, FittedFrom: "000",
			Source: "seed 000's Litestream table: " + seed000CPUFit() + "; the seed's vCPU ran at ~100% (docs/design.md, \"Modelling the app's own CPU\")",
			Moves:  "every latency and rate of the Go counter: avg ≈ VUs × CPU per request once the CPU saturates, so seed 000's slopes (ms per VU), maxima and rates; --cpu-per-request 0s shows storage alone"}
	}},
	{param: "threads", home: "cloudrun-sqlite", fig: func(v string) provenance.Figure {
		return provenance.Figure{Name: "requests served at once (Puma's threads)", Kind: provenance.Published,
			Source: `Rails 8's generated config/puma.rb: threads_count = ENV.fetch("RAILS_MAX_THREADS", 3) (railties' app template; seen in generated apps, code search 2026-11-24); the seed's stack, not its results`,
			Moves:  "queueing in the app and how SQLite transactions overlap (WAL checkpoints), so the tails and the gcsfuse cost per VU"}
	}},
	{param: "gvl", home: "cloudrun-sqlite", fig: func(v string) provenance.Figure {
		return provenance.Figure{Name: "one SQLite statement at a time (Ruby's GVL)", Kind: provenance.Assumed,
			Source: "sqlite3-ruby steps each statement holding Ruby's global VM lock, so the seed's Rails app ran one statement at a time; modelled as one lock over each statement (docs/design.md, \"Checkpoint starvation without the GVL\"), not measured on the seed's Cloud Run",
			Moves:  "whether WAL checkpoints complete under load on gcsfuse (without it they starve: far fewer requests/s, tails of seconds)"}
	}},
	{param: "buffer_pool", home: "cloudsql-bulkload", fig: func(v string) provenance.Figure {
		return provenance.Figure{Name: "InnoDB buffer pool (scaled down)", Kind: provenance.Assumed,
			Source: "scaled with the data so the 2 GB table stays several times the pool, as the seed's 43 GB table (its stated data, its configuration) was to its 7.5 GB instance's pool; Cloud SQL's own pool size for db-n1-standard-2 is not modelled",
			Moves:  "how many pages InnoDB flushes per row loaded, so write operations/s and pages written per write (seed 001's scores)"}
	}},
}

func appFigures() []provenance.Figure {
	var out []provenance.Figure
	for _, a := range appTable {
		// A home scenario that no longer sets its parameter shows here, and fails the tests.
		v := "unset: scenario " + a.home + " does not set it"
		if s, err := scenario.Load(a.home); err != nil {
			v = "unset: " + err.Error()
		} else if x, ok := s.Workload.Params[a.param]; ok {
			v = x
		}
		f := a.fig(v)
		f.Model, f.Go, f.Value = "app", "workload."+a.param, v
		f.Scenarios = scenariosSetting(a.param, v)
		out = append(out, f)
	}
	return out
}

// scenariosSetting lists the built-in scenarios whose workload sets param to value.
func scenariosSetting(param, value string) []string {
	var names []string
	for _, name := range scenario.Builtins() {
		if s, err := scenario.Load(name); err == nil && s.Workload.Params[param] == value {
			names = append(names, name)
		}
	}
	return names
}

// seed000CPUFit derives the fitted CPU per request from cloudrun-sqlite's copy of seed 000's
// Litestream table (20 VUs, its avg latency), so the source shows the arithmetic from the table
// itself.
func seed000CPUFit() string {
	vus, avg, err := Seed000LitestreamAt20()
	if err != nil {
		return "20 VUs / 94.59 ms avg (table not found: " + err.Error() + ")"
	}
	rate := vus / avg * 1000
	return fmt.Sprintf("%g VUs / %g ms avg = %.0f requests/s on 1 vCPU, %.2f ms of CPU per request", vus, avg, rate, 1000/rate)
}

// Seed000LitestreamAt20 reads the row the CPU per request is fitted from: VUs 20 and its average
// latency (ms) in cloudrun-sqlite's published Litestream table.
func Seed000LitestreamAt20() (vus, avgMs float64, err error) {
	s, err := scenario.Load("cloudrun-sqlite")
	if err != nil {
		return 0, 0, err
	}
	for _, p := range s.Published {
		if p.Backend != "litestream" {
			continue
		}
		iv, ia := slices.Index(p.Columns, "vus"), slices.Index(p.Columns, "avg_ms")
		for _, r := range p.Rows {
			if iv < 0 || ia < 0 || len(r) <= max(iv, ia) {
				continue
			}
			v, ok1 := r[iv].Float()
			a, ok2 := r[ia].Float()
			if ok1 && ok2 && v == 20 {
				return v, a, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("cloudrun-sqlite has no Litestream row at 20 VUs")
}

// appUses is the app figures a workload with these parameters runs with. A fitted figure set to
// another value is no longer the fitted one: it is off, with the value noted.
func appUses(params map[string]string, sweep scenario.Sweep) []provenance.Use {
	m, ok := provenance.Lookup("app")
	if !ok {
		return nil
	}
	swept := map[string]string{}
	for _, a := range sweep {
		for _, p := range a.Params() {
			swept[p] = a.Text
		}
	}
	var out []provenance.Use
	for _, f := range m.Figures() {
		param := strings.TrimPrefix(f.Go, "workload.")
		u := provenance.Use{Figure: f}
		if text, ok := swept[param]; ok {
			u.Note = "swept here: " + text
			out = append(out, u)
			continue
		}
		v, ok := params[param]
		if !ok {
			continue
		}
		if !sameValue(v, f.Value) {
			u.Note = "set to " + v + " here, not the table's " + f.Value
			u.Off = f.Kind == provenance.Fitted
		}
		out = append(out, u)
	}
	return out
}

// sameValue compares two parameter texts as durations or numbers where they parse as such.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	if x, err := time.ParseDuration(a); err == nil {
		y, err := time.ParseDuration(b)
		return err == nil && x == y
	}
	if x, err := strconv.ParseFloat(a, 64); err == nil {
		y, err := strconv.ParseFloat(b, 64)
		return err == nil && x == y
	}
	return false
}
