package report

import (
	"testing"
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
