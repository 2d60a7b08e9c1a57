package volume

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"persistlab/internal/loopdev"
	"persistlab/internal/mounts"
)

// startVolume makes a volume from options in a fresh directory, stopped at the test's end, and
// checks then that no mount or loop device is left.
func startVolume(t *testing.T, opts map[string]string) *Volume {
	t.Helper()
	cfg, err := ConfigFromOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg.WorkDir = t.TempDir()
	v, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := v.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if left := append(mountPoints(cfg.WorkDir), loopdev.Under(cfg.WorkDir)...); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	return v
}

func mountPoints(dir string) []string {
	var out []string
	for _, m := range mounts.Under(dir) {
		out = append(out, m.Point)
	}
	return out
}

// fioResult is what the tests read of fio's JSON.
type fioResult struct {
	IOPS, MiBs                    float64
	IOs, Bytes                    float64 // completed in the run
	LatMinMs, LatMeanMs, LatMaxMs float64
}

// runFio runs one fio job on dir and returns the direction's figures.
func runFio(t *testing.T, dir string, write bool, args ...string) fioResult {
	t.Helper()
	cmd := exec.Command("fio", append([]string{"--name=cal", "--directory=" + dir, "--direct=1", "--ioengine=libaio", "--output-format=json",
		"--size=64m", "--group_reporting"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fio %v: %v\n%s", args, err, out)
	}
	var parsed struct {
		Jobs []struct {
			Read, Write struct {
				IOPS  float64 `json:"iops"`
				BW    float64 `json:"bw_bytes"`
				IOs   float64 `json:"total_ios"`
				Bytes float64 `json:"io_bytes"`
				Lat   struct {
					Min  float64 `json:"min"`
					Mean float64 `json:"mean"`
					Max  float64 `json:"max"`
				} `json:"lat_ns"`
			}
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out[strings.IndexByte(string(out), '{'):], &parsed); err != nil || len(parsed.Jobs) != 1 {
		t.Fatalf("fio JSON: %v\n%s", err, out)
	}
	d := parsed.Jobs[0].Read
	if write {
		d = parsed.Jobs[0].Write
	}
	r := fioResult{IOPS: d.IOPS, MiBs: d.BW / (1 << 20), IOs: d.IOs, Bytes: d.Bytes, LatMinMs: d.Lat.Min / 1e6, LatMeanMs: d.Lat.Mean / 1e6, LatMaxMs: d.Lat.Max / 1e6}
	t.Logf("fio %s: %.0f I/Os, %.0f IOPS, %.1f MiB/s, latency min %.2f mean %.2f max %.1f ms", strings.Join(args, " "), r.IOs, r.IOPS, r.MiBs, r.LatMinMs, r.LatMeanMs, r.LatMaxMs)
	return r
}

// phase is what the model counted while a job ran, and over how long.
type phase struct {
	before, after Counters
	seconds       float64
}

func measurePhase(v *Volume, do func()) phase {
	t1 := time.Now()
	before := v.model.Snapshot(t1)
	do()
	t2 := time.Now()
	return phase{before, v.model.Snapshot(t2), t2.Sub(t1).Seconds()}
}

func (p phase) delta(f func(Counters) float64) float64 { return f(p.after) - f(p.before) }

// slack is how far above the model's figure a measured rate may come: fio's clock and the
// model's are not the same, and a bucket starts full (its burst goes through at once). No lower
// bound: a slow or busy machine gets less than the model allows, never more.
const slack = 1.05

// notAbove checks that a rate fio measured is within what the model allows.
func notAbove(t *testing.T, what string, got, model float64) {
	t.Helper()
	t.Logf("%s: %.1f, model %.1f (ratio %.2f)", what, got, model, got/model)
	if got > model*slack {
		t.Errorf("%s: %.1f, above the model's %.1f", what, got, model)
	}
}

// billedAsFioDid checks a phase's units against fio's I/Os: each of fio's I/Os costs exactly
// unitsEach (none merge: random I/O is aligned apart), and what the file system added (journal,
// metadata) costs at most a unit per I/O and per unit of its bytes.
func billedAsFioDid(t *testing.T, p phase, write bool, r fioResult, unitsEach, unitBytes float64) {
	t.Helper()
	ops, units, bytes := func(c Counters) float64 { return c.ReadOps }, func(c Counters) float64 { return c.ReadUnits }, func(c Counters) float64 { return c.ReadBytes }
	if write {
		ops, units, bytes = func(c Counters) float64 { return c.WriteOps }, func(c Counters) float64 { return c.WriteUnits }, func(c Counters) float64 { return c.WriteBytes }
	}
	o, u, b := p.delta(ops), p.delta(units), p.delta(bytes)
	extraOps, extraBytes := o-r.IOs, b-r.Bytes
	t.Logf("model: %.0f ops, %.0f units, %.0f bytes; fio: %.0f I/Os, %.0f bytes", o, u, b, r.IOs, r.Bytes)
	if extraOps < 0 || extraBytes < 0 {
		t.Errorf("fio did %.0f I/Os of %.0f bytes, the model saw only %.0f of %.0f: I/O bypassed the model", r.IOs, r.Bytes, o, b)
	}
	if most := r.IOs*unitsEach + extraOps + math.Ceil(extraBytes/unitBytes); u < r.IOs*unitsEach || u > most {
		t.Errorf("%.0f units billed for fio's %.0f I/Os of %.0f each and %.0f more I/Os of %.0f bytes: want %.0f to %.0f",
			u, r.IOs, unitsEach, extraOps, extraBytes, r.IOs*unitsEach, most)
	}
}

// drained waits for the queue to empty: every I/O the volume received answered, no waiter held
// by the clock. Its limit is no rate: a waiter held 30 s has been left behind.
func drained(t *testing.T, v *Volume) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); v.img.inFlight.Load() != 0 || wakeClock.waiting() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the job: %d I/Os unanswered, %d waiters held", v.img.inFlight.Load(), wakeClock.waiting())
		}
	}
}

// resetPeaks starts the model's longest wait and the deepest queue afresh.
func resetPeaks(v *Volume) {
	v.model.mu.Lock()
	v.model.c.MaxWaitS = 0
	v.model.mu.Unlock()
	v.img.deepest.Store(v.img.inFlight.Load())
}

// The real stack: a file system on a loop device over the FUSE-served image. What is written is
// read back through a new mount of the same image, and the model counted the I/O.
func TestVolumeIsARealFileSystem(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "gp3", "size": "20GiB"})
	data := []byte(strings.Repeat("persistlab ", 10000))
	if err := os.WriteFile(filepath.Join(v.Dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sync", "-f", filepath.Join(v.Dir, "f")).CombinedOutput(); err != nil {
		t.Fatalf("sync: %v %s", err, out)
	}
	c := v.Counters()
	if c["volume_write_ops"] == 0 || c["volume_write_bytes"] < float64(len(data)) || c["volume_flushes"] == 0 {
		t.Errorf("counters after a synced write: %v", c)
	}
	// Freeze and recover: a synced file survives, on a fresh mount point, after journal replay.
	first := v.Dir
	if err := v.Freeze(); err != nil {
		t.Fatal(err)
	}
	if err := v.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(v.Dir, "f"))
	if v.Dir == first || err != nil || string(got) != string(data) {
		t.Errorf("after recovery at %s (was %s): %d bytes, %v", v.Dir, first, len(got), err)
	}
	// Each mount's device goes with its last mount even if no cleanup runs (loopdev.AutoClear).
	flag, err := os.ReadFile("/sys/block/" + filepath.Base(v.loop) + "/loop/autoclear")
	if strings.TrimSpace(string(flag)) != "1" {
		t.Errorf("%s mounted without autoclear: %q %v", v.loop, flag, err)
	}
}

// An instance lost right after a write that was never synced loses it: the device froze with it
// still in the page cache.
func TestFreezeLosesWhatThePageCacheHeld(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "gp3", "size": "20GiB"})
	if err := os.WriteFile(filepath.Join(v.Dir, "synced"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	exec.Command("sync", "-f", filepath.Join(v.Dir, "synced")).Run()
	if err := os.WriteFile(filepath.Join(v.Dir, "cached"), []byte(strings.Repeat("x", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.Freeze(); err != nil {
		t.Fatal(err)
	}
	if err := v.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(v.Dir, "synced")); err != nil || string(got) != "kept" {
		t.Errorf("a synced file after recovery: %q %v", got, err)
	}
	if got, err := os.ReadFile(filepath.Join(v.Dir, "cached")); err == nil && len(got) == 1<<20 {
		t.Errorf("a file never synced survived the lost instance whole (the device did not freeze)")
	}
}

// The tests below keep to what holds on any machine, however slow or busy: fio never gets more
// than the model allows, the model bills exactly what fio did, credits and waits add up. How
// close fio comes to the model's figures is measured, not asserted: go run ./bench/volume, and
// the volume-calibration scenario.

// randomArgs is random 4 KiB I/O at offsets 8 KiB apart: no two of fio's I/Os are contiguous, so
// each is billed on its own.
var randomArgs = []string{"--bs=4k", "--blockalign=8k"}

// layOut writes the job's file with direct 1 MiB writes: random writes into fresh (unwritten)
// extents would also make ext4 write its extent tree, and reads of them reach no device. Sizes in
// fio's units: 64m is 64 MiB; its 64MiB is 64,000,000 bytes, a tail 1 MiB writes never reach.
func layOut(t *testing.T, v *Volume, size string) {
	t.Helper()
	runFio(t, v.Dir, true, "--rw=write", "--bs=1M", "--iodepth=4", "--size="+size)
}

// gp2 with credits never bursts past 3,000 IOPS; without, never past its 300 IOPS baseline and it
// throttles. Either way each credit spent is an I/O billed beyond what the baseline refilled.
func TestGP2NeverPassesItsBucketsAndSpendsACreditPerIO(t *testing.T) {
	for _, tc := range []struct {
		name, scale string
	}{{"with credits", "1"}, {"credits spent", "0.0000002"}} { // 0.0000002: about one credit
		t.Run(tc.name, func(t *testing.T) {
			v := startVolume(t, map[string]string{"type": "gp2", "size": "100GiB", "credit_scale": tc.scale})
			layOut(t, v, "64m")
			var r fioResult
			const seconds = 2
			p := measurePhase(v, func() {
				r = runFio(t, v.Dir, true, append(randomArgs, "--rw=randwrite", "--iodepth=16", "--runtime=2s", "--time_based")...)
			})
			l := v.model.Limits()
			notAbove(t, "IOPS", r.IOPS, l.Expect(Job{Write: true, Random: true, BS: 4096, Depth: 16, Seconds: seconds}))
			billedAsFioDid(t, p, true, r, 1, SSDUnitBytes)
			// The credit bucket refills at the baseline, at most (none while full): it gave up at
			// least the units billed beyond that, and never more than the units billed.
			units := p.delta(func(c Counters) float64 { return c.ReadUnits + c.WriteUnits })
			spent := p.before.CreditIOs - p.after.CreditIOs
			t.Logf("credits: %.1f spent, %.0f units billed, the baseline refilled at most %.1f", spent, units, l.BaseIOPS*p.seconds)
			if spent < units-l.BaseIOPS*p.seconds-1e-6 || spent > units+1e-6 {
				t.Errorf("%.1f credits spent for %.0f units billed in %.2f s at a baseline of %.0f: want %.1f to %.0f",
					spent, units, p.seconds, l.BaseIOPS, units-l.BaseIOPS*p.seconds, units)
			}
			// A bucket of one credit cannot take 16 I/Os at once: they waited.
			if l.CreditIOs < 2 && p.delta(func(c Counters) float64 { return c.ThrottledS }) <= 0 {
				t.Errorf("credits gone (a bucket of %.1f), yet no I/O waited: %+v", l.CreditIOs, p.after)
			}
		})
	}
}

// io1 with 1,000 IOPS bills a 1 MiB write as 4 units of 256 KiB, so it never passes 250 of them
// a second.
func TestIO1BillsALargeWriteInUnits(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "io1", "size": "100GiB", "iops": "1000"})
	layOut(t, v, "256m")
	var r fioResult
	p := measurePhase(v, func() {
		r = runFio(t, v.Dir, true, "--rw=randwrite", "--bs=1M", "--iodepth=16", "--runtime=3s", "--time_based", "--size=256m")
	})
	notAbove(t, "1 MiB writes/s", r.IOPS, v.model.Limits().Expect(Job{Write: true, Random: true, BS: 1 << 20, Depth: 16, Seconds: 3}))
	billedAsFioDid(t, p, true, r, 4, SSDUnitBytes)
}

// st1 bills sequential 1 MiB reads a unit per MiB, whatever pieces the kernel cut them into, and a
// random 4 KiB read a full MiB: neither passes the burst's MiB/s.
func TestST1BillsAMiBPerUnitSequentialOrNot(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "st1", "size": "500GiB"})
	l := v.model.Limits()
	layOut(t, v, "512m")
	var r fioResult
	p := measurePhase(v, func() {
		r = runFio(t, v.Dir, false, "--rw=read", "--bs=1M", "--iodepth=8", "--runtime=3s", "--time_based", "--size=512m")
	})
	notAbove(t, "sequential MiB/s", r.MiBs, l.Expect(Job{BS: 1 << 20, Depth: 8, Seconds: 3}))
	// (Before ext4's background bitmap prefetch was turned off, one run in four billed up to 2 per
	// MiB: its 4 KiB reads of the bitmaps, a MiB each on an HDD.) A stream that wraps at the file's
	// end starts a new run: one unit more at most per pass.
	units, mib := p.delta(func(c Counters) float64 { return c.ReadUnits }), r.Bytes/(1<<20)
	extraOps := p.delta(func(c Counters) float64 { return c.ReadOps }) - r.IOs
	passes := math.Ceil(r.Bytes / (512 << 20))
	t.Logf("sequential 1 MiB reads: %.0f units for %.0f MiB read by fio and %.0f I/Os more", units, mib, extraOps)
	if units < mib || units > mib+passes+2*extraOps {
		t.Errorf("%.0f units for %.0f MiB read sequentially (%.0f passes, %.0f I/Os of the file system's): want %.0f to %.0f",
			units, mib, passes, extraOps, mib, mib+passes+2*extraOps)
	}
	p = measurePhase(v, func() {
		r = runFio(t, v.Dir, false, append(randomArgs, "--rw=randread", "--iodepth=8", "--runtime=3s", "--time_based", "--size=512m")...)
	})
	notAbove(t, "random 4 KiB reads/s", r.IOPS, l.Expect(Job{Random: true, BS: 4096, Depth: 8, Seconds: 3}))
	billedAsFioDid(t, p, false, r, 1, HDDUnitBytes)
}

// A deep queue of random reads never gets more than the volume's IOPS and leaves no I/O behind:
// the queue drains, every I/O answered and no waiter held. (The emulator's clock once left most
// of a queue of 16 waiting for seconds while 2 went on.)
func TestDeepQueueLeavesNoIOBehind(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "pd-ssd", "size": "100GiB"})
	l := v.model.Limits()
	layOut(t, v, "64m")
	exec.Command("sync", "-f", v.Dir).Run() // nothing of the layout's left to write meanwhile
	for range 2 {
		resetPeaks(v)
		var r fioResult
		p := measurePhase(v, func() {
			r = runFio(t, v.Dir, false, append(randomArgs, "--rw=randread", "--iodepth=16", "--runtime=2s", "--time_based")...)
		})
		drained(t, v)
		notAbove(t, "IOPS", r.IOPS, l.Expect(Job{Random: true, BS: 4096, Depth: 16, Seconds: 2}))
		billedAsFioDid(t, p, false, r, 1, SSDUnitBytes)
		// How long the model held an I/O for tokens is bounded by the queue ahead of it
		// (TestNoIOWaitsLongerThanTheQueueAheadOfIt) plus how late this machine's emulator got to
		// it: reported, not asserted.
		t.Logf("longest wait for tokens %.2f ms, at most %d I/Os in flight", p.after.MaxWaitS*1e3, v.img.deepest.Load())
		if r.LatMeanMs < l.ServiceTime.Seconds()*1e3 {
			t.Errorf("mean latency %.3f ms, below the service time %v", r.LatMeanMs, l.ServiceTime)
		}
	}
}

// At depth 1 no I/O waits for tokens and each takes at least the service time: the emulator takes
// its own round trip off each wait, never more.
func TestDepthOneLatencyIsAtLeastTheServiceTime(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "gp3", "size": "100GiB", "latency": "2ms"})
	layOut(t, v, "64m")
	var r fioResult
	p := measurePhase(v, func() {
		r = runFio(t, v.Dir, false, append(randomArgs, "--rw=randread", "--iodepth=1", "--runtime=2s", "--time_based")...)
	})
	svc := v.model.Limits().ServiceTime
	t.Logf("the emulator's own round trip, taken off each wait: %v", v.Overhead())
	notAbove(t, "IOPS", r.IOPS, v.model.Limits().Expect(Job{Random: true, BS: 4096, Depth: 1}))
	if w := p.delta(func(c Counters) float64 { return c.ThrottledS }); w != 0 {
		t.Errorf("one I/O at a time, far below gp3's 3,000 IOPS, waited %.3f s for tokens", w)
	}
	if r.LatMeanMs < svc.Seconds()*1e3 {
		t.Errorf("mean latency %.3f ms, below the service time %v", r.LatMeanMs, svc)
	}
	if lo := (svc - v.Overhead()).Seconds() * 1e3; r.LatMinMs < lo {
		t.Errorf("an I/O took %.3f ms, less than the service time %v less the emulator's round trip %v", r.LatMinMs, svc, v.Overhead())
	}
}

// Making, mounting and unmounting the file system is not the workload's I/O: none of it is billed,
// so a volume with the slowest latency allowed starts and stops without waiting on the model.
func TestSetupAndStopAreNotBilled(t *testing.T) {
	cfg, err := ConfigFromOptions(map[string]string{"type": "sc1", "size": "500GiB", "latency": MaxServiceTime.String()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.WorkDir = t.TempDir()
	t0 := time.Now()
	v, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Since(t0)
	after := v.model.Snapshot(time.Now())
	t0 = time.Now()
	if err := v.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("a volume of %v per I/O started in %v and stopped in %v", MaxServiceTime, started, time.Since(t0))
	if n := after.ReadOps + after.WriteOps + after.Flushes; n != 0 {
		t.Errorf("mkfs and mount billed: %+v", after)
	}
	if c := v.model.Snapshot(time.Now()); c.ReadOps+c.WriteOps+c.Flushes != 0 {
		t.Errorf("unmounting billed: %+v", c)
	}
	if left := append(mountPoints(cfg.WorkDir), loopdev.Under(cfg.WorkDir)...); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// What the workload wrote without a sync is the volume's I/O too: the kernel writes it back at the
// stop, and the model counts it then (20 MiB written, then stopped at once: before the kernel's
// own writeback, 30 s after a page is dirtied).
func TestStopCountsWhatTheKernelWroteBack(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "gp3", "size": "20GiB"})
	const size = 20 << 20
	if err := os.WriteFile(filepath.Join(v.Dir, "unsynced"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	before := v.Counters()["volume_write_bytes"]
	if err := v.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := v.Counters()["volume_write_bytes"]; got < size {
		t.Errorf("after the stop the volume counted %.0f bytes written (%.0f before it), want at least the %d written", got, before, size)
	}
}

// A mounted volume left idle reads nothing in the background: ext4 would otherwise prefetch every
// block group's bitmap after the mount, which on an HDD volume costs a MiB of throughput each
// (500 GiB: 250 reads, 250 MiB of credit) inside the first cell's measured seconds.
func TestIdleVolumeReadsNothingInTheBackground(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "st1", "size": "500GiB"})
	before := v.Counters()
	time.Sleep(2 * time.Second)
	after := v.Counters()
	if n := after["volume_read_ops"] - before["volume_read_ops"]; n > 10 {
		t.Errorf("an idle volume read %.0f times in 2 s (%.0f units), want none to speak of", n, after["volume_read_units"]-before["volume_read_units"])
	}
}

// Set-up under Unmetered is neither timed nor counted, and is on the volume when it returns: 4
// MiB written inside it, on a volume slow enough (io2 at 100 IOPS) that the model would hold
// them a while, leave every counter as it was and survive a lost instance; the model is on again
// after it, and counts the same write.
func TestUnmeteredSetUpMovesNoCounter(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "io2", "size": "20GiB", "iops": "100"})
	const size = 4 << 20
	before := v.Counters()
	err := v.Unmetered(context.Background(), func(context.Context) error {
		return os.WriteFile(filepath.Join(v.Dir, "setup"), make([]byte, size), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	after := v.Counters()
	for k, was := range before {
		if after[k] != was {
			t.Errorf("counter %s moved under Unmetered: %v, then %v", k, was, after[k])
		}
	}
	if err := os.WriteFile(filepath.Join(v.Dir, "measured"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sync", "-f", filepath.Join(v.Dir, "measured")).CombinedOutput(); err != nil {
		t.Fatalf("sync: %v %s", err, out)
	}
	if got := v.Counters()["volume_write_bytes"] - after["volume_write_bytes"]; got < size {
		t.Errorf("the model counted %.0f bytes of a synced %d-byte write after Unmetered, want them all", got, size)
	}
	if err := v.Freeze(); err != nil {
		t.Fatal(err)
	}
	if err := v.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(v.Dir, "setup")); err != nil || st.Size() != size {
		t.Errorf("the set-up's file after a lost instance: %v %v, want its %d bytes written back by Unmetered", st, err, size)
	}
}

// A queue built under a slow model is answered once the model is turned off, not after the old
// model's times: 80 MiB written back to io2 at 100 IOPS (256 KiB units: 320 units, 3.2 s of model
// time) while the model goes off 0.2 s in ends within half of that (the copy itself, beside a busy
// core, takes a fraction of a second).
func TestTurningTheModelOffAnswersTheQueuedIOAtOnce(t *testing.T) {
	v := startVolume(t, map[string]string{"type": "io2", "size": "20GiB", "iops": "100"})
	const size = 80 << 20
	if err := os.WriteFile(filepath.Join(v.Dir, "queued"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		out, err := exec.Command("sync", "-f", filepath.Join(v.Dir, "queued")).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("sync: %v %s", err, out)
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	v.img.setModel(nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	modelTime := time.Duration(float64(size) / SSDUnitBytes / 100 * float64(time.Second))
	if took > modelTime/2 {
		t.Errorf("the sync took %s with the model off after 0.2 s: the queue waited out the old model's %s", took, modelTime)
	}
	v.img.setModel(v.model)
}
