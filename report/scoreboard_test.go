package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"persistlab/results"
	"persistlab/scenario"
)

// The tally meets its goal at three predictions in four, and not below.
func TestScoreGoalIsThreeInFour(t *testing.T) {
	score := func(ours float64) Score { return Score{Seed: 1, Ours: ours, Measured: true} }
	if !Tally([]Score{score(1), score(1.25), score(0.75), score(2)}).Met() {
		t.Error("3 of 4 within 25%: want the goal met")
	}
	if Tally([]Score{score(1), score(1.26), score(0.74), score(2)}).Met() {
		t.Error("1 of 4 within 25%: want the goal not met")
	}
	if Tally([]Score{{Seed: 1, Ours: 1, Measured: true, Calibration: "fitted"}}).Met() {
		t.Error("calibration alone: want no goal met")
	}
}

// The scoreboard for scripts holds every score with its verdict, and null where a figure has no
// value: unmeasured, or measured as no number (a ratio over a zero).
func TestScoreboardJSONSaysWhatWasNotMeasured(t *testing.T) {
	RegisterScores("json-test", func(*results.Results) []Score {
		return []Score{
			{Figure: "within", Seed: 2, Ours: 2.2, Measured: true},
			{Figure: "not a number", Seed: 2, Ours: math.NaN(), Measured: true},
			{Figure: "unmeasured", Seed: 2},
		}
	})
	r := &results.Results{Scenario: &scenario.Spec{Name: "t", Seed: "json-test"}, Aggregates: []results.Aggregate{{Backend: "b"}}}
	var b bytes.Buffer
	if err := WriteScoreboardJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var s ScoreboardSummary
	if err := json.Unmarshal(b.Bytes(), &s); err != nil || len(s.Scores) != 3 {
		t.Fatalf("%v\n%s", err, b.String())
	}
	judged := []string{"within", "miss", "not measured"}
	for i, sc := range s.Scores {
		if sc.Judged != judged[i] || (sc.Ours == nil) != (i > 0) {
			t.Errorf("%s: %+v", sc.Figure, sc)
		}
	}
	if s.Tally.Predictions != 2 || s.Tally.Within != 1 || s.Tally.Unmeasured != 1 || s.Tally.Met {
		t.Errorf("tally %+v", s.Tally)
	}
	if !slices.Contains(ScoredSeeds(), "json-test") {
		t.Errorf("scored seeds %v", ScoredSeeds())
	}
}
