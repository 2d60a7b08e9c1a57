package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

func cellParams(over map[string]string) workload.Params {
	return workload.Resolve(Params, nil, over)
}

// A cell's metrics are fio's own numbers for the same job: bandwidth, IOPS and bytes from the JSON
// fio wrote, read independently here.
func TestCellMatchesFiosOwnJSON(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	target, cellDir := t.TempDir(), t.TempDir()
	p := cellParams(map[string]string{"rw": "randwrite", "bs": "4k", "file_size": "4MiB", "numjobs": "2", "fsync": "16"})
	if err := w.Check(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	kept := t.TempDir() // run --fio-json
	in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: target}, CellDir: cellDir, Params: p, ToolOutputDir: kept})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	res, err := in.Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(cellDir, "fio.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The copy kept beyond the work directory is fio's JSON alone, named after the cell, and the
	// cell's facts name it.
	want := filepath.Join(kept, filepath.Base(cellDir)+".json")
	copied, err := os.ReadFile(want)
	if err != nil || res.Facts["fio_json"] != want || !json.Valid(copied) || !bytes.HasSuffix(raw, copied) {
		t.Errorf("kept %s (%v), fact %q, valid JSON %v", want, err, res.Facts["fio_json"], json.Valid(copied))
	}
	var fio struct {
		Jobs []struct {
			Write struct {
				IOBytes float64 `json:"io_bytes"`
				BW      float64 `json:"bw_bytes"`
				IOPS    float64 `json:"iops"`
				Lat     struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(raw[strings.IndexByte(string(raw), '{'):], &fio); err != nil || len(fio.Jobs) != 1 {
		t.Fatalf("fio's JSON: %v, %d jobs (group_reporting gives one)", err, len(fio.Jobs))
	}
	wantW := fio.Jobs[0].Write
	m := res.Metrics
	if m["write_bytes"] != wantW.IOBytes || m["write_bytes"] != 2*4<<20 || m["bytes"] != m["write_bytes"] || m["read_bytes"] != 0 {
		t.Errorf("bytes %v, fio %v", m["write_bytes"], wantW.IOBytes)
	}
	if math.Abs(m["write_mib_s"]-wantW.BW/(1<<20)) > 1e-9 || m["write_iops"] != wantW.IOPS || m["mib_s"] != m["write_mib_s"] {
		t.Errorf("MiB/s %v IOPS %v; fio %v %v", m["write_mib_s"], m["write_iops"], wantW.BW/(1<<20), wantW.IOPS)
	}
	if m["fsyncs"] < 1 || m["write_lat_p99_ms"] < m["write_lat_p50_ms"] || m["write_lat_avg_ms"] <= 0 {
		t.Errorf("fsyncs %v, p50 %v p99 %v avg %v", m["fsyncs"], m["write_lat_p50_ms"], m["write_lat_p99_ms"], m["write_lat_avg_ms"])
	}
	// Percentiles come from fio's histogram bins, the same fio reports its own from.
	for key, pct := range map[string]string{"write_lat_p50_ms": "50.000000", "write_lat_p99_ms": "99.000000"} {
		ours, ok := m[key]
		theirs := wantW.Lat.Percentile[pct] / 1e6
		if !ok || theirs <= 0 || math.Abs(ours-theirs) > 0.02*theirs {
			t.Errorf("%s: ours %v (present %v), fio's %v", key, ours, ok, theirs)
		}
	}
	if res.Facts["fio_version"] == "" || !strings.Contains(res.Facts["job"], "rw=randwrite") {
		t.Errorf("facts %v", res.Facts)
	}
}

func TestParametersAreCheckedBeforeAnyCell(t *testing.T) {
	// An option off persistlab's list is refused with the scenario, before fio sees it.
	var fe *param.FieldError
	_, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"extra": map[string]any{"bogus_option": 1}}})
	if !errors.As(err, &fe) || fe.Field != "workload.extra" || fe.Value != "bogus_option" || !strings.Contains(fe.Allowed, "list of fio options") {
		t.Errorf("unknown fio option: %v", err)
	}
	w, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"extra": map[string]any{"rate_process": "wobbly"}}})
	if err != nil {
		t.Fatal(err)
	}
	// fio itself refuses a value it does not take, in its own words.
	if err := w.Check(context.Background(), cellParams(nil)); err == nil || !strings.Contains(err.Error(), "failed parsing rate_process=wobbly") {
		t.Errorf("a value fio refuses: %v", err)
	}
	w, _ = New(scenario.Workload{Type: Name})
	for _, tc := range []struct {
		set          map[string]string
		field, value string
	}{
		{map[string]string{"rw": "sideways"}, "workload.rw", "sideways"},
		{map[string]string{"bs": "4XB"}, "workload.bs", "4XB"},
		{map[string]string{"bs": "100"}, "workload.bs", "100"},
		{map[string]string{"numjobs": "0"}, "workload.numjobs", "0"},
		{map[string]string{"time_based": "true"}, "workload.runtime", "0s"},
		{map[string]string{"engine": "carrier_pigeon"}, "workload.engine", "carrier_pigeon"},
	} {
		if err := w.Check(context.Background(), cellParams(tc.set)); !errors.As(err, &fe) || fe.Field != tc.field || fe.Value != tc.value {
			t.Errorf("%v: %v", tc.set, err)
		}
	}
	if _, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"jobs": []any{1}}}); err == nil {
		t.Error("an unknown section was accepted")
	}
	t.Setenv(EnvBinary, "/no/such/fio")
	if _, err := New(scenario.Workload{Type: Name}); err == nil || !strings.Contains(err.Error(), "fio") {
		t.Errorf("fio missing: %v", err)
	}
}

// Seed 002's sweep and seed 003's scaled job validate, and sweeps name fio's parameters.
func TestSweepOverFioParameters(t *testing.T) {
	known := scenario.Known{Workloads: map[string][]param.Param{Name: Params}, Backends: []string{"local"}}
	s := &scenario.Spec{Name: "t", Workload: scenario.Workload{Type: Name, Params: map[string]string{"bs": "4k"}},
		Backends: []scenario.BackendSpec{{Name: "local"}}, Repeat: 1,
		Sweep: scenario.Sweep{{Name: "file_size", Text: "[10KiB, 200MiB, 1GiB]"}, {Name: "rw", Text: "read,write,randread,randwrite"}}}
	if err := s.Validate(known); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Plan()); n != 12 {
		t.Errorf("%d cells, want 3 sizes x 4 modes", n)
	}
	s.Sweep = scenario.Sweep{{Name: "file_size", Text: "10KiB..1GiB"}}
	var fe *param.FieldError
	if err := s.Validate(known); !errors.As(err, &fe) || fe.Field != "sweep.file_size" || !strings.Contains(fe.Allowed, "size") {
		t.Errorf("a range of sizes: %v", err)
	}
	s.Sweep = scenario.Sweep{{Name: "blocksize", Text: "4k"}}
	if err := s.Validate(known); !errors.As(err, &fe) || fe.Field != "sweep.blocksize" || !strings.Contains(fe.Allowed, "bs") {
		t.Errorf("an unknown parameter: %v", err)
	}
}

// A user's own job file runs on the target directory.
func TestUsersOwnJobFile(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	jobFile := filepath.Join(t.TempDir(), "mine.fio")
	os.WriteFile(jobFile, []byte("[global]\nbs=4k\n\n[w]\nrw=write\nsize=1MiB\nnumjobs=2\n"), 0o644)
	p := cellParams(map[string]string{"job_file": jobFile})
	if err := w.Check(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: target}, CellDir: t.TempDir(), Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	res, err := in.Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(target)
	// fio 3.33 reads size=1MiB as 1,000,000 bytes (its KiB/MiB are decimal): two jobs wrote about 2 MB.
	if len(files) != 2 || res.Metrics["write_bytes"] < 1.9e6 || res.Metrics["write_bytes"] > 2.1e6 || !strings.Contains(res.Facts["job"], "directory="+target) {
		t.Errorf("files %d in the target, wrote %v bytes, job:\n%s", len(files), res.Metrics["write_bytes"], res.Facts["job"])
	}
	for body, want := range map[string]string{"[w]\nfilename=/etc/passwd\n": "no /", "include other.fio\n": "include", "[w]\nrw=sideways\n": "rw",
		"[w]\nopendir=/etc\n": "opendir", "[a]\nrw=read\n[b]\nstonewall\nrw=write\n": "stonewall", "[b]\nwait_for=a\n": "wait_for",
		"[b]\nnew_group\n": "new_group", "[w]\ndirectory=/somewhere/else\n": "backend's directory"} {
		bad := filepath.Join(t.TempDir(), "bad.fio")
		os.WriteFile(bad, []byte(body), 0o644)
		if err := w.Check(context.Background(), cellParams(map[string]string{"job_file": bad})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v", body, err)
		}
	}
	// Parameters beside a job file would be ignored: refused, naming the parameter; a default
	// written another way (4k for 4KiB) is not a change.
	var fe *param.FieldError
	if err := w.Check(context.Background(), cellParams(map[string]string{"job_file": jobFile, "rw": "randread"})); !errors.As(err, &fe) || fe.Field != "workload.rw" {
		t.Errorf("rw beside a job file: %v", err)
	}
	if err := w.Check(context.Background(), cellParams(map[string]string{"job_file": jobFile, "bs": "4k", "runtime": "0"})); err != nil {
		t.Errorf("defaults written another way: %v", err)
	}
	// A switch is read as its declaration reads it: off is false, on is true.
	if err := w.Check(context.Background(), cellParams(map[string]string{"job_file": jobFile, "direct": "off", "invalidate": "on", "nrfiles": "01"})); err != nil {
		t.Errorf("switches and numbers written another way: %v", err)
	}
	withExtra, _ := New(scenario.Workload{Type: Name, Sections: map[string]any{"extra": map[string]any{"norandommap": ""}}})
	if err := withExtra.Check(context.Background(), p); !errors.As(err, &fe) || fe.Field != "workload.extra" {
		t.Errorf("extra beside a job file: %v", err)
	}
}

// A target's Wrap (an emulated instance) is put before fio: the job runs behind it, unchanged.
func TestFioRunsBehindTheTargetsWrap(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "it's wrapped")
	wrap := []string{"/bin/sh", "-c", `echo wrapped >> "$0" && exec "$@"`, marker}
	p := cellParams(map[string]string{"rw": "write", "file_size": "1MiB"})
	in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir(), Wrap: wrap}, CellDir: t.TempDir(), Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	res, err := in.Drive(context.Background(), 0)
	if err != nil || res.Metrics["write_bytes"] != 1<<20 {
		t.Fatalf("%v %v", err, res)
	}
	if data, err := os.ReadFile(marker); err != nil || string(data) != "wrapped\n" {
		t.Errorf("the wrap ran %q (%v), want once", data, err)
	}
}

// fio runs on the cell's CPUs (the runner's cpus), the emulated instance's wrap inside them.
func TestFioRunsOnTheCellsCPUs(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	cpu := runtime.NumCPU() - 1
	marker := filepath.Join(t.TempDir(), "cpus")
	wrap := []string{"/bin/sh", "-c", `grep Cpus_allowed_list /proc/self/status >> "$0" && exec "$@"`, marker}
	p := cellParams(map[string]string{"rw": "write", "file_size": "1MiB"})
	in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir(), Wrap: wrap}, CellDir: t.TempDir(), Params: p, CPUs: []int{cpu}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	if _, err := in.Drive(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(marker); err != nil || strings.TrimSpace(strings.TrimPrefix(string(data), "Cpus_allowed_list:")) != strconv.Itoa(cpu) {
		t.Errorf("fio's CPUs %q (%v), want %d", data, err, cpu)
	}
}

// prefill lays the file out, in the emulated instance too, before the measured run starts: the
// file is there at its size once Start returns, and the measured run only reads it.
func TestPrefillLaysTheFileOutBeforeTheMeasuredRun(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "wrapped")
	wrap := []string{"/bin/sh", "-c", `echo wrapped >> "$0" && exec "$@"`, marker}
	target := t.TempDir()
	p := cellParams(map[string]string{"rw": "read", "bs": "64k", "file_size": "2MiB", "prefill": "true"})
	in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: target, Wrap: wrap}, CellDir: t.TempDir(), Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	st, err := os.Stat(filepath.Join(target, "fio-2MiB.data"))
	if err != nil || st.Size() != 2<<20 {
		t.Fatalf("after Start: %v %v, want the laid-out file of 2 MiB", st, err)
	}
	res, err := in.Drive(context.Background(), 0)
	if err != nil || res.Metrics["read_bytes"] != 2<<20 || res.Metrics["write_bytes"] != 0 {
		t.Fatalf("%v %v", err, res)
	}
	if data, _ := os.ReadFile(marker); string(data) != "wrapped\nwrapped\n" {
		t.Errorf("the wrap ran %q, want twice: the layout and the job both in the instance", data)
	}
}

// A cell's length as its parameters tell it, for the plan's estimate: the runtime bounds the
// measured I/O; a read lays its files out first; a write closes its file once per job sharing it,
// and the size it closes is known for random writes (the whole file) and for a job its size ends.
func TestLengthSaysWhatACellMovesOutsideItsRuntime(t *testing.T) {
	const mib = 1 << 20
	of := func(point map[string]string) workload.Length {
		return length(workload.Resolve(Params, map[string]string{"numjobs": "16", "runtime": "10s"}, point))
	}
	read := of(map[string]string{"rw": "read", "file_size": "200MiB"})
	if read.Bound != 10*time.Second || read.BoundBy != "runtime" || read.LayoutBytes != 200*mib || read.WrittenFiles != 0 {
		t.Errorf("a read of one shared file: %+v", read)
	}
	if twice := of(map[string]string{"rw": "randread", "file_size": "400MiB"}); twice.LayoutBytes != 2*read.LayoutBytes {
		t.Errorf("a file twice as large lays out %d bytes, against %d", twice.LayoutBytes, read.LayoutBytes)
	}
	randwrite := of(map[string]string{"rw": "randwrite", "file_size": "200MiB"})
	if randwrite.LayoutBytes != 0 || randwrite.WrittenFiles != 1 || randwrite.ClosesPerFile != 16 || randwrite.ClosedBytes != 200*mib {
		t.Errorf("random writes to one shared file by 16 jobs: %+v", randwrite)
	}
	if seq := of(map[string]string{"rw": "write", "file_size": "200MiB"}); seq.ClosesPerFile != 16 || seq.ClosedBytes != 0 {
		t.Errorf("sequential writes stopped by the runtime: %+v (how far they got is not known)", seq)
	}
	if toEnd := of(map[string]string{"rw": "write", "file_size": "200MiB", "runtime": "0s"}); toEnd.Bound != 0 || toEnd.ClosedBytes != 200*mib {
		t.Errorf("sequential writes to the end of the file: %+v", toEnd)
	}
	if prefilled := of(map[string]string{"rw": "write", "file_size": "200MiB", "prefill": "true"}); prefilled.LayoutBytes != 200*mib {
		t.Errorf("a write with prefill: %+v", prefilled)
	}
	perJob := of(map[string]string{"rw": "write", "layout": LayoutPerJob, "numjobs": "2", "nrfiles": "3", "file_size": "1GiB", "ramp_time": "5s", "time_based": "true"})
	if perJob.WrittenFiles != 6 || perJob.ClosesPerFile != 1 || perJob.Bound != 15*time.Second || perJob.BoundBy != "ramp time and runtime" {
		t.Errorf("a file per job: %+v", perJob)
	}
	if own := of(map[string]string{"job_file": "my.fio", "runtime": "0s", "numjobs": "1"}); own != (workload.Length{}) {
		t.Errorf("a job file of the user's: %+v, want nothing known", own)
	}
}
