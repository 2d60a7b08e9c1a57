package volume

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"persistlab/param"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func model(t *testing.T, s Spec) *Model {
	t.Helper()
	m, err := New(s, func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const gib = 1 << 30

// at is t0 plus seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestUnitsAreCountedAsTheProviderBills(t *testing.T) {
	for _, tc := range []struct {
		name string
		unit int64
		ops  []Op
		want int64
	}{
		{"one 1 MiB SSD I/O", SSDUnitBytes, []Op{{Len: 1 << 20}}, 4},
		{"8 contiguous 128 KiB", SSDUnitBytes, seq(0, 128<<10, 8), 4},
		{"64 contiguous 4 KiB", SSDUnitBytes, seq(0, 4<<10, 64), 1},
		{"65 contiguous 4 KiB", SSDUnitBytes, seq(0, 4<<10, 65), 2},
		{"random 4 KiB", SSDUnitBytes, []Op{{Off: 8 << 20, Len: 4096}, {Off: 0, Len: 4096}, {Off: 1 << 20, Len: 4096}}, 3},
		{"HDD random 4 KiB", HDDUnitBytes, []Op{{Off: 8 << 20, Len: 4096}, {Off: 0, Len: 4096}}, 2},
		{"HDD sequential 1 MiB in 8", HDDUnitBytes, seq(0, 128<<10, 8), 1},
		{"reads and writes apart", SSDUnitBytes, []Op{{Len: 4096}, {Write: true, Off: 4096, Len: 4096}, {Off: 4096, Len: 4096}}, 2},
		{"1 MiB in 8 pieces out of order", SSDUnitBytes, []Op{{Off: 3 << 17, Len: 1 << 17}, {Off: 1 << 17, Len: 1 << 17}, {Off: 2 << 17, Len: 1 << 17},
			{Off: 0, Len: 1 << 17}, {Off: 7 << 17, Len: 1 << 17}, {Off: 5 << 17, Len: 1 << 17}, {Off: 6 << 17, Len: 1 << 17}, {Off: 4 << 17, Len: 1 << 17}}, 4},
		{"HDD 1 MiB in 4 pieces, backwards", HDDUnitBytes, []Op{{Off: 3 << 18, Len: 1 << 18}, {Off: 2 << 18, Len: 1 << 18}, {Off: 1 << 18, Len: 1 << 18}, {Off: 0, Len: 1 << 18}}, 1},
		{"one block rewritten", SSDUnitBytes, []Op{{Write: true, Len: 4096}, {Write: true, Len: 4096}, {Write: true, Len: 4096}}, 3},
	} {
		c := counter{unit: tc.unit}
		var n int64
		for _, op := range tc.ops {
			n += c.units(op, 0)
		}
		if n != tc.want {
			t.Errorf("%s: %d units, want %d", tc.name, n, tc.want)
		}
	}
}

func seq(off, size int64, n int) []Op {
	var ops []Op
	for i := 0; i < n; i++ {
		ops = append(ops, Op{Off: off + int64(i)*size, Len: size})
	}
	return ops
}

// startOf is when the i-th of n random 4 KiB writes, all arriving at once at arrive, may start
// (its completion minus the service time).
func starts(m *Model, arrive float64, n int, write bool) []float64 {
	out := make([]float64, n)
	for i := range out {
		done := m.Schedule(at(arrive), Op{Write: write, Off: int64(i) * 1 << 20, Len: 4096})
		out[i] = done.Sub(t0).Seconds() - m.limits.ServiceTime.Seconds()
	}
	return out
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want)+1e-9 }

// gp2 100 GiB bursts at 3,000 IOPS while credits last, then serves its 300 IOPS baseline; idle
// time refills the credits at the baseline.
func TestGP2BurstsThenFallsToBaseline(t *testing.T) {
	m := model(t, Spec{Type: "gp2", SizeBytes: 100 * gib, CreditScale: 3000.0 / GP2CreditBucket}) // 3,000 credits
	if l := m.Limits(); l.BaseIOPS != 300 || l.BurstIOPS != 3000 || l.CreditIOs != 3000 {
		t.Fatalf("limits %+v", l)
	}
	s := starts(m, 0, 6000, true)
	// The first ~3,000 go at 3,000 IOPS (credits 3,000 plus what accrues meanwhile at 300/s).
	if !near(s[2999], 2999.0/3000, 0.01) {
		t.Errorf("3,000th starts at %.3f s, want about 1 s", s[2999])
	}
	// Then each further one waits for a baseline credit: 300 IOPS.
	if rate := 1000 / (s[5999] - s[4999]); !near(rate, 300, 0.01) {
		t.Errorf("after the credits ran out: %.0f IOPS, want 300", rate)
	}
	c := m.Snapshot(at(s[5999]))
	if c.CreditIOs > 1 || c.WriteUnits != 6000 || c.ThrottledS <= 0 {
		t.Errorf("counters %+v", c)
	}
	// Idle for 10 s: 3,000 credits back (capped at the bucket), so a burst again.
	idle := s[5999] + 20
	if c := m.Snapshot(at(idle)); !near(c.CreditIOs, 3000, 0.001) {
		t.Errorf("credits after idling: %.0f", c.CreditIOs)
	}
	again := starts(m, idle, 1000, true)
	if rate := 999 / (again[999] - again[0]); !near(rate, 3000, 0.02) {
		t.Errorf("after refilling: %.0f IOPS, want 3,000", rate)
	}
	// A volume whose baseline is 3,000 or more has no bucket and never bursts past it.
	big := model(t, Spec{Type: "gp2", SizeBytes: 2000 * gib})
	if l := big.Limits(); l.BaseIOPS != 6000 || l.BurstIOPS != 0 {
		t.Errorf("2,000 GiB gp2: %+v", l)
	}
	if c := big.Snapshot(t0); c.CreditIOs != -1 {
		t.Errorf("2,000 GiB gp2 has credits: %+v", c)
	}
}

// io1 with 1,000 IOPS serves 250 1 MiB random writes a second: each is 4 units of 256 KiB.
func TestIO1CountsLargeIOsInUnits(t *testing.T) {
	m := model(t, Spec{Type: "io1", SizeBytes: 100 * gib, ProvisionedIOPS: 1000})
	var last time.Time
	for i := 0; i < 1000; i++ {
		last = m.Schedule(t0, Op{Write: true, Off: int64(i) * 3 << 20, Len: 1 << 20})
	}
	if rate := 1000 / (last.Sub(t0).Seconds() - m.limits.ServiceTime.Seconds()); !near(rate, 250, 0.01) {
		t.Errorf("%.1f 1 MiB writes/s, want 250", rate)
	}
}

// st1 500 GiB: 1 MiB sequential reads at its burst, about 122 MiB/s (250 MiB/s per TiB); 4 KiB
// random reads cost a full MiB each, so they come at the same number per second.
func TestST1ChargesEachRandomIOAFullMiB(t *testing.T) {
	m := model(t, Spec{Type: "st1", SizeBytes: 500 * gib})
	want := ST1BurstMiBpsPerTiB * 500 / 1024
	if l := m.Limits(); !near(l.BurstMiBps, want, 1e-9) || !near(l.BaseMiBps, 40*500.0/1024, 1e-9) {
		t.Fatalf("limits %+v", l)
	}
	var last time.Time
	for i := 0; i < 1000; i++ {
		last = m.Schedule(t0, Op{Off: int64(i) << 20, Len: 1 << 20})
	}
	seqRate := 1000 / (last.Sub(t0).Seconds() - m.limits.ServiceTime.Seconds())
	r := model(t, Spec{Type: "st1", SizeBytes: 500 * gib})
	for i := 0; i < 1000; i++ {
		last = r.Schedule(t0, Op{Off: int64(i) * 7 << 20, Len: 4096})
	}
	randRate := 1000 / (last.Sub(t0).Seconds() - r.limits.ServiceTime.Seconds())
	if !near(seqRate, want, 0.01) || !near(randRate, want, 0.01) {
		t.Errorf("sequential %.1f MiB/s, random %.1f IOPS; want both near %.1f", seqRate, randRate, want)
	}
}

// The instance caps what the volume allows: io1 at 10,000 IOPS behind a c4.large gets 4,000.
func TestInstanceCapsTheVolume(t *testing.T) {
	m := model(t, Spec{Type: "io1", SizeBytes: 500 * gib, ProvisionedIOPS: 10000, Instance: "c4.large"})
	s := starts(m, 0, 4001, false)
	if rate := 4000 / (s[4000] - s[0]); !near(rate, 4000, 0.01) {
		t.Errorf("%.0f IOPS behind a c4.large, want 4,000", rate)
	}
	var last time.Time
	w := model(t, Spec{Type: "io1", SizeBytes: 500 * gib, ProvisionedIOPS: 10000, Instance: "c4.large"})
	for i := 0; i < 600; i++ {
		last = w.Schedule(t0, Op{Write: true, Off: int64(i) << 20, Len: 1 << 20})
	}
	if mibs := 600 / (last.Sub(t0).Seconds() - w.limits.ServiceTime.Seconds()); !near(mibs, 62.5e6/(1<<20), 0.01) {
		t.Errorf("%.1f MiB/s behind a c4.large, want 59.6", mibs)
	}
}

// A lone I/O on an idle volume takes the type's service time, and a flush the flush time.
func TestIdleLatencyIsTheServiceTime(t *testing.T) {
	m := model(t, Spec{Type: "gp3", SizeBytes: 100 * gib})
	if d := m.Schedule(at(1), Op{Len: 4096}).Sub(at(1)); d != SSDServiceTime {
		t.Errorf("gp3 4 KiB read took %v, want %v", d, SSDServiceTime)
	}
	m = model(t, Spec{Type: "gp3", SizeBytes: 100 * gib, ServiceTime: 7 * time.Millisecond})
	if d := m.Schedule(at(1), Op{Len: 4096}).Sub(at(1)); d != 7*time.Millisecond {
		t.Errorf("latency option: %v", d)
	}
	if d := m.Flush(at(2)).Sub(at(2)); d != FlushTime {
		t.Errorf("flush %v", d)
	}
}

// Persistent Disk limits reads and writes apart; Cloud SQL caps writes below reads (seed 001).
func TestPerDirectionLimits(t *testing.T) {
	l := Spec{Type: "pd-standard", SizeBytes: 1000 * gib}.Limits()
	if l.ReadIOPS != 750 || l.WriteIOPS != 1500 {
		t.Errorf("pd-standard %+v", l)
	}
	c := Spec{Type: "cloudsql-ssd", SizeBytes: 400 * gib}.Limits()
	if c.BaseIOPS != 12000 || !near(c.ReadMiBps, 192, 1e-9) || c.WriteMiBps != CloudSQLMaxWriteMiBps {
		t.Errorf("cloudsql-ssd 400 GiB %+v (seed 001: 12,000 IOPS, 192 / 151.5 MB/s)", c)
	}
	if c := (Spec{Type: "cloudsql-ssd", SizeBytes: 600 * gib}).Limits(); c.BaseIOPS != 15000 {
		t.Errorf("cloudsql-ssd 600 GiB: %.0f IOPS, want the 15,000 cap", c.BaseIOPS)
	}
}

func TestEraChangesThePublishedFigures(t *testing.T) {
	for _, tc := range []struct {
		spec      Spec
		iops, mib float64
	}{
		{Spec{Type: "gp2", SizeBytes: 6000 * gib}, GP2MaxIOPS, GP2MaxMiBps},
		{Spec{Type: "gp2", SizeBytes: 5000 * gib, Era: "2018"}, GP2MaxIOPS2018, GP2MaxMiBps2018},
		{Spec{Type: "io1", SizeBytes: 1000 * gib, ProvisionedIOPS: 32000, Era: "2018"}, 32000, IO1MaxMiBps2018},
		{Spec{Type: "io1", SizeBytes: 1000 * gib, ProvisionedIOPS: 32000}, 32000, IOMaxMiBps},
	} {
		if l := tc.spec.Limits(); l.BaseIOPS != tc.iops || l.BaseMiBps != tc.mib {
			t.Errorf("%+v: %.0f IOPS %.0f MiB/s, want %.0f %.0f", tc.spec, l.BaseIOPS, l.BaseMiBps, tc.iops, tc.mib)
		}
	}
}

func TestBadSpecsNameFieldValueAndAllowed(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want []string
	}{
		{Spec{Type: "gp9", SizeBytes: gib}, []string{`"gp9"`, "gp2", "st1"}},
		{Spec{Type: "st1", SizeBytes: 100 * gib}, []string{"size", "100GiB", "125 GiB"}},
		{Spec{Type: "st1", SizeBytes: 200 * gib, Era: "2018"}, []string{"size", "500 GiB"}},
		{Spec{Type: "io1", SizeBytes: 100 * gib, ProvisionedIOPS: 6000}, []string{"iops", "6000", "50 per GiB"}},
		{Spec{Type: "io1", SizeBytes: 100 * gib}, []string{"iops", "unset"}},
		{Spec{Type: "gp2", SizeBytes: 100 * gib, ProvisionedIOPS: 500}, []string{"iops", "follows from its size"}},
		{Spec{Type: "io1", SizeBytes: 100 * gib, ProvisionedIOPS: 500, ProvisionedMiBps: 100}, []string{"throughput", "only iops"}},
		{Spec{Type: "gp3", SizeBytes: 100 * gib, ProvisionedMiBps: 900}, []string{"throughput", "900", "750"}},
		{Spec{Type: "gp3", SizeBytes: 100 * gib, Era: "2018"}, []string{"era", "did not exist"}},
		{Spec{Type: "gp3", SizeBytes: 100 * gib, Instance: "c9.huge"}, []string{"instance", "c4.large"}},
	} {
		err := tc.spec.Validate()
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v, want it to say %q", tc.spec, err, w)
			}
		}
	}
	for _, opts := range []map[string]string{
		{"type": "gp2"}, {"type": "gp2", "size": "lots"}, {"type": "gp2", "size": "10GiB", "fs": "ntfs"},
		{"type": "gp3", "size": "10GiB", "iops": "-3"}, {"type": "gp2", "size": "10GiB", "model": "maybe"},
		{"type": "gp2", "size": "10GiB", "latency": "fast"}, {"type": "gp2", "size": "10GiB", "credit_scale": "0"},
	} {
		var fe *param.FieldError
		if _, err := ConfigFromOptions(opts); !errors.As(err, &fe) || opts[fe.Field] != fe.Value {
			t.Errorf("%v: %v, want an error naming the option and its value", opts, err)
		}
	}
}

// Schedule allocates nothing, and many goroutines at once keep the counters exact.
func TestScheduleAllocatesNothingAndCountsExactly(t *testing.T) {
	m := model(t, Spec{Type: "gp2", SizeBytes: 100 * gib})
	op := Op{Write: true, Len: 4096}
	if a := testing.AllocsPerRun(1000, func() { op.Off += 1 << 20; m.Schedule(t0, op) }); a != 0 {
		t.Errorf("Schedule allocates %.1f times per call", a)
	}
	m = model(t, Spec{Type: "gp3", SizeBytes: 100 * gib})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				m.Schedule(t0, Op{Write: i%2 == 0, Off: int64(g*1000+i) << 20, Len: 4096})
			}
		}(g)
	}
	wg.Wait()
	if c := m.Snapshot(t0); c.ReadOps != 4000 || c.WriteOps != 4000 || c.ReadUnits+c.WriteUnits != 8000 || c.WriteBytes != 4000*4096 {
		t.Errorf("counters %+v", c)
	}
}

// What the model promises a steady job, as the calibration compares it with fio.
func TestExpectations(t *testing.T) {
	gp2 := Spec{Type: "gp2", SizeBytes: 100 * gib}.Limits()
	dry := Spec{Type: "gp2", SizeBytes: 100 * gib, CreditScale: 1e-9}.Limits()
	io1 := Spec{Type: "io1", SizeBytes: 100 * gib, ProvisionedIOPS: 1000}.Limits()
	st1 := Spec{Type: "st1", SizeBytes: 500 * gib}.Limits()
	for _, tc := range []struct {
		name string
		l    Limits
		j    Job
		want float64
	}{
		{"gp2 burst", gp2, Job{Write: true, Random: true, BS: 4096, Depth: 16, Seconds: 5}, 3000},
		{"gp2 dry", dry, Job{Write: true, Random: true, BS: 4096, Depth: 16, Seconds: 5}, 300},
		{"gp2 depth 1", gp2, Job{Random: true, BS: 4096, Depth: 1, Seconds: 5}, 1000},
		{"io1 1 MiB", io1, Job{Write: true, Random: true, BS: 1 << 20, Depth: 16, Seconds: 5}, 250},
		{"st1 1 MiB sequential", st1, Job{BS: 1 << 20, Depth: 8, Seconds: 5}, 250 * 500.0 / 1024},
		{"st1 4 KiB random", st1, Job{Random: true, BS: 4096, Depth: 8, Seconds: 5}, 250 * 500.0 / 1024},
		{"gp2 bursts for a while", gp2, Job{Write: true, Random: true, BS: 4096, Depth: 16, Seconds: 1e5}, 300 + 54},
	} {
		if got := tc.l.Expect(tc.j); !near(got, tc.want, 1e-4) {
			t.Errorf("%s: %.2f, want %.2f", tc.name, got, tc.want)
		}
	}
}

// A long sequential stream stays one run however many out-of-order pieces come and go beside it.
func TestLongStreamKeepsMerging(t *testing.T) {
	c := counter{unit: HDDUnitBytes}
	var units int64
	const piece = 512 << 10
	for i := int64(0); i < 1000; i += 2 { // pairs of pieces, each pair swapped: every second one out of order
		units += c.units(Op{Off: (i + 1) * piece, Len: piece}, 0)
		units += c.units(Op{Off: i * piece, Len: piece}, 0)
	}
	if units != 500 {
		t.Errorf("500 MiB read as swapped 512 KiB pieces: %d units, want 500", units)
	}
}

// However the pieces of concurrent large I/Os interleave (up to 16 in flight, any order), a
// sequential stream is billed exactly one unit per unit of bytes: runs paid for apart are refunded
// when they join.
func TestAnyArrivalOrderBillsTheStreamExactly(t *testing.T) {
	const piece = 512 << 10
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 300; trial++ {
		c := counter{unit: HDDUnitBytes}
		var units int64
		var pending []Op
		next := int64(0)
		take := func() {
			i := rng.Intn(len(pending))
			units += c.units(pending[i], 0)
			pending = append(pending[:i], pending[i+1:]...)
		}
		for r := 0; r < 200; r++ {
			pending = append(pending, Op{Off: next, Len: piece}, Op{Off: next + piece, Len: piece})
			next += 2 * piece
			for len(pending) > 16 {
				take()
			}
		}
		for len(pending) > 0 {
			take()
		}
		if units != 200 {
			t.Fatalf("trial %d: %d units for 200 MiB read in pieces", trial, units)
		}
	}
}

// With a merge window, contiguous I/Os bill as one only when they arrive close together: the
// journal's 4 KiB commit every few seconds is an I/O each, not one ever-growing run.
func TestMergeWindowBoundsMergingInTime(t *testing.T) {
	journal := func(window float64, gap float64) int64 {
		c := counter{unit: HDDUnitBytes, window: window}
		var units int64
		for i := int64(0); i < 10; i++ {
			units += c.units(Op{Write: true, Off: i * 4096, Len: 4096}, float64(i)*gap)
		}
		return units
	}
	if got := journal(0, 5); got != 1 {
		t.Errorf("no window, writes 5 s apart: %d units, want 1", got)
	}
	if got := journal(0.01, 5); got != 10 {
		t.Errorf("10 ms window, writes 5 s apart: %d units, want 10", got)
	}
	if got := journal(0.01, 0.0001); got != 1 {
		t.Errorf("10 ms window, writes 0.1 ms apart: %d units, want 1", got)
	}
	cfg, err := ConfigFromOptions(map[string]string{"type": "st1", "size": "500GiB", "merge_window": "10ms"})
	if err != nil || cfg.Spec.Limits().MergeWindow != 10*time.Millisecond {
		t.Errorf("option merge_window: %v %+v", err, cfg.Spec)
	}
	if _, err := ConfigFromOptions(map[string]string{"type": "st1", "size": "500GiB", "merge_window": "soon"}); err == nil || !strings.Contains(err.Error(), "merge_window") {
		t.Errorf("merge_window soon: %v", err)
	}
}

// An N1 VM's egress caps its writes to Persistent Disk, not its reads: on one vCPU a large pd-ssd
// writes at most 216 MB/s.
func TestN1InstanceCapsWritesOnly(t *testing.T) {
	cfg, err := ConfigFromOptions(map[string]string{"type": "pd-ssd", "size": "2000GiB", "instance": "n1-standard-1"})
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Spec.Limits()
	write := l.Expect(Job{Write: true, BS: 1 << 20, Depth: 64})
	read := l.Expect(Job{BS: 1 << 20, Depth: 64})
	if !near(write, 216e6/(1<<20), 1e-9) || !near(read, l.BaseMiBps, 1e-9) {
		t.Errorf("pd-ssd 2,000 GiB on n1-standard-1: write %.1f MiB/s (want 216 MB/s = %.1f), read %.1f (want the disk's %.1f)", write, 216e6/(1<<20), read, l.BaseMiBps)
	}
	if cfg.MemoryBytes != 3840<<20 {
		t.Errorf("memory %d", cfg.MemoryBytes)
	}
	m, _ := New(cfg.Spec, func() time.Time { return t0 })
	var done time.Time
	for i := 0; i < 400; i++ { // 400 MiB of writes arriving at once: bounded by the egress cap
		done = m.Schedule(t0, Op{Write: true, Off: int64(i) << 20, Len: 1 << 20})
	}
	if secs := done.Sub(t0).Seconds(); !near(secs, 400/(216e6/(1<<20)), 0.05) {
		t.Errorf("400 MiB of writes finish after %.2f s, want about %.2f", secs, 400/(216e6/(1<<20)))
	}
}

// The model leaves no I/O behind: with depth I/Os kept in flight (each replaced as it completes),
// none waits for tokens longer than the I/Os in flight with it cost at the slowest rate they meet,
// whatever the buckets do meanwhile (gp2 and st1 running out of credits); and the longest wait
// the counters report is the longest there was.
func TestNoIOWaitsLongerThanTheQueueAheadOfIt(t *testing.T) {
	small := func(i int) Op { return Op{Write: i%3 == 0, Off: int64(i) << 20, Len: 4096} }
	large := func(i int) Op { return Op{Write: true, Off: int64(i) * 3 << 20, Len: 1 << 20} }
	for _, tc := range []struct {
		name  string
		spec  Spec
		op    func(int) Op
		perIO float64 // seconds of the slowest bucket one I/O costs
	}{
		{"gp2 running dry", Spec{Type: "gp2", SizeBytes: 100 * gib, CreditScale: 2000 / GP2CreditBucket}, small, 1 / 300.0},
		{"st1 random, running dry", Spec{Type: "st1", SizeBytes: 500 * gib, CreditScale: 1e-5}, small, 1 / (ST1BaseMiBpsPerTiB * 500 / 1024)},
		{"io1 1 MiB", Spec{Type: "io1", SizeBytes: 100 * gib, ProvisionedIOPS: 1000}, large, 4 / 1000.0},
		{"pd-ssd", Spec{Type: "pd-ssd", SizeBytes: 100 * gib}, small, 1 / 9000.0},
	} {
		for _, depth := range []int{1, 16, 64} {
			m := model(t, tc.spec)
			svc := m.limits.ServiceTime.Seconds()
			done := make([]float64, depth) // when each slot's I/O completes; all free at 0
			var longest float64
			for i := 0; i < 5000; i++ {
				slot := 0
				for j := range done {
					if done[j] < done[slot] {
						slot = j
					}
				}
				arrive := done[slot]
				done[slot] = m.Schedule(at(arrive), tc.op(i)).Sub(t0).Seconds()
				longest = max(longest, done[slot]-svc-arrive)
			}
			c := m.Snapshot(at(done[0]))
			if bound := float64(depth)*tc.perIO + 1e-6; longest > bound {
				t.Errorf("%s, depth %d: an I/O waited %.2f ms for tokens, more than the %d in flight cost (%.2f ms)", tc.name, depth, longest*1e3, depth, bound*1e3)
			}
			if math.Abs(c.MaxWaitS-longest) > 1e-6 {
				t.Errorf("%s, depth %d: counters say the longest wait was %.3f ms, it was %.3f", tc.name, depth, c.MaxWaitS*1e3, longest*1e3)
			}
			if tc.spec.CreditScale > 0 && depth > 1 && c.ThrottledS <= 0 {
				t.Errorf("%s, depth %d: credits gone, yet nothing waited", tc.name, depth)
			}
		}
	}
}
