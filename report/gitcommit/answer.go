package gitcommit

import (
	"fmt"
	"slices"

	"persistlab/report"
	"persistlab/results"
)

// Seed 004's plan: the size below which its repositories never grow to where its paces part.
const (
	seed004Files   = 5000
	seed004Changes = 20000
)

// hddTypes are the EBS types that bill a MiB of throughput per I/O and burst on MiB of credit.
var hddTypes = []string{"st1", "sc1"}

// answerRow is one row of the table, for the answer: its backend, layout, volume type (""
// without a volume model) and figures.
type answerRow struct {
	backend, layout, typ string
	agg                  results.Aggregate
	pace                 report.Ranked // changes/s, with its range over runs
	price                float64       // the volume's list price per month, 0 without a model
}

func answerRows(r *results.Results) []answerRow {
	var out []answerRow
	for _, b := range r.BackendOrder() {
		for _, a := range r.AggregatesOf(b) {
			row := answerRow{backend: b, layout: a.Resolved["layout"], agg: a, pace: report.RankedOf(r, a, "changes_per_s")}
			if m, ok := report.VolumeModel(r, b); ok {
				row.typ, row.price = m.Type, m.MonthlyUSD
			}
			out = append(out, row)
		}
	}
	return out
}

// gitcommitAnswer answers seed 004's question, which volume commits fastest and at what price per
// month, in the table's changes/s and $/month, the volumes ranked only as far as the run tells
// them apart; then the seed's claims, judged.
func gitcommitAnswer(r *results.Results, a *report.Answer) {
	rows := answerRows(r)
	if len(rows) == 0 { // crash runs only: the crash findings answer
		return
	}
	a.Question = "Which volume commits git changes fastest, and at what price per month?"
	var layouts []string
	for _, row := range rows {
		if !slices.Contains(layouts, row.layout) {
			layouts = append(layouts, row.layout)
		}
	}
	for _, layout := range layouts {
		var volumes, others []answerRow
		for _, row := range rows {
			switch {
			case row.layout != layout:
			case row.typ == "":
				others = append(others, row)
			default:
				volumes = append(volumes, row)
			}
		}
		a.Findings = append(a.Findings, paceFindings(r, layout, volumes, others)...)
	}
	if r.Scenario.Seed == "004" {
		a.AddClaims("004", seed004Claims(r, rows)...)
	}
	if hdd := smallPlanHDD(r, rows); hdd != "" {
		a.Caveats = append(a.Caveats, hdd)
	}
}

func layoutText(layout string) string {
	switch layout {
	case "distributed":
		return "a repository per file"
	case "monolithic":
		return "one repository for all files"
	case "":
		return "the run's layout"
	}
	return "layout " + layout
}

// paceFindings give a layout's changes/s per volume with its price, the volumes in the tiers the
// run can tell apart, and the cheapest of the fastest tier.
func paceFindings(r *results.Results, layout string, volumes, others []answerRow) []string {
	var each []string
	for _, v := range volumes {
		each = append(each, fmt.Sprintf("%s %s ($%.2f/month)", v.backend, report.RangeText(v.pace, "%.1f"), v.price))
	}
	text := "changes/s with " + layoutText(layout) + ": " + report.ListAnd(each)
	if len(others) > 0 {
		var ref []string
		for _, o := range others {
			ref = append(ref, o.backend+" "+report.RangeText(o.pace, "%.1f"))
		}
		if len(volumes) > 0 {
			text += "; without a volume model, for reference: " + report.ListAnd(ref)
		} else {
			text += report.ListAnd(ref)
		}
	}
	out := []string{text}
	if len(volumes) < 2 {
		return out
	}
	byBackend := map[string]answerRow{}
	var figures []report.Ranked
	for _, v := range volumes {
		byBackend[v.backend] = v
		figures = append(figures, v.pace)
	}
	tiers := report.Tiers(figures, false)
	var names []string
	for _, v := range volumes {
		names = append(names, v.backend)
	}
	if len(tiers) == 1 {
		return append(out, "this run cannot tell "+report.ListAnd(names)+" apart"+report.BurstNote(r, names...))
	}
	order := "fastest first: " + report.TiersText(tiers, func(f report.Ranked) string { return f.Backend })
	var hddTied []string
	for _, f := range tiers[0] {
		if slices.Contains(hddTypes, byBackend[f.Backend].typ) {
			hddTied = append(hddTied, f.Backend)
		}
	}
	best := tiers[0]
	_, _, small := planSize(r)
	switch {
	case len(best) > 1 && small && len(hddTied) > 0:
		// A short plan never reaches the HDD types' fall: no pick on price from it.
		order += fmt.Sprintf("; %s among the fastest only in a plan this short (below)", report.ListAnd(hddTied))
	case len(best) > 1:
		cheap := byBackend[best[0].Backend]
		for _, f := range best[1:] {
			if v := byBackend[f.Backend]; v.price < cheap.price {
				cheap = v
			}
		}
		var rest []string
		for _, f := range best {
			if f.Backend != cheap.backend {
				rest = append(rest, fmt.Sprintf("%s's $%.2f", f.Backend, byBackend[f.Backend].price))
			}
		}
		order += fmt.Sprintf("; of the fastest, %s costs least: $%.2f/month against %s", cheap.backend, cheap.price, report.ListAnd(rest))
	}
	return append(out, order+report.BurstNote(r, names...))
}

// smallPlanHDD says, for a plan smaller than the seed's on HDD volumes, that its repositories
// never grow to where the seed's HDD pace falls, with how little the volumes read per change.
func smallPlanHDD(r *results.Results, rows []answerRow) string {
	files, changes, small := planSize(r)
	if !small {
		return ""
	}
	var hdd []string
	for _, row := range rows {
		if slices.Contains(hddTypes, row.typ) && !slices.Contains(hdd, row.backend) {
			hdd = append(hdd, row.backend)
		}
	}
	if len(hdd) == 0 {
		return ""
	}
	return fmt.Sprintf("%s changes on %s files, under seed 004's %d on %d: the seed's HDD pace fell as its repositories grew, so this run cannot show the pace of %s over time; %s",
		changes, files, seed004Changes, seed004Files, report.ListAnd(hdd), fullPlanCommand(r))
}

// planSize is the run's files and changes, and whether they fall short of the seed's plan.
func planSize(r *results.Results) (files, changes string, small bool) {
	p := report.FixedParams(r)
	files, changes = p["files"], p["changes"]
	return files, changes, results.ParamNumber(files) < seed004Files || results.ParamNumber(changes) < seed004Changes
}

// fullPlanCommand runs the seed's plan: the full plan of a quick run, else the run at the seed's
// size.
func fullPlanCommand(r *results.Results) string {
	if r.Scenario.QuickRun {
		return "the full plan settles it: " + report.RerunCommand(r)
	}
	return fmt.Sprintf("the seed's size settles it: %s --set files=%d --set changes=%d", report.RerunCommand(r), seed004Files, seed004Changes)
}
