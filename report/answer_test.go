package report

import (
	"slices"
	"strings"
	"testing"

	"persistlab/profile"
	"persistlab/results"
	"persistlab/scenario"
)

// The command that settles a run is the run's own, as persistlab, without what made it short or
// what a second run could not reuse, and with every word a shell would split quoted.
func TestRerunCommandKeepsTheRunsOwnFlags(t *testing.T) {
	r := &results.Results{Scenario: &scenario.Spec{Name: "s"}, Command: []string{"/tmp/x/bin/persistlab", "run", "my app.yaml", "--quick", "--out", "o.json",
		"--repeat=1", "--duration", "5s", "--backend", "gcsfuse,local", "--force", "--threshold", "p95 < 200ms", "--brief", "--html", "p.html", "--format=json", "--shard", "0/3", "--shard-by=backend"}}
	if got, want := RerunCommand(r), "persistlab run 'my app.yaml' --backend gcsfuse,local --threshold 'p95 < 200ms'"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := RerunCommand(&results.Results{Scenario: &scenario.Spec{Name: "s"}}); got != "persistlab run s" {
		t.Errorf("no command recorded: %s", got)
	}
}

// Figures of one run each are apart beyond OneRunMargin; of several runs, when their ranges do
// not overlap; a backend joins the tier of the best it cannot be told from.
func TestTiers(t *testing.T) {
	one := func(b string, v float64) Ranked { return Ranked{Backend: b, Value: v, Lo: v, Hi: v, Runs: 1} }
	tiers := Tiers([]Ranked{one("c", 10), one("a", 4), one("b", 4.9), one("d", 5.1), one("e", 7)}, true)
	if len(tiers) != 3 || len(tiers[0]) != 3 || tiers[0][0].Backend != "a" || tiers[0][2].Backend != "d" || tiers[1][0].Backend != "e" || tiers[2][0].Backend != "c" {
		t.Errorf("tiers %+v: want [a b d] [e] [c] (d within 25%% of b though not of a: no tier is told from the next by less)", tiers)
	}
	if !Apart(one("x", 0), one("y", 3)) || Apart(one("x", 0), one("y", 0)) {
		t.Error("nothing against something is apart; nothing against nothing is not")
	}
	if up := Tiers([]Ranked{one("a", 100), one("b", 300)}, false); up[0][0].Backend != "b" {
		t.Errorf("higher better: %+v", up)
	}
	x := Ranked{Value: 5, Lo: 4, Hi: 6, Runs: 3}
	if Apart(x, Ranked{Value: 5.5, Lo: 5.9, Hi: 7, Runs: 3}) || !Apart(x, Ranked{Value: 5.5, Lo: 6.1, Hi: 7, Runs: 3}) {
		t.Error("ranges 4-6 and 5.9-7 overlap, 4-6 and 6.1-7 do not")
	}
}

// A run that took a profile says, among its caveats, where its model was measured and how far
// the profile's fit predicted its held-out point.
func TestAnswerNamesTheProfileAndItsHeldOutError(t *testing.T) {
	p := profile.Profile{Kind: "bucket", Measured: profile.Measured{Target: "storage.googleapis.com/b", When: "2026-11-25T10:00:00Z"},
		HeldOut: []profile.HeldOut{{Point: "8 MiB read", Unit: "s", Predicted: 0.29, Measured: 0.3, Error: -1.0 / 30}}}
	r := &results.Results{Scenario: &scenario.Spec{Name: "s", Repeat: 3, Workload: scenario.Workload{Type: "counter"}}}
	for _, c := range AnswerOf(r).Caveats {
		if strings.Contains(c, "profile") {
			t.Errorf("a caveat of a profile without one: %s", c)
		}
	}
	r.Scenario.ProfileUsed = &profile.Use{Path: "my.yaml", Profile: p}
	want := "bucket model from profile my.yaml measured on storage.googleapis.com/b at 2026-11-25T10:00:00Z; held-out 8 MiB read predicted within 3.3%"
	if !slices.Contains(AnswerOf(r).Caveats, want) {
		t.Errorf("caveats %q lack %q", AnswerOf(r).Caveats, want)
	}
}
