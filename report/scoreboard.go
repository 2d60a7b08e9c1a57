package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"persistlab/lib/registry"
	"persistlab/provenance"
	_ "persistlab/provenance/scenarios" // the app figures (cpu_per_request fitted from seed 000)
	"persistlab/results"
)

// A Score is one of a seed's headline figures, the seed's value beside ours. A figure set by a
// model figure fitted from this same seed is calibration: it shows, but it is not a match.
type Score struct {
	Figure      string  `json:"figure"`
	Seed        float64 `json:"seed"`
	Ours        float64 `json:"ours"`
	Measured    bool    `json:"measured"`              // false: the run holds no rows for it
	Calibration string  `json:"calibration,omitempty"` // the figure fitted from this seed that sets it
	Note        string  `json:"note,omitempty"`        // where the seed's value comes from, when not its table
	// Reported says why a measured figure is shown beside the seed's but kept out of the tally: an
	// absolute level set by the target's speed, which this machine does not share, or a run that
	// differs from the seed's configuration where the figure depends on it.
	Reported string `json:"reported,omitempty"`
	// DependsOn names the model figures (provenance's Go names) that set the figure's level; one
	// fitted from this seed and in effect in the run makes it calibration.
	DependsOn []string `json:"-"`
	// Cases, where set, makes the score a seed's verdict judged case by case, not a figure: the
	// seed states that a claim held (Seed 1: in every case) and gives no number to come within
	// 25% of, so such a score is set beside the verdict and kept out of the tally (Tally).
	Cases *Cases `json:"cases,omitempty"`
}

// Cases are the run's cases of a seed's claim: how many hold, fail, or cannot be told from noise
// by the test Test states.
type Cases struct {
	Held   int    `json:"held"`
	Failed int    `json:"failed"`
	Open   int    `json:"cannot_tell"`
	Test   string `json:"test"`
}

// Total is the number of cases.
func (c Cases) Total() int { return c.Held + c.Failed + c.Open }

// String is "1 of 3 hold, 1 fails, 1 cannot tell".
func (c Cases) String() string {
	parts := []string{fmt.Sprintf("%d of %d hold", c.Held, c.Total())}
	switch {
	case c.Failed == 1:
		parts = append(parts, "1 fails")
	case c.Failed > 1:
		parts = append(parts, fmt.Sprintf("%d fail", c.Failed))
	}
	if c.Open > 0 {
		parts = append(parts, fmt.Sprintf("%d cannot tell", c.Open))
	}
	return strings.Join(parts, ", ")
}

// ScoreTolerance is how far from the seed's value a prediction may be and still match: 25%.
const ScoreTolerance = 0.25

// ScoreGoal is the share of predictions within ScoreTolerance a seed's scoreboard aims at.
const ScoreGoal = 0.75

// Ratio is ours over the seed's.
func (s Score) Ratio() float64 { return s.Ours / s.Seed }

// Within says whether ours is within ScoreTolerance of the seed's value; never for a verdict
// judged case by case (Cases).
func (s Score) Within() bool {
	return s.Measured && s.Cases == nil && s.Seed != 0 && !math.IsNaN(s.Ours) && math.Abs(s.Ratio()-1) <= ScoreTolerance+1e-9
}

// Prediction says whether the score counts toward the seed's tally: measured, a figure (not a
// verdict judged case by case), set by no figure fitted from the same seed, and not merely
// reported.
func (s Score) Prediction() bool {
	return s.Measured && s.Cases == nil && s.Calibration == "" && s.Reported == ""
}

// seedScores are each seed's headline figures: the gaps its scenario is judged by and the seed's
// own conclusions, a fixed list so that runs compare.
var seedScores = registry.New[func(r *results.Results) []Score]("scores for seed")

// RegisterScores sets how a seed's headline figures are read from a run (its workload's presenter
// registers them); a second registration of one seed panics.
func RegisterScores(seed string, f func(r *results.Results) []Score) { seedScores.Register(seed, f) }

// Scoreboard is the run's scores against its seed; nil when the scenario is not a seed's.
func Scoreboard(r *results.Results) []Score {
	if r.Scenario == nil || len(r.Aggregates) == 0 {
		return nil
	}
	f, _ := seedScores.Get(r.Scenario.Seed)
	if f == nil {
		return nil
	}
	scores := f(r)
	fitted := provenance.FittedFrom(r.Scenario.Seed)
	known := map[string]bool{}
	for _, fig := range provenance.All() {
		known[fig.Go] = true
	}
	for i := range scores {
		for _, dep := range scores[i].DependsOn {
			if !known[dep] {
				// The model tables come from the packages this build links: a figure none of them
				// names cannot be shown independent of the seed, so it is never scored as a match.
				scores[i].Calibration = fmt.Sprintf("%s is in no model table this build links: whether it is fitted from the seed is unknown", dep)
				continue
			}
			for _, fig := range fitted {
				if fig.Go == dep && inEffect(r, fig) {
					scores[i].Calibration = fmt.Sprintf("%s %s is fitted from seed %s (%s)", fig.Name, fig.Value, fig.FittedFrom, fig.Source)
				}
			}
		}
	}
	return scores
}

// inEffect says whether a model figure held in the run: an app figure when the run's workload set
// the same value, a backend model's figure unless a backend entry replaced it by its option.
func inEffect(r *results.Results, fig provenance.Figure) bool {
	if param, ok := strings.CutPrefix(fig.Go, "workload."); ok {
		return sameValue(FixedParams(r)[param], fig.Value)
	}
	for _, b := range r.Scenario.Backends {
		if _, replaced := b.Options[fig.Option]; fig.Option != "" && replaced {
			return false
		}
	}
	return true
}

// sameValue compares two parameter values as durations or sizes where they are ones (4.7ms =
// 4700us), else as text.
func sameValue(a, b string) bool {
	if da, err1 := time.ParseDuration(a); err1 == nil {
		db, err2 := time.ParseDuration(b)
		return err2 == nil && da == db
	}
	return a == b
}

// ScoreTally counts a scoreboard: predictions, those within tolerance, calibration, reported only
// and unmeasured; apart from them, the seed's verdicts judged case by case and those that match.
type ScoreTally struct {
	Predictions, Within, Calibration, Reported, Unmeasured int
	Verdicts, Matches                                      int
}

// Tally counts the scores.
func Tally(scores []Score) ScoreTally {
	var t ScoreTally
	for _, s := range scores {
		switch {
		case !s.Measured:
			t.Unmeasured++
		case s.Cases != nil:
			t.Verdicts++
			if s.Judged() == VerdictMatches {
				t.Matches++
			}
		case s.Calibration != "":
			t.Calibration++
		case s.Reported != "":
			t.Reported++
		default:
			t.Predictions++
			if s.Within() {
				t.Within++
			}
		}
	}
	return t
}

// Met says whether the tally reaches the goal: at least ScoreGoal of the predictions within tolerance.
func (t ScoreTally) Met() bool {
	return t.Predictions > 0 && float64(t.Within) >= ScoreGoal*float64(t.Predictions)
}

func (t ScoreTally) String() string {
	parts := []string{fmt.Sprintf("%d of %d predictions within %.0f%%", t.Within, t.Predictions, 100*ScoreTolerance)}
	if t.Predictions == 0 {
		parts[0] = "no predictions"
	}
	if t.Calibration > 0 {
		parts = append(parts, fmt.Sprintf("%d calibration", t.Calibration))
	}
	if t.Reported > 0 {
		parts = append(parts, fmt.Sprintf("%d reported, not tallied", t.Reported))
	}
	if t.Unmeasured > 0 {
		parts = append(parts, fmt.Sprintf("%d not measured by this run", t.Unmeasured))
	}
	if t.Verdicts > 0 {
		parts = append(parts, fmt.Sprintf("%d of the seed's %d verdicts matched case by case (outside the tally)", t.Matches, t.Verdicts))
	}
	goal := "not yet met"
	switch {
	case t.Met():
		goal = "met"
	case t.Predictions == 0 && t.Verdicts > 0:
		goal = "does not apply (the seed states verdicts here, not figures)"
	}
	return strings.Join(parts, ", ") + fmt.Sprintf("; the lab's fidelity goal (%.0f%% of predictions within): %s", 100*ScoreGoal, goal)
}

// WriteScoreboard prints the seed's headline figures beside ours and the tally.
func WriteScoreboard(w io.Writer, r *results.Results) {
	scores := Scoreboard(r)
	if len(scores) == 0 {
		return
	}
	caption := fmt.Sprintf("scoreboard, the lab's fidelity to seed %s (how closely this machine reproduces the published experiment, not a verdict on your storage): its headline figures beside ours (within: ours within %.0f%% of the seed's; calibration: set by a figure fitted from this seed, not a match)",
		r.Scenario.Seed, 100*ScoreTolerance)
	test := ""
	for _, s := range scores {
		if s.Cases != nil && test == "" {
			test = s.Cases.Test
		}
	}
	if test != "" {
		caption += fmt.Sprintf("; where the seed states a verdict and no figure, ours is the cases that hold, set beside it and kept out of the tally (%s: every case holds; %s: a case fails; %s: neither)",
			VerdictMatches, VerdictDiffers, VerdictOpen)
	}
	fmt.Fprintf(w, "\n%s\n", caption)
	tw := NewTable(w, 0)
	fmt.Fprintln(tw, "  figure\tseed\tours\tours/seed\tjudged\t")
	var notes []string
	var calibrated, reasons []string
	calibration := ""
	reported := map[string][]string{} // figures by the reason they are not tallied
	for _, s := range scores {
		seed, ours, ratio := formatScore(s.Seed), "-", "-"
		switch {
		case s.Cases != nil:
			seed = True
			if s.Measured {
				ours = s.Cases.String()
			}
		case s.Measured:
			ours, ratio = formatScore(s.Ours), fmt.Sprintf("%.2fx", s.Ratio())
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t\n", s.Figure, seed, ours, ratio, s.Judged())
		if s.Calibration != "" && s.Measured {
			calibrated, calibration = append(calibrated, s.Figure), s.Calibration
		} else if s.Reported != "" && s.Measured {
			if reported[s.Reported] == nil {
				reasons = append(reasons, s.Reported)
			}
			reported[s.Reported] = append(reported[s.Reported], s.Figure)
		}
		if s.Note != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", s.Figure, s.Note))
		}
	}
	tw.Flush()
	for i := len(reasons) - 1; i >= 0; i-- {
		notes = append([]string{fmt.Sprintf("reported, not tallied (%s): %s", strings.Join(reported[reasons[i]], "; "), reasons[i])}, notes...)
	}
	if len(calibrated) > 0 {
		notes = append([]string{fmt.Sprintf("calibration (%s): %s", strings.Join(calibrated, "; "), calibration)}, notes...)
	}
	if test != "" {
		notes = append(notes, "how a case is told from noise: "+test)
	}
	for _, n := range notes {
		fmt.Fprintln(w, "  "+n)
	}
	fmt.Fprintf(w, "  seed %s: %s\n", r.Scenario.Seed, Tally(scores))
}

// What a verdict judged case by case is against the seed's (Score.Cases).
const (
	VerdictMatches = "matches"     // every case holds, as the seed found
	VerdictDiffers = "differs"     // a case fails
	VerdictOpen    = "cannot tell" // none fails, and some case cannot be told from noise
)

// Judged is the score's verdict as the scoreboard prints it: within, miss, calibration, reported
// or not measured; for a verdict judged case by case, matches, differs or cannot tell.
func (s Score) Judged() string {
	switch {
	case !s.Measured:
		return "not measured"
	case s.Cases != nil:
		switch {
		case s.Cases.Failed > 0:
			return VerdictDiffers
		case s.Cases.Open > 0 || s.Cases.Held == 0:
			return VerdictOpen
		}
		return VerdictMatches
	case s.Calibration != "":
		return "calibration"
	case s.Reported != "":
		return "reported"
	case s.Within():
		return "within"
	}
	return "miss"
}

// ScoredSeeds lists the seeds a run can be scored against, in order.
func ScoredSeeds() []string {
	return seedScores.Names()
}

// WriteScoreboardMarkdown is WriteScoreboard as Markdown: its caption, the table, the notes and
// the tally, as docs/fidelity.md carries them.
func WriteScoreboardMarkdown(w io.Writer, r *results.Results) error {
	md := &markdown{w: w}
	WriteScoreboard(md, r)
	md.close()
	return md.err
}

// ScoreboardSummary is a run's scoreboard for scripts (report --scoreboard --format json).
type ScoreboardSummary struct {
	Seed      string         `json:"seed"`
	Scenario  string         `json:"scenario"`
	Tolerance float64        `json:"tolerance"` // ScoreTolerance
	Goal      float64        `json:"goal"`      // ScoreGoal
	Scores    []ScoreSummary `json:"scores"`
	Tally     TallySummary   `json:"tally"`
}

// ScoreSummary is one score: ours and the ratio are null where the run did not measure it; a
// verdict judged case by case has its cases, ours the share that hold, and no ratio.
type ScoreSummary struct {
	Figure      string   `json:"figure"`
	Seed        float64  `json:"seed"`
	Ours        *float64 `json:"ours"`
	Ratio       *float64 `json:"ratio"`
	Judged      string   `json:"judged"`
	Calibration string   `json:"calibration,omitempty"`
	Reported    string   `json:"reported,omitempty"`
	Note        string   `json:"note,omitempty"`
	Cases       *Cases   `json:"cases,omitempty"`
}

// TallySummary is a ScoreTally and whether it meets ScoreGoal.
type TallySummary struct {
	Predictions int  `json:"predictions"`
	Within      int  `json:"within"`
	Calibration int  `json:"calibration"`
	Reported    int  `json:"reported"`
	Unmeasured  int  `json:"unmeasured"`
	Verdicts    int  `json:"verdicts,omitempty"`
	Matches     int  `json:"matches,omitempty"`
	Met         bool `json:"met"`
}

// WriteScoreboardJSON writes the run's ScoreboardSummary as indented JSON.
func WriteScoreboardJSON(w io.Writer, r *results.Results) error {
	scores := Scoreboard(r)
	t := Tally(scores)
	out := ScoreboardSummary{Seed: r.Scenario.Seed, Scenario: r.Scenario.Name, Tolerance: ScoreTolerance, Goal: ScoreGoal, Scores: []ScoreSummary{},
		Tally: TallySummary{Predictions: t.Predictions, Within: t.Within, Calibration: t.Calibration, Reported: t.Reported, Unmeasured: t.Unmeasured,
			Verdicts: t.Verdicts, Matches: t.Matches, Met: t.Met()}}
	finite := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	for _, s := range scores {
		sum := ScoreSummary{Figure: s.Figure, Seed: s.Seed, Judged: s.Judged(), Calibration: s.Calibration, Reported: s.Reported, Note: s.Note, Cases: s.Cases}
		switch {
		case s.Measured && s.Cases != nil:
			sum.Ours = finite(s.Ours)
		case s.Measured:
			sum.Ours, sum.Ratio = finite(s.Ours), finite(s.Ratio())
		}
		out.Scores = append(out.Scores, sum)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func formatScore(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
