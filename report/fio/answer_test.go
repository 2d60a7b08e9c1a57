package fio

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/lab"
	"persistlab/measure"
	"persistlab/report"
	"persistlab/report/reporttest"
	"persistlab/results"
	"persistlab/scenario"
)

func findingsOf(r *results.Results) string {
	a := report.AnswerOf(r)
	return strings.Join(strings.Fields(strings.Join(append(append(a.Findings, a.ClaimLines()...), a.Caveats...), "\n")), " ")
}

// Seed 002's verdicts open the answer as the table below gives them, and flip with the figures.
func TestSeed002VerdictsOpenTheAnswer(t *testing.T) {
	backends := []scenario.BackendSpec{{Name: "gcsfuse", Label: "nocache"}, {Name: "gcsfuse", Label: "cache", Options: map[string]string{"file_cache": "on"}}}
	sweep := scenario.Sweep{{Name: "file_size", Values: []string{"10KiB", "1GiB"}}, {Name: "rw", Values: []string{"read", "randread", "write", "randwrite"}}}
	run := func(readGain float64) *results.Results {
		r := fioResults(t, backends, sweep, func(b string, p map[string]string) float64 {
			if b == "cache" && p["rw"] == "read" {
				return 100 * readGain
			}
			return 100
		})
		r.Scenario.Seed = "002"
		return r
	}
	r := run(3)
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	const want = "seed 002 claims read is faster with the cache (cache against nocache): TRUE (2 of 2 hold: 10KiB 100.0 vs 300.0 MiB/s; 1GiB 100.0 vs 300.0 MiB/s)"
	answer, tables, _ := strings.Cut(text, "\nfio, ")
	if !strings.Contains(strings.Join(strings.Fields(answer), " "), want) {
		t.Errorf("answer lacks %q:\n%s", want, answer)
	}
	if !strings.Contains(tables, "1. read is faster with the cache: TRUE (2 of 2 hold: 10KiB 100.0 vs 300.0 MiB/s; 1GiB 100.0 vs 300.0 MiB/s)") {
		t.Errorf("the table's verdict differs from the answer's:\n%s", tables)
	}
	if got := findingsOf(run(0.5)); !strings.Contains(got, "seed 002 claims read is faster with the cache (cache against nocache): FALSE (0 of 2 hold, 2 fail") {
		t.Errorf("the cache halving reads: want FALSE in:\n%s", got)
	}
	// The same cases in a scenario of no seed's are hypotheses, not seed 002's claims.
	other := run(3)
	other.Scenario.Seed = ""
	if got := findingsOf(other); strings.Contains(got, "seed 002") || !strings.Contains(got, "hypothesis: read is faster with the cache (cache against nocache): TRUE") {
		t.Errorf("a scenario of no seed: want hypotheses in:\n%s", got)
	}
	// 14% faster in one run each is within what one run can tell apart: not a verdict.
	if got := findingsOf(run(1.14)); !strings.Contains(got, "seed 002 claims read is faster with the cache (cache against nocache): not judged: the run cannot tell any case from noise: 0 of 2 hold, 2 cannot tell") {
		t.Errorf("the cache 14%% faster in one run: want not judged in:\n%s", got)
	}
}

// seed003Run is gcsfuse alone over seed 003's linked axis of mode, file size and block size.
func seed003Run(t *testing.T, values []string, mibs map[string]float64) *results.Results {
	axis := scenario.Axis{Name: "rw+file_size+bs", Values: values}
	r := fioResults(t, []scenario.BackendSpec{{Name: "gcsfuse"}}, scenario.Sweep{axis}, func(_ string, p map[string]string) float64 {
		return mibs[p["rw"]+"/"+p["file_size"]]
	})
	r.Scenario.Seed = "003"
	return r
}

// Seed 003's claims are judged over the run's file sizes: sequential reads near their best from
// 10 MB up, sequential ahead of random reads, random writes like sequential ones.
func TestSeed003ClaimsFollowTheFileSizes(t *testing.T) {
	values := []string{"read/128KiB/128KiB", "read/10MiB/1MiB", "read/1GiB/1MiB", "randread/128KiB/128KiB", "randread/10MiB/1MiB", "randread/1GiB/1MiB", "write/1MiB/1MiB"}
	mibs := map[string]float64{"read/128KiB": 40, "read/10MiB": 380, "read/1GiB": 400, "randread/128KiB": 20, "randread/10MiB": 100, "randread/1GiB": 150, "write/1MiB": 50}
	text := findingsOf(seed003Run(t, values, mibs))
	for _, want := range []string{
		"gcsfuse read: 40.0 MiB/s at 128KiB, best 400.0 at 1GiB (the smallest file at 0.10x the best)",
		"seed 003 claims sequential reads run near their best on files of 10 MB to 1 GB: TRUE (2 of 2: 10MiB 380.0 of the best 400.0 MiB/s; 1GiB 400.0 of the best 400.0 MiB/s)",
		"seed 003 claims sequential reads outrun random reads: TRUE (3 of 3: 128KiB 40.0 vs 20.0 MiB/s; 10MiB 380.0 vs 100.0 MiB/s; 1GiB 400.0 vs 150.0 MiB/s)",
		"seed 003 claims random writes run as fast as sequential writes: not judged: the run has no random writes",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	mibs["read/10MiB"], mibs["randread/128KiB"], mibs["randread/1GiB"] = 200, 60, 600
	mibs["randwrite/1MiB"] = 52
	text = findingsOf(seed003Run(t, append(values, "randwrite/1MiB/1MiB"), mibs))
	for _, want := range []string{
		"seed 003 claims sequential reads run near their best on files of 10 MB to 1 GB: PARTLY (1 of 2: NOT 10MiB 200.0 of the best 400.0 MiB/s",
		"seed 003 claims sequential reads outrun random reads: PARTLY (1 of 3: NOT 128KiB 40.0 vs 60.0 MiB/s; 10MiB 200.0 vs 100.0 MiB/s; NOT 1GiB 400.0 vs 600.0 MiB/s)",
		"seed 003 claims random writes run as fast as sequential writes: TRUE (1 of 1: 1MiB 50.0 vs 52.0 MiB/s)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("flipped figures: want %q in:\n%s", want, text)
		}
	}
}

// Fio on emulated volumes: the backends ranked at each point in the tiers one run tells apart,
// how many rows came within the margin of the volume's model, and a burst the runs never drained
// said once, pointing at the drained volume of the same kind the run has.
func TestFioOnVolumesRanksHoldsToTheModelAndNamesTheDrainedTwin(t *testing.T) {
	backends := []scenario.BackendSpec{reporttest.Volume("gp2-100g", "gp2", "100GiB"), reporttest.Volume("gp2-100g-dry", "gp2", "100GiB", "credit_scale", "0.0000002"),
		reporttest.Volume("st1-500g", "st1", "500GiB")}
	sweep := scenario.Sweep{{Name: "rw+bs+iodepth", Values: []string{"randwrite/4KiB/16", "read/1MiB/8"}}}
	share := map[string]float64{"gp2-100g": 1, "gp2-100g-dry": 0.1, "st1-500g": 0.9}
	r := reporttest.Fio(backends, sweep, func(string, map[string]string) float64 { return 0 })
	r.Scenario.Workload.Params = map[string]string{"engine": "libaio", "numjobs": "1"}
	r.FillResolved()
	for i := range r.Cells {
		c := &r.Cells[i]
		m, _ := backend.VolumeModelOf("volume", r.Scenario.Backends[c.Index/2].Options)
		job, ok := fioJob(c.Resolved)
		if !ok {
			t.Fatalf("cell %v is no fio job", c.Params)
		}
		iops := share[c.Backend] * m.Expect(job)
		c.Metrics["iops"], c.Metrics["mib_s"] = iops, iops*float64(job.BS)/(1<<20)
		if c.Backend != "st1-500g" {
			balance := reporttest.Line(m.CreditIOs, 0.99*m.CreditIOs, 5, 10)
			if c.Backend == "gp2-100g-dry" {
				balance = reporttest.Line(0, 0, 5, 10)
			}
			c.Series = map[string][]measure.Point{lab.StatsSeries(lab.VolumeCreditIOs): balance,
				lab.StatsSeries(lab.VolumeWriteUnits): reporttest.Line(0, 5*iops*max(1, float64(job.BS)/(256<<10)), 5, 10)} // 256 KiB units
		}
	}
	report.Summarize(r)
	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := findingsOf(r)
	gp2 := r.AggregatesOf("gp2-100g")[0].Median["mib_s"]
	for _, want := range []string{
		fmt.Sprintf("MiB/s at rw=randwrite bs=4KiB iodepth=16: highest first: gp2-100g %.1f", gp2),
		"fio against each volume's model: 4 of 6 rows within 25% of the IOPS its published limits allow; furthest gp2-100g-dry",
		"gp2-100g never used up its burst credits (at most 1% of its bucket drawn, in a run of 5 s;",
		"gp2-100g-dry, the same volume drained, measures it",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	if !strings.Contains(out.String(), fmt.Sprintf("%.1f", gp2)) || !strings.Contains(out.String(), "0.10") {
		t.Errorf("the tables lack the answer's figures:\n%s", out.String())
	}
	if strings.Contains(text, "credit_scale") || strings.Contains(text, "gp2-100g-dry ran") {
		t.Errorf("a drained twin in the run settles it, yet the answer asks for another run:\n%s", text)
	}
}
