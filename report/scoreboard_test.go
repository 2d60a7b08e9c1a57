package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
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

// A seed's verdict judged case by case is shown beside the seed's but never tallied as a
// prediction, even where its share of cases would be within 25% of the seed's "every case".
func TestVerdictsJudgedCaseByCaseStayOutOfTheTally(t *testing.T) {
	verdict := func(held, failed, open int) Score {
		return Score{Figure: "h", Seed: 1, Ours: float64(held) / float64(held+failed+open), Measured: true,
			Cases: &Cases{Held: held, Failed: failed, Open: open}}
	}
	scores := []Score{verdict(3, 0, 0), verdict(5, 1, 0), verdict(5, 0, 1), {Seed: 1, Ours: 1, Measured: true}}
	for i, want := range []string{VerdictMatches, VerdictDiffers, VerdictOpen, "within"} {
		if got := scores[i].Judged(); got != want || (i < 3 && (scores[i].Within() || scores[i].Prediction())) {
			t.Errorf("score %d: judged %s (within %v, prediction %v), want %s and out of the tally", i, got, scores[i].Within(), scores[i].Prediction(), want)
		}
	}
	if tally := Tally(scores); tally != (ScoreTally{Predictions: 1, Within: 1, Verdicts: 3, Matches: 1}) || !tally.Met() {
		t.Errorf("tally %+v", tally)
	}
	if text := Tally(scores[:3]).String(); !strings.Contains(text, "no predictions, 1 of the seed's 3 verdicts matched case by case (outside the tally)") || !strings.Contains(text, "does not apply") {
		t.Errorf("verdicts alone: %q", text)
	}
	if got := verdict(1, 1, 1).Cases.String(); got != "1 of 3 hold, 1 fails, 1 cannot tell" {
		t.Errorf("cases: %q", got)
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
