package bulkload

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"persistlab/measure"
	"persistlab/report"
	"persistlab/report/reporttest"
	"persistlab/results"
	"persistlab/scenario"
)

// seed001Run is seed 001's plan on Cloud SQL disks of 50 to 600 GB, loaders swept as given: each
// row's steady write ops/s from ops (times twoLoaders with two loaders) and its load time from
// seconds.
func seed001Run(ops, seconds map[int]float64, twoLoaders float64, loaders ...string) *results.Results {
	var backends []scenario.BackendSpec
	for _, gb := range []int{50, 100, 200, 400, 600} {
		backends = append(backends, reporttest.Volume(fmt.Sprintf("sql-%d", gb), "cloudsql-ssd", fmt.Sprintf("%dGiB", gb), "instance", "db-n1-standard-2"))
	}
	spec := &scenario.Spec{Name: "t", Seed: "001", Workload: scenario.Workload{Type: "bulkload", Params: map[string]string{"rows": "1000", "row_bytes": "1000"}},
		Backends: backends, Sweep: scenario.Sweep{{Name: "loaders", Values: loaders}}, Repeat: 1}
	r := &results.Results{Schema: results.Schema, Status: results.StatusComplete, Scenario: spec}
	for _, c := range spec.Plan() {
		var gb int
		fmt.Sscanf(c.Backend, "sql-%d", &gb)
		rate := ops[gb]
		if c.Params["loaders"] == "2" {
			rate *= twoLoaders
		}
		r.Cells = append(r.Cells, results.Cell{Cell: c,
			Metrics: map[string]float64{"pages_written_per_s": rate * 0.8, "server_cpu_util": 0.7, "total_s": seconds[gb], "checkpoint_age_mib": 75},
			Series:  map[string][]measure.Point{"backend.volume_write_ops": reporttest.Line(0, 20*rate, 20, 20), "backend.volume_throttled_s": reporttest.Line(0, 10, 20, 20)}})
	}
	report.Summarize(r)
	return r
}

var (
	seed001Ops     = map[int]float64{50: 1500, 100: 2900, 200: 5000, 400: 5200, 600: 5300}
	seed001Seconds = map[int]float64{50: 400, 100: 210, 200: 120, 400: 115, 600: 112}
)

func answerOf(r *results.Results) string {
	a := report.AnswerOf(r)
	return strings.Join(strings.Fields(strings.Join(append(append(a.Findings, a.ClaimLines()...), a.Caveats...), "\n")), " ")
}

// The answer gives each disk's load time, write ops/s and price as the tables print them, ranks
// the sizes as far as one run tells them apart, and says where a bigger disk stops paying.
func TestTheAnswerSaysWhereABiggerDiskStopsPaying(t *testing.T) {
	r := seed001Run(seed001Ops, seed001Seconds, 1, "1")
	var out bytes.Buffer
	report.WriteTables(&out, r)
	answer, tables, ok := strings.Cut(out.String(), "\nbulkload: ")
	if !ok {
		t.Fatalf("no table after the answer:\n%s", out.String())
	}
	answer = strings.Join(strings.Fields(answer), " ")
	tables = strings.Join(strings.Fields(tables), " ")
	for _, gb := range []int{50, 100, 200, 400, 600} {
		m, _ := report.VolumeModel(r, fmt.Sprintf("sql-%d", gb))
		want := fmt.Sprintf("%d GB %.0f s at %.0f write ops/s ($%.2f/month)", gb, seed001Seconds[gb], seed001Ops[gb], m.MonthlyUSD)
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
		if row := fmt.Sprintf("sql-%d %d 1 ", gb, gb); !strings.Contains(tables, row) || !strings.Contains(tables, fmt.Sprintf(" %.0f ", seed001Ops[gb])) || !strings.Contains(tables, fmt.Sprintf(" %.2f", m.MonthlyUSD)) {
			t.Errorf("the table lacks the %d GB row's figures", gb)
		}
	}
	for _, want := range []string{
		"fastest first: 600 GB, 400 GB and 200 GB (cannot be told apart), then 100 GB, then 50 GB; the smallest of the fastest is 200 GB at $34.00/month, and 600 GB costs $68.00/month more for a load this run cannot tell from it",
		"write ops/s stop growing between 200 and 400 GB (x1.04 where the disk's limit grew x2.00, for $34.00/month more): neither the disk",
		"seed 001 claims doubling the disk gives about 1.8x the write I/O, up to 200 GB: TRUE (2 of 2: 50 to 100 GB x1.93; 100 to 200 GB x1.72)",
		"seed 001 claims beyond some size the write I/O stops growing: TRUE (between 200 and 400 GB, x1.04)",
		"seed 001 claims where growth stops, neither the disk nor the CPU binds: MySQL itself does: TRUE (400 GB: neither the disk",
		"seed 001 claims the disk writes well below the I/O its size allows: PARTLY (3 of 5: NOT 50 GB 100% of its limit; NOT 100 GB 97% of its limit; 200 GB 83% of its limit",
		"seed 001 claims 50 to 100 GB doubles the write I/O for $11/month more: TRUE (x1.93 for $8.50/month more)",
		"seed 001 claims a second loader adds little write I/O: not judged: the run has no row with two loaders beside one",
		"growth stops between 200 and 400 GB (x1.04", // the doublings table says it too
	} {
		if !strings.Contains(answer+" "+tables, want) {
			t.Errorf("want %q in:\n%s", want, answer)
		}
	}
}

// The claims flip with the figures: a disk whose write I/O keeps doubling never stops growing; a
// flat one stops at once; a second loader that doubles the I/O adds more than a little.
func TestSeed001ClaimsFlipWithTheFigures(t *testing.T) {
	growing := seed001Run(map[int]float64{50: 500, 100: 1000, 200: 2000, 400: 4000, 600: 6000}, seed001Seconds, 1.1, "1", "2")
	text := answerOf(growing)
	for _, want := range []string{
		"seed 001 claims doubling the disk gives about 1.8x the write I/O, up to 200 GB: TRUE (2 of 2: 50 to 100 GB x2.00; 100 to 200 GB x2.00)",
		"seed 001 claims beyond some size the write I/O stops growing: FALSE (it grew x2.00, x2.00, x2.00 and x1.50 from step to step up to 600 GB)",
		"seed 001 claims where growth stops, neither the disk nor the CPU binds: MySQL itself does: not judged: the write I/O never stopped growing in this run",
		"seed 001 claims a second loader adds little write I/O: TRUE (5 of 5: 50 GB x1.10;",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	flat := seed001Run(map[int]float64{50: 1000, 100: 1100, 200: 1150, 400: 1200, 600: 1200}, map[int]float64{50: 110, 100: 100, 200: 100, 400: 95, 600: 100}, 2, "1", "2")
	text = answerOf(flat)
	for _, want := range []string{
		"this run cannot tell the load times of 50 GB, 100 GB, 200 GB, 400 GB and 600 GB apart: a bigger disk did not load faster",
		"seed 001 claims doubling the disk gives about 1.8x the write I/O, up to 200 GB: FALSE (0 of 2",
		"seed 001 claims beyond some size the write I/O stops growing: TRUE (between 50 and 100 GB, x1.10)",
		"seed 001 claims 50 to 100 GB doubles the write I/O for $11/month more: FALSE (x1.10 for $8.50/month more)",
		"seed 001 claims a second loader adds little write I/O: FALSE (0 of 5",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
}
