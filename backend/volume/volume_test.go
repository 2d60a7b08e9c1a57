package volume

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/backend/conformance"
)

func TestConformance(t *testing.T) {
	for _, opts := range []map[string]string{
		{"type": "gp3", "size": "20GiB"},
		{"type": "st1", "size": "500GiB", "fs": "xfs"},
	} {
		conformance.Run(t, func(work string) (backend.Backend, error) {
			return backend.New(Name, backend.Env{WorkDir: work, Options: opts})
		}, conformance.KeepsFilesAcrossCrash)
	}
}

func TestBadOptionsNameTheOption(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"type": "gp2"}, "size"},
		{map[string]string{"type": "st1", "size": "100GiB"}, "125 GiB"},
		{map[string]string{"type": "io1", "size": "100GiB", "iops": "9000"}, "50 per GiB"},
		{map[string]string{"type": "gp2", "size": "100GiB", "throughput": "500"}, "throughput"},
		{map[string]string{"type": "gp2", "size": "100GiB", "ceiling_probe": "some"}, "ceiling_probe"},
		{map[string]string{"type": "gp2", "size": "100GiB", "ceiling_probe": "8000000TiB"}, `ceiling_probe: "8000000TiB" is not allowed: want a size like 4k, 10KiB, 200MiB or 1GiB from 0B to 64GiB`},
		{map[string]string{"type": "gp2", "size": "100GiB", "credit_scale": "Inf"}, `credit_scale: "Inf" is not allowed: want a number from 0.000000001 to 1000`},
		{map[string]string{"type": "gp2", "size": "100GiB", "latency": "1000h"}, "1ns to 1s"},
	} {
		if _, err := New(backend.Env{WorkDir: t.TempDir(), Options: tc.opts}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want it to say %q", tc.opts, err, tc.want)
		}
	}
	// Names and values are checked by the declarations first, through the registry.
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"type": "gp2", "size": "100GiB", "colour": "red"}, `options.colour: "red"`},
		{map[string]string{"type": "gp2", "size": "100GiB", "credit_scale": "Inf"}, `options.credit_scale: "Inf" is not allowed: want a number from 0.000000001 to 1000`},
		{map[string]string{"type": "gp9", "size": "100GiB"}, `options.type: "gp9" is not allowed: want one of cloudsql-ssd, gp2,`},
		{map[string]string{"type": "gp2", "size": "100GiB", "ceiling_probe": "65GiB"}, `options.ceiling_probe: "65GiB" is not allowed: want a size like 4k, 10KiB, 200MiB or 1GiB from 0B to 64GiB`},
	} {
		if _, err := backend.New(Name, backend.Env{WorkDir: t.TempDir(), Options: tc.opts}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want it to say %q", tc.opts, err, tc.want)
		}
	}
}

// The ceiling probe measures the stack with the model off and leaves nothing behind.
func TestCeilingProbe(t *testing.T) {
	work := t.TempDir()
	before := conformance.Snapshot(t, work)
	b, err := New(backend.Env{WorkDir: work, Options: map[string]string{"type": "sc1", "size": "500GiB", "ceiling_probe": "64MiB"}})
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := b.(backend.CeilingProber).ProbeCeiling(context.Background())
	// How fast this machine is is the probe's finding, not the test's: every figure measured.
	if err != nil || !ok || c.ReadMiBs <= 0 || c.WriteMiBs <= 0 || c.ReadIOPS <= 0 || c.WriteIOPS <= 0 {
		t.Errorf("probe: %+v %v %v", c, ok, err)
	}
	t.Logf("ceiling: %+v", c)
	conformance.Snapshot(t, work).MustEqual(t, before)
}

// The instance's memory bounds its page cache: a file larger than it is read back from the
// volume; with no bound, from this machine's page cache.
func TestInstanceMemoryBoundsThePageCache(t *testing.T) {
	readBack := map[string]float64{}
	for _, memory := range []string{"64MiB", "0"} {
		work := t.TempDir()
		b, err := New(backend.Env{WorkDir: work, Options: map[string]string{"type": "gp3", "size": "100GiB", "iops": "16000", "throughput": "1000", "memory": memory}})
		if err != nil {
			t.Fatal(err)
		}
		target, err := b.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if (memory == "0") != (len(target.Wrap) == 0) {
			t.Errorf("memory %s: wrap %v", memory, target.Wrap)
		}
		file := filepath.Join(target.Dir, "big")
		run := func(args ...string) {
			cmd := append(append([]string{}, target.Wrap...), args...)
			if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v %s", cmd, err, out)
			}
		}
		run("dd", "if=/dev/zero", "of="+file, "bs=1M", "count=256", "conv=fsync", "status=none")
		before := b.Stats()["volume_read_bytes"]
		run("dd", "if="+file, "of=/dev/null", "bs=1M", "status=none")
		readBack[memory] = (b.Stats()["volume_read_bytes"] - before) / (1 << 20)
		if err := b.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		conformance.Snapshot(t, work).MustEqual(t, conformance.State{})
	}
	if readBack["64MiB"] < 128 || readBack["0"] > 64 {
		t.Errorf("MiB read from the volume when reading back 256 MiB: %.0f with 64 MiB of memory, %.0f unbounded", readBack["64MiB"], readBack["0"])
	}
	t.Logf("MiB read back from the volume: %v", readBack)
}

// The write limits the lab's ceiling is held against are the most the volume writes on its
// instance: io1's provisioned IOPS cut to the c4.large's 4,000, gp2's burst rather than its
// baseline, and a volume on no instance at its own peak.
func TestModelWritesWithinTheInstancesCaps(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		iops float64
	}{
		{map[string]string{"type": "io1", "size": "500GiB", "iops": "25000", "instance": "c4.large", "era": "2018"}, 4000},
		{map[string]string{"type": "io1", "size": "500GiB", "iops": "25000", "era": "2018"}, 25000},
		{map[string]string{"type": "gp2", "size": "100GiB"}, 3000},
	} {
		m, ok := Model(c.opts)
		if !ok || m.WriteIOPS != c.iops || m.WriteMiBps <= 0 {
			t.Errorf("%v: write IOPS %v, MiB/s %v (modelled %v), want %v IOPS", c.opts, m.WriteIOPS, m.WriteMiBps, ok, c.iops)
		}
	}
	if _, ok := Model(map[string]string{"type": "gp2", "size": "100GiB", "model": "off"}); ok {
		t.Error("a volume with its model off has a model")
	}
}

// The model tells the report each burst bucket and the baseline that refills it, scaled as the
// entry's credit_scale says, so a run can say whether its cells drained the bucket.
func TestModelDescribesTheBurstBuckets(t *testing.T) {
	gp2, _ := Model(map[string]string{"type": "gp2", "size": "500GiB"})
	st1, _ := Model(map[string]string{"type": "st1", "size": "500GiB"})
	small, _ := Model(map[string]string{"type": "st1", "size": "500GiB", "credit_scale": "0.1"})
	io1, _ := Model(map[string]string{"type": "io1", "size": "500GiB", "iops": "25000"})
	if gp2.CreditIOs != 5.4e6 || gp2.BaseIOPS != 1500 || gp2.CreditMiB != 0 {
		t.Errorf("gp2 500 GiB: %v I/O credits at %v IOPS, %v MiB of credit; want 5.4 million at 1500, none", gp2.CreditIOs, gp2.BaseIOPS, gp2.CreditMiB)
	}
	if st1.CreditMiB != 500<<10 || st1.BaseMiBps != 40*500.0/1024 || st1.CreditIOs != 0 {
		t.Errorf("st1 500 GiB: %v MiB of credit at %v MiB/s, %v I/O credits; want 512000 at 19.5, none", st1.CreditMiB, st1.BaseMiBps, st1.CreditIOs)
	}
	if small.CreditMiB != st1.CreditMiB/10 {
		t.Errorf("credit_scale 0.1: %v MiB of credit, want a tenth of %v", small.CreditMiB, st1.CreditMiB)
	}
	if io1.CreditIOs != 0 || io1.CreditMiB != 0 {
		t.Errorf("io1 has no burst bucket: %v, %v", io1.CreditIOs, io1.CreditMiB)
	}
}

// A volume entry's transfers, for plan estimates, are its model's most written MiB/s: a file laid
// out on sc1 takes longer than on gp3, and nothing is written back at a close.
func TestTransferOfAVolumeIsItsPublishedThroughput(t *testing.T) {
	var rates []float64
	for _, typ := range []string{"gp3", "sc1"} {
		options := map[string]string{"type": typ, "size": "500GiB"}
		m, _ := Model(options)
		got, ok := backend.TransferOf(Name, options)
		if !ok || got.WriteMiBps != m.WriteMiBps || got.WriteMiBps <= 0 || got.WriteBack {
			t.Errorf("%s: %+v, want the model's %.0f MiB/s", typ, got, m.WriteMiBps)
		}
		rates = append(rates, got.WriteMiBps)
	}
	if rates[1] >= rates[0] {
		t.Errorf("sc1 writes %.0f MiB/s, gp3 %.0f", rates[1], rates[0])
	}
	if _, ok := backend.TransferOf(Name, map[string]string{"type": "gp3", "size": "100GiB", "model": "off"}); ok {
		t.Error("a volume with its model off has a transfer model")
	}
}

// The target of a started volume, and of a recovered one, runs set-up unmetered: its Stats stay
// as they were while a file is written and written back, and it is there after a lost instance.
func TestTargetRunsSetUpUnmetered(t *testing.T) {
	b, err := New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"type": "io2", "size": "20GiB", "iops": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	target, err := b.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	setUp := func(target backend.Target, name string) {
		t.Helper()
		if target.Unmetered == nil {
			t.Fatalf("%s: the target has no Unmetered", name)
		}
		before := b.Stats()
		err := target.Unmetered(context.Background(), func(context.Context) error {
			return os.WriteFile(filepath.Join(target.Dir, name), make([]byte, 1<<20), 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range b.Stats() {
			if before[k] != v {
				t.Errorf("%s: %s moved under Unmetered: %v, then %v", name, k, before[k], v)
			}
		}
	}
	setUp(target, "started")
	crasher := b.(backend.Crasher)
	if err := crasher.Crash(); err != nil {
		t.Fatal(err)
	}
	if target, err = crasher.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	setUp(target, "recovered")
	if _, err := os.Stat(filepath.Join(target.Dir, "started")); err != nil {
		t.Errorf("the file written unmetered before the lost instance: %v", err)
	}
}
