package gitcommit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"persistlab/lab"
	"persistlab/report"
	"persistlab/results"
)

// Seed 004's volumes with what each read and read again: st1 read again most of what it read
// (host-bound), io1 a tenth (not), sc1 as much as st1 but its instance reached its memory limit
// (its own reclaim: not marked), and gp2's cells are of an earlier persistlab that did not
// measure refaults (not measured, never 0%).
func TestRowsThatReadAgainWhatThisMachineTookBackAreHostBound(t *testing.T) {
	r := seed004Run(5000, 20000, 1, 0, seed004Paces)
	const mib = 1 << 20
	for i, c := range r.Cells {
		var reads, refaults, hits float64
		switch c.Backend {
		case "st1":
			reads, refaults = 800*mib, 600*mib
		case "io1":
			reads, refaults = 800*mib, 80*mib
		case "sc1":
			reads, refaults, hits = 800*mib, 600*mib, 3
		case "gp2":
			r.Cells[i].BackendStats = map[string]float64{lab.VolumeReadBytes: 800 * mib}
			continue
		default:
			continue
		}
		r.Cells[i].BackendStats = map[string]float64{lab.VolumeReadBytes: reads}
		r.Cells[i].Metrics[results.RefaultBytesMetric] = refaults
		r.Cells[i].Metrics[results.MemoryLimitHitsMetric] = hits
		r.Cells[i].Facts = map[string]string{results.RefaultSourceFact: results.RefaultsFromInstance}
	}
	report.Summarize(r)
	marked := map[string]bool{}
	for _, a := range r.Aggregates {
		marked[a.Backend] = report.HostBound(a) != ""
	}
	if !marked["st1"] || marked["io1"] || marked["sc1"] || marked["gp2"] || marked["local"] {
		t.Errorf("host-bound rows %v, want st1 alone", marked)
	}
	if share := r.AggregatesOf("st1")[0].Median[report.RefaultShareMetric]; share != 0.75 {
		t.Errorf("st1's share read again %g, want 600/800", share)
	}
	if _, measured := r.AggregatesOf("gp2")[0].Median[report.RefaultShareMetric]; measured {
		t.Error("gp2, which measured no refaults, has a share")
	}

	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	caveat := "st1 was host-bound: 25% or more of what its volume read was page cache this machine took back"
	if !strings.Contains(strings.Join(strings.Fields(text), " "), caveat) {
		t.Errorf("the answer lacks %q:\n%s", caveat, text)
	}
	_, table, ok := strings.Cut(text, "page cache read again while measured")
	if !ok {
		t.Fatalf("no refault table:\n%s", text)
	}
	lines := map[string]string{} // the table's rows, by their first word, up to the blank line after it
	for i, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 && i > 0 {
			break
		}
		if len(f) > 0 {
			lines[f[0]] = line
		}
	}
	for b, want := range map[string][]string{"st1": {"800.0", "600.0", "75%", "0 times", "instance", "host-bound"}, "io1": {"80.0", "10%"},
		"sc1": {"75%", "3 times"}, "gp2": {"800.0", "not measured"}} {
		for _, w := range want {
			if !strings.Contains(lines[b], w) {
				t.Errorf("%s's row lacks %q: %q", b, w, lines[b])
			}
		}
		if b != "st1" && strings.Contains(lines[b], "host-bound") {
			t.Errorf("%s is marked: %q", b, lines[b])
		}
	}
	if _, listed := lines["local"]; listed {
		t.Errorf("local, no volume, is listed: %q", lines["local"])
	}

	data, err := json.Marshal(report.Summarized(r))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"host_bound":`); n != 1 || !strings.Contains(string(data), `"host_bound":"75% of what its volume read`) {
		t.Errorf("the summary marks %d rows host-bound: %s", n, data)
	}
}
