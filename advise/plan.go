package advise

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"persistlab/param"
	"persistlab/scenario"
)

// Plan is what an advise run measures: for each runnable candidate, the steady open loop at the
// user's rate and at twice it, then crash runs at the rate, sized to fit the time budget.
type Plan struct {
	App          App
	Platform     Platform
	Rate         float64
	DBBytes      int64
	Requirements []Requirement
	Budget       time.Duration
	Candidates   []Candidate
	// Duration is each steady cell's measured time; Crashes the crash runs per candidate (0: the
	// app cannot be crashed); Connections the open loop's pool.
	Duration    time.Duration
	Crashes     int
	Connections int
	// estimate is a git plan's, from its own sizing (sizeGit).
	estimate time.Duration
}

// Each cell's fixed costs, assumed from this machine's runs (a backend's start and a crash's
// recovery take a few seconds; the lab's ceiling probe runs once per candidate): they size the
// cells to the budget, and the plan's estimate says the total before anything runs.
const (
	Warmup         = 2 * time.Second
	CellStartup    = 5 * time.Second  // start the backend and the app, stop them
	CandidateSetup = 10 * time.Second // the lab's ceiling probe, the crash run's backend
	CrashRecovery  = 5 * time.Second  // recover after a crash and check
	// MinRequests is the fewest requests a steady cell at the rate holds: p95 from 200 rests on its
	// 10 slowest. MinDuration bounds a cell below whatever the rate.
	MinRequests    = 200
	MinDuration    = 5 * time.Second
	MaxDuration    = 2 * time.Minute
	DefaultCrashes = 3
	MaxCrashes     = 100
	// CrashAfterFrom is the earliest a crash lands: after the warm-up's first writes.
	CrashAfterFrom = 2 * time.Second
	// MinConnections and MaxConnections bound the open loop's pool (Connections).
	MinConnections = 2
	MaxConnections = 1000
	// DefaultLatencySeconds sizes the pool where no requirement bounds a latency.
	DefaultLatencySeconds = 0.1
)

// Connections is the open loop's pool of keep-alive connections (k6's preAllocatedVUs) for a
// rate, sized as k6 advises: the rate times the time a request should take, here the tightest
// latency required. Requests beyond it wait for a connection, their latency counted from their
// slot. Assumed: Cloud Run's front end's connections to an instance are not published. A larger
// pool leaves each connection idle longer, which an app server that waits on an idle keep-alive
// connection before serving others pays for (Puma 5 waits up to 0.2 s): the seed's Rails app at
// 20 requests/s answered with a p95 of 5 ms over 2 or 3 connections, 108 ms over 4, 1.8 s over 8
// and 5.6 s over 16 on this lab (docs/runs/puma-connections-a2fae25).
func Connections(rate float64, reqs []Requirement) int {
	latency := math.Inf(1)
	for _, r := range reqs {
		if r.Where == Steady && strings.HasSuffix(r.Metric, "_ms") && (r.Op == "<" || r.Op == "<=") && r.Value > 0 {
			latency = min(latency, r.Value/1000)
		}
	}
	if math.IsInf(latency, 1) {
		latency = DefaultLatencySeconds
	}
	return int(min(MaxConnections, max(MinConnections, math.Ceil(rate*latency))))
}

// NewPlan checks the inputs and sizes the cells to the budget: two steady cells and the crash
// runs per runnable candidate. Errors name the input and what is allowed, before anything runs.
func NewPlan(app App, p Platform, rate float64, dbBytes int64, reqs []Requirement, budget time.Duration, crashes, connections int, cands []Candidate) (*Plan, error) {
	if math.IsNaN(rate) || rate <= 0 || rate > 100000 {
		return nil, &param.FieldError{Field: "--rate", Value: fmt.Sprint(rate), Allowed: "requests per second, above 0 and at most 100000"}
	}
	if cpu, ok := app.Workload.Params["cpu_per_request"]; ok {
		d, err := time.ParseDuration(cpu)
		if err == nil && d > 0 {
			cpus := p.CPUs
			if gvl, _ := param.ParseBool(app.Workload.Params["gvl"]); gvl {
				cpus = 1 // one process-wide lock: one CPU's worth, as a Ruby process
			}
			if need := rate * d.Seconds(); need > cpus {
				where := "one instance's CPUs"
				if p.instances() > 1 {
					where = fmt.Sprintf("the %d instances share one instance's CPUs here, where Cloud Run would give each its own", p.instances())
				}
				return nil, &param.FieldError{Field: "--rate", Value: fmt.Sprint(rate), Allowed: fmt.Sprintf(
					"at most %.0f requests/s on %s: the app's %s of CPU per request needs %.2f CPUs at %g/s (%s)",
					cpus/d.Seconds(), p, d, need, rate, where)}
			}
		}
	}
	if app.Kind == KindChanges && p.instances() > 1 {
		return nil, &param.FieldError{Field: "--instances", Value: fmt.Sprint(p.instances()), Allowed: "1 for git: one crawler commits to its repositories, on one machine's volume"}
	}
	if app.Kind == KindChanges {
		connections = 0
	} else if connections == 0 {
		connections = max(Connections(rate, reqs), p.instances()) // a connection at least per instance
	} else if connections < p.instances() {
		return nil, &param.FieldError{Field: "--connections", Value: fmt.Sprint(connections), Allowed: fmt.Sprintf("at least one per instance (--instances %d): the load's connections are split between them", p.instances())}
	}
	if app.Kind != KindChanges && (connections < 1 || connections > MaxConnections) {
		return nil, &param.FieldError{Field: "--connections", Value: fmt.Sprint(connections), Allowed: fmt.Sprintf("1 to %d", MaxConnections)}
	}
	for _, r := range reqs {
		if r.Where == Crash && !app.Crashable {
			return nil, &param.FieldError{Field: "--require", Value: r.Text, Allowed: "a requirement on steady runs or the bill: " + app.Name +
				"'s workload has no ack and recover, without which a crash run cannot count what was lost (docs/own-app.md)"}
		}
	}
	if len(reqs) == 0 {
		return nil, &param.FieldError{Field: "--require", Value: "(none)", Allowed: `at least one requirement, like --require "p95 < 100ms"`}
	}
	if (crashes < 1 && app.Crashable) || crashes > MaxCrashes {
		return nil, &param.FieldError{Field: "--crashes", Value: fmt.Sprint(crashes), Allowed: fmt.Sprintf("1 to %d crash runs per candidate", MaxCrashes)}
	}
	if !app.Crashable {
		crashes = 0
	}
	pl := &Plan{App: app, Platform: p, Rate: rate, DBBytes: dbBytes, Requirements: reqs, Budget: budget, Candidates: cands, Crashes: crashes, Connections: connections}
	n := len(pl.Runnable())
	if n == 0 {
		return nil, fmt.Errorf("no candidate can serve this app on %s", p)
	}
	if app.Kind == KindChanges {
		assignCrashRuns(pl.Candidates)
		return pl, pl.sizeGit(budget)
	}
	// Per candidate: setup, two steady cells, and the crash runs (each up to CrashAfterFrom +
	// Duration/2 of load, then recovery).
	per := budget / time.Duration(n)
	fixed := CandidateSetup + 2*CellStartup + 2*Warmup + time.Duration(pl.Crashes)*(CrashAfterFrom+CrashRecovery)
	if pl.Crashes > 0 {
		fixed += CellStartup
	}
	d := (per - fixed) / time.Duration(2+pl.Crashes/2+pl.Crashes%2)
	if least := pl.MinCell(); d < least {
		need := time.Duration(n) * (fixed + time.Duration(2+pl.Crashes/2+pl.Crashes%2)*least)
		return nil, &param.FieldError{Field: "--time", Value: budget.String(), Allowed: fmt.Sprintf(
			"at least %s for steady cells of %s (%d requests at %s/s) and %d crash runs per candidate (%d candidates); or fewer candidates with --candidates, fewer crash runs with --crashes",
			(need + time.Minute - 1).Truncate(time.Minute), least, MinRequests, rateText(rate), pl.Crashes, n)}
	}
	pl.Duration = min(d, MaxDuration).Truncate(time.Second)
	return pl, nil
}

// MinCell is the shortest steady cell the plan allows: MinRequests at the rate, and MinDuration.
func (p *Plan) MinCell() time.Duration {
	return max(MinDuration, time.Duration(math.Ceil(MinRequests/p.Rate))*time.Second)
}

// Runnable are the candidates measured: neither excluded nor dominated.
func (p *Plan) Runnable() []Candidate {
	var out []Candidate
	for _, c := range p.Candidates {
		if c.runnable() {
			out = append(out, c)
		}
	}
	return out
}

// Estimate is how long the plan takes, by the same assumptions that sized it.
func (p *Plan) Estimate() time.Duration {
	if p.App.Kind == KindChanges {
		return p.estimate
	}
	per := CandidateSetup + 2*(CellStartup+Warmup+p.Duration) +
		time.Duration(p.Crashes)*(CrashAfterFrom+(p.Duration/2)+CrashRecovery)
	if p.Crashes > 0 {
		per += CellStartup
	}
	return time.Duration(len(p.Runnable())) * per
}

// rateText is a rate as a parameter value.
func rateText(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// spec is the scenario one candidate runs: the app's workload in an open loop.
func (p *Plan) spec(c Candidate, kind string) *scenario.Spec {
	if p.App.Kind == KindChanges {
		return p.gitSpec(c, kind)
	}
	w := scenario.Workload{Type: p.App.Workload.Type, Params: map[string]string{}, Sections: p.App.Workload.Sections, Dir: p.App.Workload.Dir}
	for k, v := range p.App.Workload.Params {
		w.Params[k] = v
	}
	if len(c.Pragmas) > 0 {
		w.Sections = withPragmas(w.Sections, c.Pragmas)
	}
	switch {
	case kind == "crash":
		// A crash run counts what the app acknowledged, which persistlab's own driver reads.
		delete(w.Params, "k6_script")
	case p.App.K6Script != "":
		// The script says what it requests: the driver's method and path are the crash runs'.
		w.Params["k6_script"] = p.App.K6Script
		delete(w.Params, "method")
		delete(w.Params, "path")
		w.Sections = withoutRequests(w.Sections)
	}
	w.Params["mode"] = "open"
	w.Params["cpus"] = strconv.FormatFloat(p.Platform.CPUs, 'f', -1, 64)
	delete(w.Params, "rate")
	delete(w.Params, "vus")
	delete(w.Params, scenario.InstancesParam) // the plan's, from --instances
	s := &scenario.Spec{
		Name:     "advise-" + c.Name + "-" + kind,
		Title:    fmt.Sprintf("advise: %s, %s at %s requests/s on %s", c.Name, p.App.Name, rateText(p.Rate), p.Platform),
		Workload: w,
		Backends: []scenario.BackendSpec{{Name: c.Backend, Label: c.Name, Options: c.Options}},
		Duration: scenario.Duration(p.Duration),
		Warmup:   scenario.Duration(Warmup),
		Repeat:   1,
	}
	rates := rateText(p.Rate)
	if kind == "steady" {
		rates += "," + rateText(2*p.Rate)
	} else if n := p.Platform.instances(); n > 1 {
		rates = rateText(p.Rate / float64(n)) // the crashed instance's share
	}
	vus := p.Connections
	if n := p.Platform.instances(); kind == "crash" && n > 1 {
		vus = max(1, (vus+n-1)/n) // the crashed instance's share of the connections
	}
	s.Sweep = scenario.Sweep{{Name: "rate", Text: rates}, {Name: "vus", Text: strconv.Itoa(vus)}}
	if kind == "crash" {
		// With several instances one is crashed and recovered, at its share of the rate: what a lost
		// instance loses of what it acknowledged is its own, whatever serves beside it.
		s.Warmup = 0
		s.Crash = &scenario.Crash{Count: p.Crashes, After: scenario.DurRange{From: CrashAfterFrom, To: CrashAfterFrom + p.Duration/2}, Seed: 1}
	} else if n := p.Platform.instances(); n > 1 {
		s.Instances = n
	}
	return s
}

// withoutRequests is sections without a list of requests, which a k6 script replaces.
func withoutRequests(sections map[string]any) map[string]any {
	if _, ok := sections["requests"]; !ok {
		return sections
	}
	out := map[string]any{}
	for k, v := range sections {
		if k != "requests" {
			out[k] = v
		}
	}
	return out
}

// withPragmas is sections with the pragmas list's entries of the same names replaced (the rest kept).
func withPragmas(sections map[string]any, pragmas []string) map[string]any {
	out := map[string]any{}
	for k, v := range sections {
		out[k] = v
	}
	name := func(p string) string { n, _, _ := strings.Cut(p, "="); return strings.ToLower(strings.TrimSpace(n)) }
	var list []any
	if had, ok := sections["pragmas"].([]any); ok {
		for _, p := range had {
			text, _ := p.(string)
			if !slices.ContainsFunc(pragmas, func(q string) bool { return name(q) == name(text) }) {
				list = append(list, p)
			}
		}
	}
	for _, p := range pragmas {
		list = append(list, p)
	}
	out["pragmas"] = list
	return out
}

// Kinds are the scenarios each candidate runs, in order: steady, and crash where the app can be
// crashed; for git the crash runs come first (a candidate they fail runs no steady cells), and
// run only on the candidates of CrashRuns.
func (p *Plan) Kinds() []string {
	switch {
	case p.Crashes == 0:
		return []string{"steady"}
	case p.App.Kind == KindChanges:
		return []string{"crash", "steady"}
	}
	return []string{"steady", "crash"}
}

// KindsOf are the scenarios one candidate runs, in order: a git candidate whose crash runs another
// stands for runs its steady cells only.
func (p *Plan) KindsOf(c Candidate) []string {
	var out []string
	for _, k := range p.Kinds() {
		if k != "crash" || c.CrashFrom == "" {
			out = append(out, k)
		}
	}
	return out
}

// YAML is a candidate's scenario of a kind (steady or crash), as a file a user can run again with
// persistlab run.
func (p *Plan) YAML(c Candidate, kind string) ([]byte, error) { return specYAML(p.spec(c, kind)) }

func specYAML(s *scenario.Spec) ([]byte, error) {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return []byte(b.String()), enc.Close()
}
