package fio

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"persistlab/backend"
	"persistlab/report"
	"persistlab/results"
)

// fioAnswer answers a fio run in the tables' MiB/s: seed 002's shape (gcsfuse without and with
// its file cache over file sizes) by its four hypotheses; a sweep over file sizes by each mode's
// bandwidth from the smallest file to the best, and seed 003's claims; otherwise the backends
// ranked at each point. Emulated volumes add how close fio came to their model.
func fioAnswer(r *results.Results, a *report.Answer) {
	if len(r.Aggregates) == 0 {
		return
	}
	pairs := cachePairs(r)
	_, sized := r.Scenario.Sweep.Get("file_size")
	switch {
	case sized && len(pairs) > 0:
		a.Question = "Does gcsfuse's file cache make reads faster, and does it leave writes alike?"
		whose := "the hypotheses"
		if r.Scenario.Seed == "002" {
			whose = "seed 002's hypotheses"
		}
		a.Caveats = append(a.Caveats, whose+" are judged case by case: "+seed002Test(r))
		for _, p := range pairs {
			for _, v := range seed002Verdicts(r, p.off, p.on) {
				claim := v.judged(fmt.Sprintf("%s (%s against %s)", v.claim, p.on, p.off))
				if r.Scenario.Seed != "002" { // seed 002's hypotheses, on a run of another scenario
					a.Findings = append(a.Findings, claim.Finding(""))
					continue
				}
				a.AddClaims("002", claim)
			}
		}
	case r.Scenario.Sweep.Has("file_size") && len(r.BackendOrder()) == 1:
		a.Question = "How fast does " + r.BackendOrder()[0] + " read and write files of each size?"
		a.Findings = append(a.Findings, bySizeFindings(r)...)
		if r.Scenario.Seed == "003" {
			a.AddClaims("003", seed003Claims(r)...)
		}
	default:
		a.Question = "How fast is each backend under these fio jobs?"
		a.Findings = append(a.Findings, report.RankPoints(r, report.CompareMetric{Name: "mib_s", HigherBetter: true}, "MiB/s", "%.1f")...)
	}
	if f := volumeModelFinding(r); f != "" {
		a.Question = strings.TrimSuffix(a.Question, "?") + ", and how close to its volume's published limits?"
		a.Findings = append(a.Findings, f)
	}
}

// sizeRow is a row's mode, file size and MiB/s.
type sizeRow struct {
	backend, rw, size string
	bytes, mibs       float64
	fig               report.Ranked // MiB/s with its range over runs
}

// sizeRows are the rows of a run over file sizes, by backend and mode, smallest file first.
func sizeRows(r *results.Results) map[string]map[string][]sizeRow {
	out := map[string]map[string][]sizeRow{}
	for _, a := range r.Aggregates {
		p := a.Resolved
		row := sizeRow{backend: a.Backend, rw: p["rw"], size: p["file_size"], bytes: results.ParamNumber(p["file_size"]), mibs: a.Median["mib_s"], fig: report.RankedOf(r, a, "mib_s")}
		if row.bytes <= 0 {
			continue
		}
		if out[a.Backend] == nil {
			out[a.Backend] = map[string][]sizeRow{}
		}
		out[a.Backend][row.rw] = append(out[a.Backend][row.rw], row)
	}
	for _, modes := range out {
		for _, rows := range modes {
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].bytes < rows[j].bytes })
		}
	}
	return out
}

// bySizeFindings say, per backend and mode, the smallest file's MiB/s against the best.
func bySizeFindings(r *results.Results) []string {
	rows := sizeRows(r)
	var out []string
	for _, b := range r.BackendOrder() {
		for _, rw := range []string{"read", "randread", "write", "randwrite", "readwrite", "randrw"} {
			list := rows[b][rw]
			if len(list) == 0 {
				continue
			}
			best := list[0]
			for _, row := range list {
				if row.mibs > best.mibs {
					best = row
				}
			}
			text := fmt.Sprintf("%s %s: %.1f MiB/s at %s", b, rw, list[0].mibs, list[0].size)
			if best.size != list[0].size {
				text += fmt.Sprintf(", best %.1f at %s", best.mibs, best.size)
				if best.mibs > 0 {
					text += fmt.Sprintf(" (the smallest file at %.2fx the best)", list[0].mibs/best.mibs)
				}
			}
			out = append(out, text)
		}
	}
	return out
}

// seed003Claims judges what gcsfuse's benchmark page concludes, on the run's one backend.
func seed003Claims(r *results.Results) []report.Claim {
	rows := sizeRows(r)[r.BackendOrder()[0]]
	at := func(rw string, size float64) (sizeRow, bool) {
		for _, row := range rows[rw] {
			if row.bytes == size {
				return row, true
			}
		}
		return sizeRow{}, false
	}
	var out []report.Claim
	// "GCSFuse performs well for sequential reads and recommendation is to use GCSFuse for doing
	// sequential reads on file sizes > 10MB and < 1GB" (Recommendation for reads): read there
	// runs near the best sequential read.
	const recommended = "sequential reads run near their best on files of 10 MB to 1 GB"
	if reads := rows["read"]; len(reads) > 0 {
		best := 0.0
		for _, row := range reads {
			best = max(best, row.mibs)
		}
		var marks []string
		for _, row := range reads {
			if row.bytes >= 10<<20 && row.bytes <= 1<<30 {
				marks = append(marks, report.Mark(row.mibs*(1+report.OneRunMargin) >= best, fmt.Sprintf("%s %.1f of the best %.1f MiB/s", row.size, row.mibs, best)))
			}
		}
		out = append(out, report.Counted(recommended, marks))
	} else {
		out = append(out, report.NotJudged(recommended, "the run has no sequential reads"))
	}
	// The same recommendation, against its Random Read table: sequential reads outrun random ones.
	var marks []string
	for _, row := range rows["read"] {
		if rand, ok := at("randread", row.bytes); ok {
			marks = append(marks, report.Compared(row.fig, rand.fig, false, fmt.Sprintf("%s %.1f vs %.1f MiB/s", row.size, row.mibs, rand.mibs)))
		}
	}
	out = append(out, report.Counted("sequential reads outrun random reads", marks))
	// "In case of random writes ... the bandwidth will be same as sequential writes." (Random Write)
	const sameWrites = "random writes run as fast as sequential writes"
	marks = nil
	for _, row := range rows["write"] {
		if rand, ok := at("randwrite", row.bytes); ok && row.mibs > 0 {
			ratio := rand.mibs / row.mibs
			marks = append(marks, report.Mark(ratio >= 0.8 && ratio <= 1.25, fmt.Sprintf("%s %.1f vs %.1f MiB/s", row.size, row.mibs, rand.mibs)))
		}
	}
	if len(marks) == 0 {
		out = append(out, report.NotJudged(sameWrites, "the run has no random writes beside sequential ones (the seed's page measured none either)"))
	} else {
		out = append(out, report.Counted(sameWrites, marks))
	}
	return out
}

// volumeModelFinding says how many rows on emulated volumes came within the one-run margin of
// what the volume's model allows, and which came furthest from it, as the model table shows.
func volumeModelFinding(r *results.Results) string {
	type row struct {
		name  string
		ratio float64
	}
	var rows []row
	for _, b := range r.Scenario.Backends {
		m, ok := backend.VolumeModelOf(b.Name, b.Options)
		if !ok {
			continue
		}
		for _, a := range r.AggregatesOf(b.ID()) {
			job, ok := fioJob(a.Resolved)
			if !ok {
				continue
			}
			if want := m.Expect(job); want > 0 && !math.IsInf(want, 0) {
				rows = append(rows, row{strings.TrimSpace(b.ID() + " " + a.Point), a.Median["iops"] / want})
			}
		}
	}
	if len(rows) == 0 {
		return ""
	}
	within := 0
	far := rows[0]
	for _, x := range rows {
		if x.ratio >= 1/(1+report.OneRunMargin) && x.ratio <= 1+report.OneRunMargin {
			within++
		}
		if math.Abs(math.Log(x.ratio)) > math.Abs(math.Log(far.ratio)) {
			far = x
		}
	}
	text := fmt.Sprintf("fio against each volume's model: %d of %d rows within %.0f%% of the IOPS its published limits allow", within, len(rows), 100*report.OneRunMargin)
	if within < len(rows) {
		text += fmt.Sprintf("; furthest %s at %.2fx", far.name, far.ratio)
	}
	return text
}
