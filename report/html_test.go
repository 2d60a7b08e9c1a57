package report

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/results"
)

// A backend's colour is set by its name in the run's order, whichever backends a chart draws.
func TestGroupColoursByName(t *testing.T) {
	r := &results.Results{Scenario: counterSpec("gcsfuse", "litestream", "local")}
	charts := []Chart{{Series: []Series{{Group: "local"}, {Group: "litestream write 0"}}}, {Bars: []Bar{{Group: "litestream"}}}}
	colours := groupColours(r, charts)
	if colours["gcsfuse"] != palette[0] || colours["litestream"] != palette[1] || colours["local"] != palette[2] || colours["litestream write 0"] != palette[3] {
		t.Errorf("colours %v", colours)
	}
	// Past the palette, each group still gets a colour of its own.
	seen := map[string]bool{}
	for i := range 40 {
		c := colourAt(i)
		if seen[c] || len(c) != 7 || c[0] != '#' {
			t.Errorf("colour %d: %q (seen before: %v)", i, c, seen[c])
		}
		seen[c] = true
	}
}

// The verdict opens the page, above the charts, when there is one; the slot is empty otherwise.
func TestAnswerOpensThePage(t *testing.T) {
	var b bytes.Buffer
	if err := page.Execute(&b, pageData{Title: "t", Answer: []string{"litestream answers 1.2x faster than gcsfuse"}}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	answer, charts := strings.Index(html, "litestream answers 1.2x faster"), strings.Index(html, `<div id="charts">`)
	if answer < 0 || charts < 0 || answer > charts || !strings.Contains(html, `id="answer"`) {
		t.Errorf("answer at %d, charts at %d", answer, charts)
	}
	b.Reset()
	if err := page.Execute(&b, pageData{Title: "t"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="answer"`) {
		t.Error("an empty answer drew its block")
	}
}

// Cost charts are drawn from priced rows only: none when no row is priced, and none of zeros.
func TestCostChartsOnlyOfFigures(t *testing.T) {
	costChartIDs := func(r *results.Results) []string {
		var ids []string
		for _, c := range costCharts(r) {
			ids = append(ids, c.ID)
		}
		return ids
	}
	r := &results.Results{Schema: results.Schema, Scenario: counterSpec("gcsfuse", "local")}
	r.Aggregates = []results.Aggregate{
		{Backend: "gcsfuse", Point: "vus=2", Bucket: &results.BucketUse{TooFewToPrice: true, ClassAPerS: 0.2}},
		{Backend: "local", Point: "vus=2"},
	}
	// Crash runs of a backend without a bucket that lost nothing: no figure to set against a cost.
	r.CrashSummaries = []results.CrashSummary{{Backend: "local", Point: "vus=2", Runs: 3}}
	if ids := costCharts(r); len(ids) != 0 {
		t.Errorf("charts of nothing priced: %v", costChartIDs(r))
	}
	r.Aggregates = append(r.Aggregates, results.Aggregate{Backend: "gcsfuse", Point: "vus=8",
		Bucket: &results.BucketUse{ClassAPerS: 1, Costs: []results.Cost{{Prices: "GCS", USDPerMonth: 12.96}}}})
	r.CrashSummaries = append(r.CrashSummaries, results.CrashSummary{Backend: "gcsfuse", Point: "vus=8", Runs: 3, LostMax: 2, LostMedian: 1})
	charts := costCharts(r)
	if len(charts) != 2 {
		t.Fatalf("charts %v", costChartIDs(r))
	}
	cost, lost := charts[0], charts[1]
	if len(cost.Bars) != 1 || cost.Bars[0].Value != 12.96 || !strings.Contains(cost.Note, "gcsfuse vus=2") || !strings.Contains(cost.Note, "local") {
		t.Errorf("cost chart %+v", cost)
	}
	// local (no bucket) at $0 having lost nothing, gcsfuse at vus=8 from 1 to 2 lost at $12.96.
	if len(lost.Series) != 2 || lost.Series[0].Points[0] != [2]float64{0, 0} || lost.Series[1].Points[0] != [2]float64{12.96, 1} ||
		lost.Series[1].Points[1] != [2]float64{12.96, 2} {
		t.Errorf("lost against cost %+v", lost)
	}
}
