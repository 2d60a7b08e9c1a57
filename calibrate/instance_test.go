package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"persistlab/lab/instance"
	"persistlab/profile"
)

// syntheticProbe is a probe whose every CPU time is scale times a base: two of them differ by
// exactly their scales' ratio.
func syntheticProbe(scale float64, host string) *Probe {
	p := &Probe{Schema: ProbeSchema, When: "2026-11-25T10:00:00Z", Commit: "abc1234",
		Machine: ProbeMachine{Hostname: host, CPUModel: "AMD EPYC", Cores: 2, GoMaxProcs: 2, Kernel: "Linux 6.1 x86_64", Go: "go1.26"},
		CPU:     CPUResult{Unit: unitText, Repeats: 3, Threads: 2, ParallelRows: HeldOutRows},
		FS:      FSResult{FileSystem: "ext4 on / (/dev/vda)", Ops: 20}, Elapsed: 5}
	base := map[int]float64{1: 0.02, 8: 0.1, 64: 0.8}
	for _, rows := range UnitRows {
		ms := base[rows] * scale
		p.CPU.Sizes = append(p.CPU.Sizes, SizeResult{Rows: rows, Units: unitsPerBatch[rows], Batches: []float64{ms * 0.9, ms, ms * 1.2}, MsPerUnit: ms, UnitsPerS: 1000 / ms})
	}
	p.CPU.ParallelMs = base[8] * scale / 1.5
	p.CPU.EffectiveCPUs = 1.5
	for i, c := range FSCalls {
		us := float64(10*(i+1)) * scale
		p.FS.Calls = append(p.FS.Calls, CallResult{Call: c.Name, MedianUs: us, P99Us: 3 * us})
	}
	return p
}

func probeJSON(t *testing.T, p *Probe) []byte {
	t.Helper()
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A probe file persistlab did not write as this version writes it is refused, naming the field,
// its value and what is allowed: another schema, a NaN, a figure out of range, an unknown field,
// a file too large to be a probe.
func TestProbeFileRefusesBadInput(t *testing.T) {
	good := probeJSON(t, syntheticProbe(1, "vm-1"))
	if _, err := ParseProbe(good, "p.json"); err != nil {
		t.Fatalf("a good probe: %v", err)
	}
	negative := syntheticProbe(1, "vm-1")
	negative.CPU.Sizes[1].MsPerUnit = -0.1
	oneBatch := syntheticProbe(1, "vm-1")
	oneBatch.CPU.Sizes[2].Batches = oneBatch.CPU.Sizes[2].Batches[:1]
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"another schema", bytes.Replace(good, []byte(ProbeSchema), []byte("persistlab.results/2"), 1), []string{"schema", "persistlab.results/2", "want " + ProbeSchema}},
		{"a profile", []byte("schema: persistlab.profile/1\nkind: instance\n"), []string{"want the JSON persistlab probe writes"}},
		{"NaN", bytes.Replace(good, []byte(`"ms_per_unit": 0.1,`), []byte(`"ms_per_unit": NaN,`), 1), []string{`field "ms_per_unit"`, "NaN"}},
		{"negative", probeJSON(t, negative), []string{"cpu.sizes[1].ms_per_unit", `"-0.1"`, "want a number from"}},
		{"batches", probeJSON(t, oneBatch), []string{"cpu.sizes[2].batch_ms_per_unit", "cpu.repeats = 3"}},
		{"unknown field", bytes.Replace(good, []byte(`"elapsed_s"`), []byte(`"speed": 1, "elapsed_s"`), 1), []string{`unknown field "speed"`}},
	} {
		_, err := ParseProbe(c.data, "p.json")
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q in it", c.name, err, w)
			}
		}
	}
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, append(good, bytes.Repeat([]byte(" "), MaxProbeFileBytes)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProbe(big); err == nil || !strings.Contains(err.Error(), "larger than 256 KiB") {
		t.Errorf("a file too large: %v", err)
	}
}

// Two probes whose CPU times differ by a factor of 2.5 fit cpu_factor 2.5, predict the held-out
// size exactly, carry the target's effective CPUs, and give each file system call its ratio.
func TestFitInstanceRecoversTheRatio(t *testing.T) {
	fit := FitInstance(syntheticProbe(2.5, "target"), syntheticProbe(1, "here"))
	if got := fit.Value(instance.CPUFactorOption); got != "2.50" {
		t.Errorf("cpu_factor %s, want 2.50", got)
	}
	if got := fit.Value(instance.EffectiveCPUsOption); got != "1.50" {
		t.Errorf("effective_cpus %s, want 1.50", got)
	}
	if len(fit.HeldOut) != 1 || fit.HeldOut[0].Error > 1e-9 || fit.HeldOut[0].Error < -1e-9 {
		t.Errorf("held out %+v, want an exact prediction", fit.HeldOut)
	}
	for _, call := range instance.FSCalls {
		if got := fit.Value(instance.FSFactorOption("fs", call)); got != "2.50" {
			t.Errorf("%s factor %s, want 2.50", call, got)
		}
	}
	if fit.Value(instance.FSFactorOption("fuse", "create")) != "" {
		t.Error("a FUSE factor without FUSE probes")
	}
}

// The file system phase writes in a directory of its own and removes it, also when it stops
// early; what was in the parent before is there after, untouched.
func TestProbeFSLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	keep := filepath.Join(parent, "keep.txt")
	if err := os.WriteFile(keep, []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(keep, past, past)
	res, err := probeFS(context.Background(), parent, MinFSOps, ProbePlan{}, "--dir")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Calls) != len(FSCalls) || res.Calls[0].MedianUs <= 0 {
		t.Errorf("calls %+v", res.Calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := probeFS(ctx, parent, MinFSOps, ProbePlan{}, "--dir"); err == nil {
		t.Error("a cancelled probe: no error")
	}
	entries, _ := os.ReadDir(parent)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	st, err := os.Stat(keep)
	data, _ := os.ReadFile(keep)
	if !slices.Equal(names, []string{"keep.txt"}) || err != nil || !st.ModTime().Equal(past) || string(data) != "the user's" {
		t.Errorf("after: %v, keep.txt %v %q", names, st.ModTime(), data)
	}
}

// The quota a run applies (effective_cpus / cpu_factor) is here's one-thread CPU time per unit
// over the target's all-threads wall time per unit, and never less than one thread's speed
// (1 / cpu_factor): a target whose threads together did less than one thread's work (the probe's
// own loss under a CFS limit) gets one CPU's worth of its own speed.
func TestFitInstanceQuotaIsTheTargetsThroughput(t *testing.T) {
	here := syntheticProbe(1, "here")
	for _, c := range []struct {
		name     string
		parallel float64 // the target's all-threads ms per 8-row unit
		cpus     string
		quota    float64
	}{
		{"two CPUs' worth", 0.25 / 2, "2.00", 0.8},         // here's 0.1 ms over 0.125
		{"less than one thread", 0.25 / 0.87, "1.00", 0.4}, // one thread at 1/2.5
	} {
		target := syntheticProbe(2.5, "target")
		target.CPU.ParallelMs = c.parallel
		target.CPU.EffectiveCPUs = round4(target.CPU.Sizes[1].MsPerUnit / c.parallel)
		fit := FitInstance(target, here)
		if got := fit.Value(instance.EffectiveCPUsOption); got != c.cpus {
			t.Errorf("%s: effective_cpus %s, want %s", c.name, got, c.cpus)
		}
		e, err := instance.EmulationOf(map[string]string{instance.CPUFactorOption: fit.Value(instance.CPUFactorOption), instance.EffectiveCPUsOption: fit.Value(instance.EffectiveCPUsOption)})
		if err != nil || e.Quota != c.quota {
			t.Errorf("%s: quota %g (%v), want %g", c.name, e.Quota, err, c.quota)
		}
	}
}

// A file system call whose ratio lies beyond what a profile holds (a target 20,000 times slower
// at fsync) is left out, with why, and the rest is fitted: the calibration does not fail.
func TestFitInstanceLeavesOutAFactorOutOfRange(t *testing.T) {
	target := syntheticProbe(2, "target")
	for i := range target.FS.Calls {
		if target.FS.Calls[i].Call == "fsync" {
			target.FS.Calls[i].MedianUs *= 1e4
			target.FS.Calls[i].P99Us *= 1e4
		}
	}
	fit := FitInstance(target, syntheticProbe(1, "here"))
	fsync := instance.FSFactorOption("fs", "fsync")
	if fit.Value(fsync) != "" || len(fit.NotFitted) != 1 || fit.NotFitted[0].Option != fsync || !strings.Contains(fit.NotFitted[0].Why, "beyond what a profile holds") {
		t.Errorf("fsync %q, not fitted %+v", fit.Value(fsync), fit.NotFitted)
	}
	if fit.Value(instance.FSFactorOption("fs", "stat")) != "2.00" || fit.Value(instance.CPUFactorOption) != "2.00" {
		t.Errorf("the rest: %+v", fit.Figures)
	}
	p := &profile.Profile{Schema: profile.Schema, Kind: "instance", Measured: profile.Measured{Target: "target", When: target.When, Commit: "abc1234",
		Machine: profile.Machine{Hostname: "target", CPU: "AMD EPYC", Kernel: "Linux"}}, Reference: &profile.Machine{Hostname: "here", CPU: "AMD EPYC", Kernel: "Linux"},
		Figures: fit.Figures, NotFitted: fit.NotFitted, HeldOut: fit.HeldOut}
	if err := p.Check("fit"); err != nil {
		t.Errorf("the profile of the fit: %v", err)
	}
}
