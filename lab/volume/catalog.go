package volume

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Sources of the published figures below (each constant names its own):
//
//	[ebs-types]  Amazon EBS volume types, https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html
//	             and its pages on General Purpose SSD, Provisioned IOPS SSD and
//	             Throughput Optimized / Cold HDD volumes; figures as the pages gave them in 2024.
//	[ebs-io]     Amazon EBS I/O characteristics and monitoring,
//	             https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html (2024).
//	[ebs-2018]   the same pages as archived in early 2018, the era of seed 004 (Feb 2018); where
//	             the era matters a constant says which it is.
//	[ebs-opt]    Amazon EBS-optimized instance types, https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimized.html
//	             (c4.large: 500 Mbps dedicated EBS bandwidth, 4,000 IOPS at 16 KiB).
//	[pd-perf]    Google Cloud, Persistent Disk performance overview,
//	             https://cloud.google.com/compute/docs/disks/performance (2024).
//	[pd-egress]  Google Cloud, Optimize Persistent Disk performance, "Network egress caps on write
//	             throughput", https://cloud.google.com/compute/docs/disks/optimizing-pd-performance
//	             (its N1 table, read here in a stored copy, 2025).
//	[seed-001]   the Cloud SQL console of seed 001 (Dec 2018), read from its own tables: a figure
//	             taken from a seed cannot be used to claim that seed reproduced.
//
// The live pages cannot be fetched from this machine. Cross-checked against copies found here:
// gp2's 5.4 million credits and 3 IOPS/GiB, st1/sc1's per-TiB rates and maxima, the seeds' 2018
// figures (seed 004: HDD minimum 500 GB, io1 at 50 IOPS/GiB; seed 001: the Cloud SQL console), and
// Google's PD page structure. The rest (gp3, io1/io2 maxima, PD per-GiB rates, c4.large) are the
// pages' 2024 figures as recorded here without a copy at hand: to verify against the live pages.
// Found again on 2026-11-24 in stored copies: gp3's 3,000-16,000 IOPS, io1's 100-64,000 IOPS and
// 50 IOPS per GiB, st1's per-TiB rates and 125 GiB minimum, and PD's per-GiB IOPS and throughput
// (the page now writes MiBps). Each figure's kind, source and check: provenance.go.
// Service times are not published: each is an assumption, named as one, and settable (option
// latency).

// Billing units [ebs-io]: "Amazon EBS SSD volumes ... I/O operations ... up to 256 KiB ... count
// as one"; "for HDD volumes ... up to 1,024 KiB"; smaller sequential I/Os are merged into one.
const (
	SSDUnitBytes = 256 << 10
	HDDUnitBytes = 1 << 20
)

// EBS gp2 [ebs-types]: 3 IOPS per GiB, at least 100; bursts to 3,000 IOPS on a bucket of 5.4
// million I/O credits, refilled at the baseline, full at creation.
const (
	GP2IOPSPerGiB        = 3.0
	GP2MinIOPS           = 100.0
	GP2BurstIOPS         = 3000.0
	GP2CreditBucket      = 5.4e6
	GP2MaxIOPS           = 16000.0 // since Dec 2018; 10,000 before [ebs-2018]
	GP2MaxIOPS2018       = 10000.0
	GP2SmallMiBps        = 128.0 // volumes of 170 GiB or less
	GP2SmallLimitGiB     = 170
	GP2MaxMiBps          = 250.0 // larger volumes (between 170 and 334 GiB only while credits last: simplified here)
	GP2MaxMiBps2018      = 160.0
	GP2MinGiB, GP2MaxGiB = 1, 16 << 10
)

// EBS gp3 [ebs-types], launched Dec 2020: 3,000 IOPS and 125 MiB/s whatever the size,
// provisionable to 16,000 IOPS (500 per GiB) and 1,000 MiB/s (0.25 MiB/s per provisioned IOPS).
// AWS raised gp3's maxima in 2025; those are not modelled (assumption: the 2024 figures).
const (
	GP3BaseIOPS, GP3MaxIOPS, GP3IOPSPerGiB     = 3000.0, 16000.0, 500.0
	GP3BaseMiBps, GP3MaxMiBps, GP3MiBpsPerIOPS = 125.0, 1000.0, 0.25
	GP3MinGiB, GP3MaxGiB                       = 1, 16 << 10
)

// EBS io1 and io2 [ebs-types]: provisioned IOPS, at most 50 per GiB (io1) or 500 (io2), at most
// 64,000 (Nitro instances); throughput 256 KiB per provisioned IOPS up to 1,000 MiB/s. In 2018
// [ebs-2018] io1 allowed 32,000 IOPS and 500 MiB/s (seed 004 used io1's default, 50 x 500 GiB =
// 25,000); io2 came in 2020.
const (
	IO1IOPSPerGiB, IO2IOPSPerGiB = 50.0, 500.0
	IOMinIOPS, IOMaxIOPS         = 100.0, 64000.0
	IO1MaxIOPS2018               = 32000.0
	IOMaxMiBps, IO1MaxMiBps2018  = 1000.0, 500.0
	IOMiBpsPerIOPS               = 0.25
	IOMinGiB, IOMaxGiB           = 4, 16 << 10
)

// EBS st1 and sc1 [ebs-types]: throughput per TiB of size, a burst bucket of 1 TiB of credit per
// TiB refilled at the baseline, full at creation; at most 500 (st1) / 250 (sc1) MiB/s and 500 /
// 250 IOPS of 1 MiB. Smallest size 125 GiB today, 500 GiB in 2018 (seed 004: "the HDD types'
// minimum is 500GB").
const (
	ST1BaseMiBpsPerTiB, ST1BurstMiBpsPerTiB, ST1MaxMiBps, ST1MaxIOPS = 40.0, 250.0, 500.0, 500.0
	SC1BaseMiBpsPerTiB, SC1BurstMiBpsPerTiB, SC1MaxMiBps, SC1MaxIOPS = 12.0, 80.0, 250.0, 250.0
	HDDCreditMiBPerTiB                                               = 1 << 20 // 1 TiB of credit per TiB, in MiB
	HDDMinGiB, HDDMinGiB2018, HDDMaxGiB                              = 125, 500, 16 << 10
)

// Persistent Disk [pd-perf], per GiB of size, reads and writes alike unless said: pd-standard
// 0.75 read / 1.5 write IOPS and 0.12 MiB/s; pd-balanced 6 IOPS and 0.28 MiB/s on top of a
// baseline of 3,000 IOPS and 140 MiB/s; pd-ssd 30 IOPS and 0.48 MiB/s on top of 6,000 IOPS and
// 240 MiB/s (the baselines are today's; 2018 had none, nor pd-balanced). Per-VM caps: the N1
// instances' write bandwidth ([pd-egress], below); the per-vCPU IOPS table is not modelled.
// Assumption: Google's "MB" in [pd-perf] is MiB.
const (
	PDStandardReadIOPSPerGiB, PDStandardWriteIOPSPerGiB, PDStandardMiBpsPerGiB           = 0.75, 1.5, 0.12
	PDBalancedIOPSPerGiB, PDBalancedMiBpsPerGiB, PDBalancedBaseIOPS, PDBalancedBaseMiBps = 6.0, 0.28, 3000.0, 140.0
	PDSSDIOPSPerGiB, PDSSDMiBpsPerGiB, PDSSDBaseIOPS, PDSSDBaseMiBps                     = 30.0, 0.48, 6000.0, 240.0
	PDMinGiB, PDMaxGiB                                                                   = 10, 64 << 10
)

// Cloud SQL SSD [seed-001]: the console showed pd-ssd's per-GB figures (50 GB: 1,500 IOPS and
// 24 MB/s each way) capped at 15,000 IOPS and, for writes, 151.5 MB/s on a 2-vCPU instance
// (400 and 600 GB); reads were not capped up to 288 MB/s. Assumption: MB is MiB, as above.
const (
	CloudSQLIOPSPerGiB, CloudSQLMiBpsPerGiB = 30.0, 0.48
	CloudSQLMaxIOPS, CloudSQLMaxWriteMiBps  = 15000.0, 151.5
	CloudSQLMinGiB, CloudSQLMaxGiB          = 10, 30 << 10
)

// Service times per I/O (assumptions: no provider publishes one). AWS promises SSD volumes
// "single-digit millisecond" latency and io2 Block Express "sub-millisecond"; a rotating disk
// seeks and turns (a few ms per random I/O at 7,200 rpm); Persistent Disk is network storage
// like EBS.
var (
	SSDServiceTime        = time.Millisecond
	IO2ServiceTime        = 500 * time.Microsecond
	ST1ServiceTime        = 3 * time.Millisecond
	SC1ServiceTime        = 6 * time.Millisecond
	PDServiceTime         = time.Millisecond
	PDStandardServiceTime = 5 * time.Millisecond
	// FlushTime is what a cache flush costs: EBS and PD acknowledge a write once durable, so a
	// flush has nothing to drain (assumption: one round trip, a tenth of a millisecond).
	FlushTime = 100 * time.Microsecond
)

// Instance is the machine a volume is attached to: its own limit on storage I/O, and the memory
// that bounds its page cache.
type Instance struct {
	Name        string
	IOPS        float64 // 0: no cap
	MiBps       float64
	WriteMiBps  float64 // a cap on writes alone (Persistent Disk's share of the VM's network egress)
	MemoryBytes int64
	Source      string
}

// N1 VMs' write bandwidth to Persistent Disk [pd-egress]: a VM's writes share its network egress
// cap (2 Gbps per vCPU, at most 16 Gbps on N1), each written byte costs about 1.16 bytes of egress
// (replication and overhead), so the maximum write bandwidth is 216 MB/s at 1 vCPU, 1,078 MB/s at
// 2-7, 1,724 at 8-15 and 3,448 at 16 or more (Google's table; the lower "full network utilization"
// column applies when the VM also sends other traffic, not modelled). The per-vCPU IOPS limits of the
// performance page are not modelled. Assumption: Google's MB is 10^6 bytes here.
const mb = 1e6 / (1 << 20)

var (
	N1WriteMiBps1, N1WriteMiBps2to7, N1WriteMiBps8to15, N1WriteMiBps16 = 216 * mb, 1078 * mb, 1724 * mb, 3448 * mb
)

// Instances [ebs-opt], and Cloud SQL's machine in seed 001.
var Instances = []Instance{
	{Name: "none", Source: "no instance limit"},
	// c4.large: 2 vCPU, 3.75 GiB; 500 Mbps dedicated EBS bandwidth (62.5 MB/s) and 4,000 IOPS.
	{Name: "c4.large", IOPS: 4000, MiBps: 62.5e6 / (1 << 20), MemoryBytes: 3840 << 20, Source: "[ebs-opt]; seed 004's instance"},
	// N1 VMs for Persistent Disk: 3.75 GB of memory per vCPU; writes capped by the VM's egress.
	{Name: "n1-standard-1", WriteMiBps: N1WriteMiBps1, MemoryBytes: 3840 << 20, Source: "[pd-egress]"},
	{Name: "n1-standard-2", WriteMiBps: N1WriteMiBps2to7, MemoryBytes: 7680 << 20, Source: "[pd-egress]"},
	{Name: "n1-standard-4", WriteMiBps: N1WriteMiBps2to7, MemoryBytes: 15360 << 20, Source: "[pd-egress]"},
	{Name: "n1-standard-8", WriteMiBps: N1WriteMiBps8to15, MemoryBytes: 30720 << 20, Source: "[pd-egress]"},
	{Name: "n1-standard-16", WriteMiBps: N1WriteMiBps16, MemoryBytes: 61440 << 20, Source: "[pd-egress]"},
	// db-n1-standard-2: 2 vCPU, 7.5 GB; its storage caps are the disk type's (cloudsql-ssd).
	{Name: "db-n1-standard-2", MemoryBytes: 7680 << 20, Source: "seed 001's Cloud SQL machine"},
	// db-custom-1-3840: 1 vCPU, 3.75 GB, the smallest dedicated-core Cloud SQL machine (a custom
	// machine takes 1 vCPU or an even number, and at least 3.75 GB).
	{Name: "db-custom-1-3840", MemoryBytes: 3840 << 20, Source: "Cloud SQL's smallest dedicated-core machine"},
}

// TypeInfo describes a volume type for help and validation.
type TypeInfo struct {
	Name, Provider, Description string
	Provisionable               []string // options the user sets: iops, throughput
}

// Types lists the volume types, by name.
func Types() []TypeInfo {
	t := []TypeInfo{
		{"gp2", "aws", "EBS General Purpose SSD: 3 IOPS/GiB, bursts to 3,000 on I/O credits", nil},
		{"gp3", "aws", "EBS General Purpose SSD: 3,000 IOPS and 125 MiB/s, more provisionable", []string{"iops", "throughput"}},
		{"io1", "aws", "EBS Provisioned IOPS SSD (up to 50 IOPS/GiB)", []string{"iops"}},
		{"io2", "aws", "EBS Provisioned IOPS SSD (up to 500 IOPS/GiB)", []string{"iops"}},
		{"st1", "aws", "EBS Throughput Optimized HDD: 40 MiB/s per TiB, bursts to 250 on credits", nil},
		{"sc1", "aws", "EBS Cold HDD: 12 MiB/s per TiB, bursts to 80 on credits", nil},
		{"pd-standard", "gcp", "Persistent Disk, standard (HDD)", nil},
		{"pd-balanced", "gcp", "Persistent Disk, balanced SSD", nil},
		{"pd-ssd", "gcp", "Persistent Disk, SSD", nil},
		{"cloudsql-ssd", "gcp", "Cloud SQL SSD storage: pd-ssd by size with seed 001's caps", nil},
	}
	sort.Slice(t, func(i, j int) bool { return t[i].Name < t[j].Name })
	return t
}

// Spec is a volume as a user asks for it.
type Spec struct {
	Type      string
	SizeBytes int64
	// ProvisionedIOPS and ProvisionedMiBps where the type takes them (0: the type's default).
	ProvisionedIOPS  float64
	ProvisionedMiBps float64
	Instance         string // "" or "none": no instance limit
	Era              string // "current" (default) or "2018", the seeds' era
	// ServiceTime replaces the type's assumed per-I/O service time (0: keep it).
	ServiceTime time.Duration
	// MergeWindow bounds in time which contiguous I/Os are billed as one: an I/O extends a run only
	// if the run's last I/O arrived at most this long before it (0: no bound, as long as the run is
	// among the recently used ones). Assumption: providers say contiguous I/O merges, not within
	// what time; the pieces of one large I/O arrive within microseconds of each other.
	MergeWindow time.Duration
	// CreditScale multiplies the burst bucket's size (0: 1), so a test can drain it in seconds.
	CreditScale float64
}

// Bounds of a spec's free settings, so that no setting can hang the volume or overflow a counter.
// MaxServiceTime is 1 s, about 170 times the slowest service time assumed above (sc1's 6 ms),
// room for a degraded volume's stalls: every I/O of the mounted file system waits it, and a stop
// waits for those in flight (10 s once made Ctrl-C take 46 s). MaxMergeWindow is 10 s: the pieces
// of one I/O arrive within microseconds and ext4 commits its journal every 5 s, so a longer window
// only joins unrelated commits (0 is no bound). A credit scale of 1e-9 leaves less than one I/O
// of credit on any type; 1,000 makes gp2's bucket last three weeks at its burst. IOPS and MiB/s
// are bounded by each type's rules (Validate).
const (
	MaxServiceTime                 = time.Second
	MaxMergeWindow                 = 10 * time.Second
	MinCreditScale, MaxCreditScale = 1e-9, 1000.0
)

// Eras are the sets of figures a spec may ask for.
var Eras = []string{"current", "2018"}

// Limits are a spec's resolved figures: what the model enforces.
type Limits struct {
	// IOPS counts billing units (256 KiB SSD, 1 MiB HDD, merged when sequential). BaseIOPS is
	// sustained; BurstIOPS, while CreditIOs last (gp2). Read and write share them unless
	// ReadIOPS/WriteIOPS are set (Persistent Disk).
	BaseIOPS, BurstIOPS, CreditIOs float64
	ReadIOPS, WriteIOPS            float64
	// MiBps is bytes (SSD) or units of 1 MiB (HDD) per second; BurstMiBps while CreditMiB last.
	BaseMiBps, BurstMiBps, CreditMiB float64
	ReadMiBps, WriteMiBps            float64
	UnitBytes                        int64
	HDD                              bool
	ServiceTime                      time.Duration
	MergeWindow                      time.Duration
	Instance                         Instance
}

func (s Spec) gib() float64 { return float64(s.SizeBytes) / (1 << 30) }

func (s Spec) era2018() bool { return s.Era == "2018" }

// Validate checks a spec against its type's rules; errors name the field, the value and what is
// allowed.
func (s Spec) Validate() error {
	fail := func(field, value, allowed string) error {
		return fmt.Errorf("volume %s: %s %s: want %s", s.Type, field, value, allowed)
	}
	info, ok := typeInfo(s.Type)
	if !ok {
		return fmt.Errorf("volume type %q: want one of %s", s.Type, strings.Join(TypeNames(), ", "))
	}
	// NaN passes every comparison below and Inf overflows the buckets: neither is a setting.
	for _, f := range []struct {
		name string
		v    float64
	}{{"iops", s.ProvisionedIOPS}, {"throughput", s.ProvisionedMiBps}, {"credit_scale", s.CreditScale}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fail(f.name, fmt.Sprint(f.v), "a finite number, 0 or more (0: the default)")
		}
	}
	if c := s.CreditScale; c != 0 && (c < MinCreditScale || c > MaxCreditScale) {
		return fail("credit_scale", fmt.Sprint(c), fmt.Sprintf("%g to %g (0: 1, the published bucket)", MinCreditScale, MaxCreditScale))
	}
	if d := s.ServiceTime; d < 0 || d > MaxServiceTime {
		return fail("latency", d.String(), fmt.Sprintf("0 (the type's) to %v", MaxServiceTime))
	}
	if d := s.MergeWindow; d < 0 || d > MaxMergeWindow {
		return fail("merge_window", d.String(), fmt.Sprintf("0 (no bound) to %v", MaxMergeWindow))
	}
	switch s.Era {
	case "", "current":
	case "2018":
		if s.Type == "gp3" || s.Type == "io2" || s.Type == "pd-balanced" {
			return fail("era", s.Era, "current: "+s.Type+" did not exist in 2018")
		}
	default:
		return fail("era", s.Era, strings.Join(Eras, " or "))
	}
	if _, ok := instance(s.Instance); !ok {
		var names []string
		for _, in := range Instances {
			names = append(names, in.Name)
		}
		return fail("instance", fmt.Sprintf("%q", s.Instance), "one of "+strings.Join(names, ", "))
	}
	for _, p := range []struct {
		name string
		set  bool
	}{{"iops", s.ProvisionedIOPS != 0}, {"throughput", s.ProvisionedMiBps != 0}} {
		if p.set && !slices.Contains(info.Provisionable, p.name) {
			allowed := "no " + p.name + " option: " + s.Type + "'s follows from its size"
			if len(info.Provisionable) > 0 {
				allowed = "only " + strings.Join(info.Provisionable, ", ") + " for " + s.Type
			}
			return fail(p.name, fmt.Sprint(map[string]float64{"iops": s.ProvisionedIOPS, "throughput": s.ProvisionedMiBps}[p.name]), allowed)
		}
	}
	minGiB, maxGiB := sizeRange(s)
	if g := s.gib(); g < float64(minGiB) || g > float64(maxGiB) {
		return fail("size", fmt.Sprintf("%.0fGiB", g), fmt.Sprintf("%d GiB to %d GiB", minGiB, maxGiB))
	}
	iops := s.ProvisionedIOPS
	switch s.Type {
	case "io1", "io2":
		perGiB, maxIOPS := IO1IOPSPerGiB, IOMaxIOPS
		if s.Type == "io2" {
			perGiB = IO2IOPSPerGiB
		}
		if s.era2018() {
			maxIOPS = IO1MaxIOPS2018
		}
		if iops == 0 {
			return fail("iops", "(unset)", fmt.Sprintf("the provisioned IOPS, %.0f to %.0f", IOMinIOPS, min(maxIOPS, perGiB*s.gib())))
		}
		if iops < IOMinIOPS || iops > maxIOPS || iops > perGiB*s.gib() {
			return fail("iops", fmt.Sprint(iops), fmt.Sprintf("%.0f to %.0f (at most %.0f per GiB, %.0f in all)", IOMinIOPS, min(maxIOPS, perGiB*s.gib()), perGiB, maxIOPS))
		}
	case "gp3":
		if iops != 0 && (iops < GP3BaseIOPS || iops > GP3MaxIOPS || iops > GP3IOPSPerGiB*s.gib()) {
			return fail("iops", fmt.Sprint(iops), fmt.Sprintf("%.0f to %.0f (at most %.0f per GiB)", GP3BaseIOPS, min(GP3MaxIOPS, max(GP3BaseIOPS, GP3IOPSPerGiB*s.gib())), GP3IOPSPerGiB))
		}
		if t := s.ProvisionedMiBps; t != 0 {
			maxT := min(GP3MaxMiBps, GP3MiBpsPerIOPS*max(iops, GP3BaseIOPS))
			if t < GP3BaseMiBps || t > maxT {
				return fail("throughput", fmt.Sprint(t), fmt.Sprintf("%.0f to %.0f MiB/s (at most %.2f MiB/s per provisioned IOPS)", GP3BaseMiBps, maxT, GP3MiBpsPerIOPS))
			}
		}
	}
	return nil
}

func sizeRange(s Spec) (int, int) {
	switch s.Type {
	case "gp2":
		return GP2MinGiB, GP2MaxGiB
	case "gp3":
		return GP3MinGiB, GP3MaxGiB
	case "io1", "io2":
		return IOMinGiB, IOMaxGiB
	case "st1", "sc1":
		if s.era2018() {
			return HDDMinGiB2018, HDDMaxGiB
		}
		return HDDMinGiB, HDDMaxGiB
	case "cloudsql-ssd":
		return CloudSQLMinGiB, CloudSQLMaxGiB
	}
	return PDMinGiB, PDMaxGiB
}

// Limits resolves a valid spec into the figures the model enforces.
func (s Spec) Limits() Limits {
	g := s.gib()
	l := Limits{UnitBytes: SSDUnitBytes, ServiceTime: SSDServiceTime}
	l.Instance, _ = instance(s.Instance)
	scale := s.CreditScale
	if scale == 0 {
		scale = 1
	}
	switch s.Type {
	case "gp2":
		maxIOPS, maxMiBps := GP2MaxIOPS, GP2MaxMiBps
		if s.era2018() {
			maxIOPS, maxMiBps = GP2MaxIOPS2018, GP2MaxMiBps2018
		}
		l.BaseIOPS = min(maxIOPS, max(GP2MinIOPS, GP2IOPSPerGiB*g))
		if l.BaseIOPS < GP2BurstIOPS {
			l.BurstIOPS, l.CreditIOs = GP2BurstIOPS, GP2CreditBucket*scale
		}
		l.BaseMiBps = maxMiBps
		if g <= GP2SmallLimitGiB {
			l.BaseMiBps = GP2SmallMiBps
		}
	case "gp3":
		l.BaseIOPS, l.BaseMiBps = GP3BaseIOPS, GP3BaseMiBps
		if s.ProvisionedIOPS > 0 {
			l.BaseIOPS = s.ProvisionedIOPS
		}
		if s.ProvisionedMiBps > 0 {
			l.BaseMiBps = s.ProvisionedMiBps
		}
	case "io1", "io2":
		maxMiBps := IOMaxMiBps
		if s.era2018() {
			maxMiBps = IO1MaxMiBps2018
		}
		l.BaseIOPS = s.ProvisionedIOPS
		l.BaseMiBps = min(maxMiBps, IOMiBpsPerIOPS*s.ProvisionedIOPS)
		if s.Type == "io2" {
			l.ServiceTime = IO2ServiceTime
		}
	case "st1", "sc1":
		base, burst, maxMiBps, maxIOPS, svc := ST1BaseMiBpsPerTiB, ST1BurstMiBpsPerTiB, ST1MaxMiBps, ST1MaxIOPS, ST1ServiceTime
		if s.Type == "sc1" {
			base, burst, maxMiBps, maxIOPS, svc = SC1BaseMiBpsPerTiB, SC1BurstMiBpsPerTiB, SC1MaxMiBps, SC1MaxIOPS, SC1ServiceTime
		}
		tib := g / 1024
		l.HDD, l.UnitBytes, l.ServiceTime = true, HDDUnitBytes, svc
		l.BaseMiBps = min(maxMiBps, base*tib)
		l.BurstMiBps = min(maxMiBps, burst*tib)
		l.CreditMiB = HDDCreditMiBPerTiB * tib * scale
		l.BaseIOPS = maxIOPS
	case "pd-standard":
		l.ReadIOPS, l.WriteIOPS = PDStandardReadIOPSPerGiB*g, PDStandardWriteIOPSPerGiB*g
		l.BaseMiBps = PDStandardMiBpsPerGiB * g
		l.ServiceTime = PDStandardServiceTime
	case "pd-balanced":
		l.BaseIOPS, l.BaseMiBps = PDBalancedBaseIOPS+PDBalancedIOPSPerGiB*g, PDBalancedBaseMiBps+PDBalancedMiBpsPerGiB*g
		l.ServiceTime = PDServiceTime
	case "pd-ssd":
		l.BaseIOPS, l.BaseMiBps = PDSSDIOPSPerGiB*g, PDSSDMiBpsPerGiB*g
		if !s.era2018() {
			l.BaseIOPS, l.BaseMiBps = l.BaseIOPS+PDSSDBaseIOPS, l.BaseMiBps+PDSSDBaseMiBps
		}
		l.ServiceTime = PDServiceTime
	case "cloudsql-ssd":
		l.BaseIOPS = min(CloudSQLMaxIOPS, CloudSQLIOPSPerGiB*g)
		l.ReadMiBps, l.WriteMiBps = CloudSQLMiBpsPerGiB*g, min(CloudSQLMaxWriteMiBps, CloudSQLMiBpsPerGiB*g)
		l.ServiceTime = PDServiceTime
	}
	if s.ServiceTime > 0 {
		l.ServiceTime = s.ServiceTime
	}
	l.MergeWindow = s.MergeWindow
	return l
}

func typeInfo(name string) (TypeInfo, bool) {
	for _, t := range Types() {
		if t.Name == name {
			return t, true
		}
	}
	return TypeInfo{}, false
}

func instance(name string) (Instance, bool) {
	if name == "" {
		name = "none"
	}
	for _, in := range Instances {
		if in.Name == name {
			return in, true
		}
	}
	return Instance{}, false
}
