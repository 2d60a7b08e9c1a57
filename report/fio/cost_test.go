package fio

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

// A run whose work was a few KiB while gcsfuse moved whole GiB objects through the bucket (one
// 4 KiB write per job into a 1 GiB file) is not priced per GiB: its price would multiply a few
// operations' bytes by over a thousand. A row whose work matches the bucket's bytes is priced, and
// the backend's pooled price leaves the thin row's runs out.
func TestTooLittleWorkIsNotPricedPerUnit(t *testing.T) {
	spec := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: "fio"}, Repeat: 2,
		Backends: []scenario.BackendSpec{{Name: "gcsfuse"}},
		Sweep:    scenario.Sweep{{Name: "rw", Values: []string{"read", "randwrite", "randread"}}}}
	r := &results.Results{Schema: results.Schema, Scenario: spec}
	for _, c := range spec.Plan() {
		work, moved, classA := float64(256<<20), float64(256<<20), 40.0 // read: the bucket moves what fio read
		classB := 400.0
		switch c.Params["rw"] {
		case "randwrite":
			work, moved, classA = 64<<10, 2*(1<<30), 16 // 16 jobs x 4 KiB; each job's write re-uploads the file
		case "randread":
			classA, classB = 0, 3 // too few operations to price: priced pooled instead
		}
		r.Cells = append(r.Cells, results.Cell{Cell: c, ElapsedS: 10,
			Metrics: map[string]float64{"mib_s": work / (1 << 20) / 10, "bytes": work},
			BackendStats: map[string]float64{"bucket_class_a": classA, "bucket_class_b": classB,
				"bucket_bytes_in": moved / 2, "bucket_bytes_out": moved / 2}})
	}
	report.Summarize(r)
	if len(r.Aggregates) != 3 {
		t.Fatalf("aggregates %+v", r.Aggregates)
	}
	read, write := r.Aggregates[0].Bucket, r.Aggregates[1].Bucket
	if read == nil || read.TooLittleWork || len(read.Costs) == 0 {
		t.Errorf("read row: %+v, want priced", read)
	}
	if write == nil || !write.TooLittleWork || len(write.Costs) != 0 {
		t.Fatalf("randwrite row: %+v, want too little work and no costs", write)
	}
	if write.UnitsPerRun != float64(64<<10)/(1<<30) || write.BucketBytesPerRun != 2*(1<<30) {
		t.Errorf("randwrite per run: %v units, %v bytes through the bucket", write.UnitsPerRun, write.BucketBytesPerRun)
	}
	// The operations per GiB stay as measured: 16 class A per 64 KiB is 262,144 per GiB.
	if write.ClassA != 16/(float64(64<<10)/(1<<30)) {
		t.Errorf("randwrite class A per GiB %v", write.ClassA)
	}

	var out bytes.Buffer
	report.WriteTables(&out, r)
	text := out.String()
	flat := strings.Join(strings.Fields(text), " ")
	// The pooled price of the backend rests on the read and randread runs only: 2 rows, 4 runs,
	// 80 + 0 class A and 800 + 6 class B.
	for _, want := range []string{"† 64 KiB of work, 2 GiB through the bucket per run", "† not priced: in most runs of gcsfuse rw=randwrite the work was under 1/1000 of a GiB",
		"gcsfuse: 80 class A, 806 class B in 4 run(s) of 2 row(s), 40.0 s"} {
		if !strings.Contains(flat, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "gcsfuse" && f[1] == "rw=randwrite" && strings.Contains(line, "$") {
			t.Errorf("randwrite row carries a price: %q", line)
		}
	}
}
