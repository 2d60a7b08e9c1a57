package volume

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"persistlab/provenance"
)

// The volume model's figures and where each comes from (package provenance; `persistlab lab model
// volume` prints them). Each Value is formatted from the constant, variable or instance it
// describes; TestProvenanceCoversTheCode (provenance) fails when a constant or variable
// of this package has no row here and is not named as outside the model. The tags ([ebs-types],
// ...) are catalog.go's; "checked 2026-11-24" marks a figure found again that day in a stored
// copy of the page named (the live pages cannot be fetched from this machine).

func init() {
	provenance.Register(provenance.Model{Name: "volume", Figures: Figures, For: FiguresFor})
}

const (
	ebsTypes    = "[ebs-types] https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html, the page's 2024 figures as recorded"
	ebs2018     = "[ebs-2018] the EBS volume-type pages as archived in early 2018 (seed 004's era, Feb 2018), as recorded"
	ebsIO       = "[ebs-io] https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html (2024)"
	ebsOpt      = "[ebs-opt] https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimized.html (2024, as recorded; not re-read)"
	pdPerf      = "[pd-perf] https://cloud.google.com/compute/docs/disks/performance (2024)"
	pdEgress    = `[pd-egress] https://cloud.google.com/compute/docs/disks/optimizing-pd-performance, "Network egress caps on write throughput", N1 table (a stored copy, 2025; not re-read)`
	gcpTypes    = "https://cloud.google.com/compute/docs/machine-types (n1-standard: 3.75 GB per vCPU; checked 2026-11-24 in stored copies), read as GiB"
	seed001     = "seed 001 (Qiita, 2018-12-16), its Cloud SQL console tables per disk size (checked 2026-11-24 in the seed's text): the provider's limits as the seed configured them, not its results"
	ebsPrice    = "[ebs-pricing] https://aws.amazon.com/ebs/pricing, US East (N. Virginia), as listed in 2025 (not re-read)"
	pdPrice     = "[pd-pricing] https://cloud.google.com/compute/disks-image-pricing, us-central1, as listed in 2025 (not re-read)"
	sqlMachines = "Cloud SQL's machine types, https://cloud.google.com/sql/docs/mysql/instance-settings (a custom machine: 1 vCPU or an even number up to 96, 0.9 to 6.5 GB a vCPU in steps of 256 MB, at least 3.75 GB; as quoted from Google's and Terraform's pages in a stored copy read 2026-12-02), read as MiB"
	sqlPrice    = "[sql-pricing] https://cloud.google.com/sql/pricing, us-central1, as listed in 2025 (not re-read)"

	checkedGP2 = "; checked 2026-11-24: awsdocs/amazon-ec2-user-guide doc_source/ebs-volume-types.md (GitHub copy) and https://repost.aws/knowledge-center/rds-low-burst-balance"
	checkedST1 = "; checked 2026-11-24: https://aws.amazon.com/ebs/throughput-optimized/ (40 MB/s per TB baseline, 250 burst, 500 per volume, 125 GiB - 16 TiB)"
	checkedPD  = "; checked 2026-11-24 in a stored mirror of the page: read IOPS per GiB 0.75 / 6 / 30, write 1.5 / 6 / 30, throughput per GiB (MiBps) 0.12 / 0.28 / 0.48"
	checkedIO  = "; checked 2026-11-24: AWS SDK for Kotlin EC2 reference (io1: 100 - 64,000 IOPS) and the OpsWorks API reference (io1: at most 50 IOPS per GiB)"
	checkedGP3 = "; checked 2026-11-24: AWS SDK for Kotlin EC2 reference (gp3: 3,000 - 16,000 IOPS); AWS raised gp3's throughput range to 125 - 2,000 MiB/s in 2025 (EC2 CreateVolume reference), not modelled"

	ssd = "gp2 gp3 io1 io2"
	hdd = "st1 sc1"
	pd  = "pd-standard pd-balanced pd-ssd"
)

// Figures is the volume model's table.
func Figures() []provenance.Figure {
	num := func(v float64, unit string) string {
		if v == float64(int(v)) && v >= 1000 {
			return strings.TrimSpace(thousands(int(v)) + " " + unit)
		}
		return strings.TrimSpace(fmt.Sprintf("%g %s", v, unit))
	}
	gib := func(lo, hi int) string { return fmt.Sprintf("%s GiB to %s GiB", thousands(lo), thousands(hi)) }
	types := strings.Fields
	var figs []provenance.Figure
	add := func(f provenance.Figure) { figs = append(figs, f) }
	pub := provenance.Published

	// Billing units and merging.
	add(provenance.Figure{Name: "billing unit, SSD", Go: "SSDUnitBytes", Value: fmt.Sprintf("%d KiB", SSDUnitBytes>>10), Kind: pub, Types: types(ssd),
		Source: ebsIO + `: an SSD I/O of up to 256 KiB counts as one; checked 2026-11-24 in CloudWatch's VolumeConsumedReadWriteOps description ("I/O operations that are smaller than 256K each count as 1 consumed IOPS")`,
		Moves:  "IOPS spent by large I/O: 1 MiB costs 4 units (volume-calibration's 1 MiB rows; seed 004's git on io1/gp2)"})
	add(provenance.Figure{Name: "billing unit, Persistent Disk and Cloud SQL", Go: "SSDUnitBytes", Value: fmt.Sprintf("%d KiB", SSDUnitBytes>>10), Kind: provenance.Assumed, Types: append(types(pd), "cloudsql-ssd"),
		Source: "Google publishes IOPS per GiB, not how it counts a large I/O; counted like EBS SSD (docs/design.md)",
		Moves:  "IOPS spent by large I/O on PD and Cloud SQL: seed 001's write operations/s"})
	add(provenance.Figure{Name: "billing unit, HDD, and the throughput each spends", Go: "HDDUnitBytes", Value: fmt.Sprintf("%d MiB, each spending %d MiB of throughput", HDDUnitBytes>>20, HDDUnitBytes>>20), Kind: pub, Types: types(hdd),
		Source: ebsIO + `: HDD I/O up to 1,024 KiB counts as one; that a smaller one still spends a full MiB of throughput: https://docs.aws.amazon.com/ebs/latest/userguide/hdd-vols.html, "Inefficiency of small read/writes on HDD" ("an I/O request of 1 MiB or less counts as a 1 MiB I/O credit. However, if the I/Os are sequential, they are merged into 1 MiB I/O blocks"; the same words in the 2018 EC2 user guide's EBSVolumeTypes page), checked 2026-11-25`,
		Moves:  "small random I/O on st1/sc1: git's small writes spend a MiB each (seed 004's st1 and sc1 times, credits spent per hour)"})
	add(provenance.Figure{Name: "contiguous runs followed for merging", Go: "recentExtents", Value: fmt.Sprintf("%d per direction", recentExtents), Kind: provenance.Assumed,
		Source: "providers say sequential I/O merges, not how many streams they follow; enough for the pieces of a few large I/Os in flight at once",
		Moves:  "units billed for interleaved sequential streams; none for one stream"})
	add(provenance.Figure{Name: "merge window", Go: "Spec{}.MergeWindow", Value: mergeWindowText(Spec{}.MergeWindow), Kind: provenance.Assumed, Option: "merge_window",
		Source: "providers say contiguous I/O merges, not within what time; the pieces of one large I/O arrive within microseconds",
		Moves:  "units billed for slow sequential writers (journal commits seconds apart merge unless a window is set)"})
	add(provenance.Figure{Name: "token bucket granularity", Go: "peakBurst", Value: fmt.Sprintf("%v: what arrives within it is not held apart", time.Duration(peakBurst(1e6)/1e6*float64(time.Second))), Kind: provenance.Assumed,
		Source: "providers do not publish how finely they enforce a rate; a millisecond of tokens (at least one I/O) may pass at once",
		Moves:  "burstiness of a throttled volume's latency at sub-millisecond scale; not its rate"})

	// gp2.
	gp2 := []string{"gp2"}
	add(provenance.Figure{Name: "gp2 baseline IOPS per GiB", Go: "GP2IOPSPerGiB", Value: num(GP2IOPSPerGiB, "IOPS/GiB"), Kind: pub, Types: gp2, Source: ebsTypes + checkedGP2,
		Moves: "gp2's sustained IOPS once credits are spent (volume-calibration gp2-100g-dry; seed 004's gp2 pace)"})
	add(provenance.Figure{Name: "gp2 minimum IOPS", Go: "GP2MinIOPS", Value: num(GP2MinIOPS, "IOPS"), Kind: pub, Types: gp2, Source: ebsTypes + checkedGP2, Moves: "baseline of gp2 volumes under 34 GiB"})
	add(provenance.Figure{Name: "gp2 burst IOPS", Go: "GP2BurstIOPS", Value: num(GP2BurstIOPS, "IOPS"), Kind: pub, Types: gp2, Source: ebsTypes + checkedGP2,
		Moves: "gp2 below 1 TiB while credits last: every short gp2 run (seed 004's gp2 at 500 GiB, volume-calibration gp2-100g)"})
	add(provenance.Figure{Name: "gp2 I/O credit bucket", Go: "GP2CreditBucket", Value: fmt.Sprintf("%.1f million I/O credits, full at creation", GP2CreditBucket/1e6), Kind: pub, Types: gp2, Option: "credit_scale",
		Source: ebsTypes + checkedGP2, Moves: "how long gp2 bursts: 30 min at 3,000 IOPS (long runs; ebs-git on gp2)"})
	add(provenance.Figure{Name: "gp2 maximum IOPS", Go: "GP2MaxIOPS", Value: num(GP2MaxIOPS, "IOPS"), Kind: pub, Types: gp2, Era: "current", Source: ebsTypes + " (since Dec 2018)" + checkedGP2, Moves: "gp2 above 5,334 GiB"})
	add(provenance.Figure{Name: "gp2 maximum IOPS (2018)", Go: "GP2MaxIOPS2018", Value: num(GP2MaxIOPS2018, "IOPS"), Kind: pub, Types: gp2, Era: "2018", Source: ebs2018, Moves: "gp2 above 3,334 GiB in era 2018"})
	add(provenance.Figure{Name: "gp2 throughput, small volumes", Go: "GP2SmallMiBps, GP2SmallLimitGiB", Value: fmt.Sprintf("%g MiB/s up to %d GiB", GP2SmallMiBps, GP2SmallLimitGiB), Kind: pub, Types: gp2, Source: ebsTypes,
		Moves: "large sequential I/O on small gp2 volumes (volume-calibration gp2-100g's 1 MiB rows)"})
	add(provenance.Figure{Name: "gp2 throughput, larger volumes", Go: "GP2MaxMiBps", Value: num(GP2MaxMiBps, "MiB/s"), Kind: pub, Types: gp2, Era: "current",
		Source: ebsTypes + "; simplified: AWS gives 170-334 GiB volumes 250 MiB/s only while burst credits last, the model always", Moves: "large sequential I/O on gp2 above 170 GiB"})
	add(provenance.Figure{Name: "gp2 throughput (2018)", Go: "GP2MaxMiBps2018", Value: num(GP2MaxMiBps2018, "MiB/s"), Kind: pub, Types: gp2, Era: "2018", Source: ebs2018,
		Moves: "large sequential I/O on gp2 above 170 GiB in era 2018 (seed 004's gp2, bound first by c4.large's 62.5 MB/s)"})
	add(provenance.Figure{Name: "gp2 sizes", Go: "GP2MinGiB, GP2MaxGiB", Value: gib(GP2MinGiB, GP2MaxGiB), Kind: pub, Types: gp2, Source: ebsTypes + checkedGP2, Moves: "which sizes a scenario may ask for"})

	// gp3.
	gp3 := []string{"gp3"}
	add(provenance.Figure{Name: "gp3 baseline IOPS", Go: "GP3BaseIOPS", Value: num(GP3BaseIOPS, "IOPS"), Kind: pub, Types: gp3, Option: "iops", Source: ebsTypes + checkedGP3, Moves: "gp3's IOPS at any size unless provisioned (volume-calibration gp3-100g)"})
	add(provenance.Figure{Name: "gp3 maximum IOPS", Go: "GP3MaxIOPS", Value: num(GP3MaxIOPS, "IOPS"), Kind: pub, Types: gp3, Source: ebsTypes + checkedGP3, Moves: "the IOPS a gp3 spec may provision"})
	add(provenance.Figure{Name: "gp3 IOPS per GiB (provisioning)", Go: "GP3IOPSPerGiB", Value: num(GP3IOPSPerGiB, "IOPS/GiB"), Kind: pub, Types: gp3, Source: ebsTypes + "; the 500:1 ratio also quoted from AWS's docs at https://saisci.com/aws/understanding-gp3-iops-ebs-volumes (Jan 2021), checked 2026-11-24", Moves: "the IOPS a small gp3 spec may provision"})
	add(provenance.Figure{Name: "gp3 baseline throughput", Go: "GP3BaseMiBps", Value: num(GP3BaseMiBps, "MiB/s"), Kind: pub, Types: gp3, Option: "throughput", Source: ebsTypes, Moves: "large sequential I/O on gp3 unless provisioned"})
	add(provenance.Figure{Name: "gp3 maximum throughput", Go: "GP3MaxMiBps", Value: num(GP3MaxMiBps, "MiB/s"), Kind: pub, Types: gp3, Source: ebsTypes + checkedGP3, Moves: "the throughput a gp3 spec may provision"})
	add(provenance.Figure{Name: "gp3 throughput per provisioned IOPS", Go: "GP3MiBpsPerIOPS", Value: num(GP3MiBpsPerIOPS, "MiB/s per IOPS"), Kind: pub, Types: gp3, Source: ebsTypes, Moves: "the throughput a gp3 spec may provision for its IOPS"})
	add(provenance.Figure{Name: "gp3 sizes", Go: "GP3MinGiB, GP3MaxGiB", Value: gib(GP3MinGiB, GP3MaxGiB), Kind: pub, Types: gp3, Source: ebsTypes, Moves: "which sizes a scenario may ask for"})

	// io1 and io2.
	add(provenance.Figure{Name: "io1 IOPS per GiB (provisioning)", Go: "IO1IOPSPerGiB", Value: num(IO1IOPSPerGiB, "IOPS/GiB"), Kind: pub, Types: []string{"io1"}, Source: ebsTypes + checkedIO,
		Moves: "the IOPS an io1 spec may provision: seed 004's default 50 × 500 GiB = 25,000"})
	add(provenance.Figure{Name: "io2 IOPS per GiB (provisioning)", Go: "IO2IOPSPerGiB", Value: num(IO2IOPSPerGiB, "IOPS/GiB"), Kind: pub, Types: []string{"io2"}, Source: ebsTypes, Moves: "the IOPS an io2 spec may provision"})
	add(provenance.Figure{Name: "io1/io2 IOPS range", Go: "IOMinIOPS, IOMaxIOPS", Value: fmt.Sprintf("%g to %s IOPS (Nitro)", IOMinIOPS, thousands(int(IOMaxIOPS))), Kind: pub, Types: []string{"io1", "io2"}, Option: "iops", Source: ebsTypes + checkedIO + " (2018: at most 32,000, below)",
		Moves: "provisioned IOPS: io1/io2 run at what the spec provisions (ebs-git io1, volume-calibration io1-100g-1000)"})
	add(provenance.Figure{Name: "io1 maximum IOPS (2018)", Go: "IO1MaxIOPS2018", Value: num(IO1MaxIOPS2018, "IOPS"), Kind: pub, Types: []string{"io1"}, Era: "2018", Source: ebs2018, Moves: "the IOPS an io1 spec may provision in era 2018"})
	add(provenance.Figure{Name: "io1/io2 maximum throughput", Go: "IOMaxMiBps", Value: num(IOMaxMiBps, "MiB/s"), Kind: pub, Types: []string{"io1", "io2"}, Era: "current", Source: ebsTypes, Moves: "large sequential I/O on io1/io2 with many IOPS"})
	add(provenance.Figure{Name: "io1 maximum throughput (2018)", Go: "IO1MaxMiBps2018", Value: num(IO1MaxMiBps2018, "MiB/s"), Kind: pub, Types: []string{"io1"}, Era: "2018", Source: ebs2018, Moves: "large sequential I/O on io1 in era 2018 (seed 004's io1, bound first by c4.large)"})
	add(provenance.Figure{Name: "io1/io2 throughput per provisioned IOPS", Go: "IOMiBpsPerIOPS", Value: num(IOMiBpsPerIOPS, "MiB/s per IOPS"), Kind: pub, Types: []string{"io1", "io2"}, Source: ebsTypes + " (256 KiB per provisioned IOPS)", Moves: "io1/io2 throughput with few IOPS (volume-calibration io1-100g-1000's 1 MiB rows)"})
	add(provenance.Figure{Name: "io1/io2 sizes", Go: "IOMinGiB, IOMaxGiB", Value: gib(IOMinGiB, IOMaxGiB), Kind: pub, Types: []string{"io1", "io2"}, Source: ebsTypes, Moves: "which sizes a scenario may ask for"})

	// st1 and sc1.
	st1, sc1 := []string{"st1"}, []string{"sc1"}
	add(provenance.Figure{Name: "st1 baseline throughput per TiB", Go: "ST1BaseMiBpsPerTiB", Value: num(ST1BaseMiBpsPerTiB, "MiB/s per TiB"), Kind: pub, Types: st1, Source: ebsTypes + checkedST1, Moves: "st1 once its credits are spent (20 MiB/s at 500 GiB)"})
	add(provenance.Figure{Name: "st1 burst throughput per TiB", Go: "ST1BurstMiBpsPerTiB", Value: num(ST1BurstMiBpsPerTiB, "MiB/s per TiB"), Kind: pub, Types: st1, Source: ebsTypes + checkedST1,
		Moves: "st1 while credits last (125 MiB/s at 500 GiB): seed 004's st1 time and floor, volume-calibration st1-500g"})
	add(provenance.Figure{Name: "st1 maximum throughput and IOPS", Go: "ST1MaxMiBps, ST1MaxIOPS", Value: fmt.Sprintf("%g MiB/s, %g IOPS of %d MiB", ST1MaxMiBps, ST1MaxIOPS, HDDUnitBytes>>20), Kind: pub, Types: st1, Source: ebsTypes + checkedST1, Moves: "st1 at 2 TiB and more; its IOPS cap binds small random I/O"})
	add(provenance.Figure{Name: "sc1 baseline throughput per TiB", Go: "SC1BaseMiBpsPerTiB", Value: num(SC1BaseMiBpsPerTiB, "MiB/s per TiB"), Kind: pub, Types: sc1, Source: ebsTypes, Moves: "sc1 once its credits are spent (6 MiB/s at 500 GiB)"})
	add(provenance.Figure{Name: "sc1 burst throughput per TiB", Go: "SC1BurstMiBpsPerTiB", Value: num(SC1BurstMiBpsPerTiB, "MiB/s per TiB"), Kind: pub, Types: sc1, Source: ebsTypes,
		Moves: "sc1 while credits last (40 MiB/s at 500 GiB): seed 004's sc1 / st1 time, volume-calibration sc1-500g"})
	add(provenance.Figure{Name: "sc1 maximum throughput and IOPS", Go: "SC1MaxMiBps, SC1MaxIOPS", Value: fmt.Sprintf("%g MiB/s, %g IOPS of %d MiB", SC1MaxMiBps, SC1MaxIOPS, HDDUnitBytes>>20), Kind: pub, Types: sc1, Source: ebsTypes, Moves: "sc1 at 3.2 TiB and more; its IOPS cap binds small random I/O"})
	add(provenance.Figure{Name: "st1/sc1 burst credit bucket", Go: "HDDCreditMiBPerTiB", Value: fmt.Sprintf("%d TiB of credit per TiB of size, full at creation", HDDCreditMiBPerTiB>>20), Kind: pub, Types: types(hdd), Option: "credit_scale",
		Source: ebsTypes + " (the burst bucket grows to the volume's size)", Moves: "how long st1/sc1 burst; seed 004's credits spent per hour (about 20% in the seed)"})
	add(provenance.Figure{Name: "st1/sc1 minimum size", Go: "HDDMinGiB", Value: fmt.Sprintf("%d GiB", HDDMinGiB), Kind: pub, Types: types(hdd), Era: "current", Source: ebsTypes + checkedST1, Moves: "which sizes a scenario may ask for"})
	add(provenance.Figure{Name: "st1/sc1 minimum size (2018)", Go: "HDDMinGiB2018", Value: fmt.Sprintf("%d GiB", HDDMinGiB2018), Kind: pub, Types: types(hdd), Era: "2018",
		Source: ebs2018 + `; seed 004's text says the same ("the HDD types' minimum is 500GB", its configuration)`, Moves: "which sizes a scenario may ask for in era 2018 (seed 004 chose 500 GiB for every type because of it)"})
	add(provenance.Figure{Name: "st1/sc1 maximum size", Go: "HDDMaxGiB", Value: fmt.Sprintf("%s GiB", thousands(HDDMaxGiB)), Kind: pub, Types: types(hdd), Source: ebsTypes + checkedST1, Moves: "which sizes a scenario may ask for"})

	// Persistent Disk.
	pdStd, pdBal, pdSSD := []string{"pd-standard"}, []string{"pd-balanced"}, []string{"pd-ssd"}
	const gbMiB = "; assumption: Google's \"MB\" is MiB (the page now writes MiBps)"
	add(provenance.Figure{Name: "pd-standard IOPS per GiB (read / write)", Go: "PDStandardReadIOPSPerGiB, PDStandardWriteIOPSPerGiB", Value: fmt.Sprintf("%g / %g IOPS/GiB", PDStandardReadIOPSPerGiB, PDStandardWriteIOPSPerGiB), Kind: pub, Types: pdStd, Source: pdPerf + checkedPD, Moves: "pd-standard random I/O"})
	add(provenance.Figure{Name: "pd-standard throughput per GiB", Go: "PDStandardMiBpsPerGiB", Value: num(PDStandardMiBpsPerGiB, "MiB/s per GiB"), Kind: pub, Types: pdStd, Source: pdPerf + checkedPD + gbMiB, Moves: "pd-standard sequential I/O"})
	add(provenance.Figure{Name: "pd-balanced IOPS and throughput per GiB", Go: "PDBalancedIOPSPerGiB, PDBalancedMiBpsPerGiB", Value: fmt.Sprintf("%g IOPS/GiB, %g MiB/s per GiB", PDBalancedIOPSPerGiB, PDBalancedMiBpsPerGiB), Kind: pub, Types: pdBal, Source: pdPerf + checkedPD + gbMiB, Moves: "pd-balanced I/O"})
	add(provenance.Figure{Name: "pd-balanced baseline", Go: "PDBalancedBaseIOPS, PDBalancedBaseMiBps", Value: num(PDBalancedBaseIOPS, "IOPS") + ", " + num(PDBalancedBaseMiBps, "MiB/s"), Kind: pub, Types: pdBal, Source: pdPerf + " (today's baselines, not re-read)", Moves: "pd-balanced I/O on small disks"})
	add(provenance.Figure{Name: "pd-ssd IOPS and throughput per GiB", Go: "PDSSDIOPSPerGiB, PDSSDMiBpsPerGiB", Value: fmt.Sprintf("%g IOPS/GiB, %g MiB/s per GiB", PDSSDIOPSPerGiB, PDSSDMiBpsPerGiB), Kind: pub, Types: pdSSD, Source: pdPerf + checkedPD + gbMiB, Moves: "pd-ssd I/O (volume-calibration pd-ssd-100g)"})
	add(provenance.Figure{Name: "pd-ssd baseline", Go: "PDSSDBaseIOPS, PDSSDBaseMiBps", Value: num(PDSSDBaseIOPS, "IOPS") + ", " + num(PDSSDBaseMiBps, "MiB/s"), Kind: pub, Types: pdSSD, Era: "current", Source: pdPerf + " (today's baselines, not re-read; 2018 had none)", Moves: "pd-ssd I/O, which on small disks is mostly baseline"})
	add(provenance.Figure{Name: "Persistent Disk sizes", Go: "PDMinGiB, PDMaxGiB", Value: gib(PDMinGiB, PDMaxGiB), Kind: pub, Types: types(pd), Source: pdPerf, Moves: "which sizes a scenario may ask for"})

	// Cloud SQL.
	csql := []string{"cloudsql-ssd"}
	add(provenance.Figure{Name: "Cloud SQL SSD IOPS and throughput per GiB", Go: "CloudSQLIOPSPerGiB, CloudSQLMiBpsPerGiB", Value: fmt.Sprintf("%g IOPS/GiB, %g MiB/s per GiB each way", CloudSQLIOPSPerGiB, CloudSQLMiBpsPerGiB), Kind: pub, Types: csql,
		Source: seed001 + " (50 GB: 1,500 IOPS, 24.0 MB/s), the same as pd-ssd's per-GB figures [pd-perf]" + gbMiB,
		Moves:  "the disk's share of seed 001's write operations/s at each size, and its growth per doubling"})
	add(provenance.Figure{Name: "Cloud SQL SSD IOPS cap (2 vCPU)", Go: "CloudSQLMaxIOPS", Value: num(CloudSQLMaxIOPS, "IOPS"), Kind: pub, Types: csql, Source: seed001 + " (600 GB: 15,000 IOPS)",
		Moves: "Cloud SQL at 500 GB and more: seed 001's 400 → 600 GB step"})
	add(provenance.Figure{Name: "Cloud SQL SSD write throughput cap (2 vCPU)", Go: "CloudSQLMaxWriteMiBps", Value: num(CloudSQLMaxWriteMiBps, "MiB/s"), Kind: pub, Types: csql, Source: seed001 + " (400 and 600 GB: 151.5 MB/s written, reads uncapped to 288)" + gbMiB,
		Moves: "writes on Cloud SQL at 316 GB and more: seed 001's 400 → 600 GB step if the load ever reaches it (the seed's stayed near 31 MB/s)"})
	add(provenance.Figure{Name: "Cloud SQL SSD sizes", Go: "CloudSQLMinGiB, CloudSQLMaxGiB", Value: gib(CloudSQLMinGiB, CloudSQLMaxGiB), Kind: provenance.Assumed, Types: csql,
		Source: "no page is cited for them in catalog.go and seed 001 shows only 50-600 GB: Cloud SQL's storage range as remembered (10 GB to 30 TB), unverified",
		Moves:  "only which sizes a scenario may ask for"})

	// Service times.
	svc := func(name, goName string, d time.Duration, ts []string, why, moves string) {
		add(provenance.Figure{Name: name, Go: goName, Value: d.String() + " per I/O", Kind: provenance.Assumed, Types: ts, Option: "latency", Source: why, Moves: moves})
	}
	svc("SSD service time", "SSDServiceTime", SSDServiceTime, []string{"gp2", "gp3", "io1"},
		`no provider publishes one; AWS promises SSD volumes "single-digit millisecond" latency`,
		"every I/O at low depth: fsync-bound work (git commits on io1/gp2, seed 004's SSD pace), depth-1 reads (volume-calibration)")
	svc("io2 service time", "IO2ServiceTime", IO2ServiceTime, []string{"io2"},
		"AWS states io2 Block Express averages under 500 µs for 16 KiB I/O (an upper bound, not a service time; checked 2026-11-24 in a copy of docs.amazonaws.cn's provisioned-iops page); the bound taken as the time",
		"io2 at low depth")
	svc("st1 service time", "ST1ServiceTime", ST1ServiceTime, st1,
		"no provider publishes one; a rotating disk seeks and turns (a few ms per random I/O at 7,200 rpm)",
		"st1 at low depth: seed 004's st1 time and floor (small synced writes), volume-calibration st1 depth-1 reads")
	svc("sc1 service time", "SC1ServiceTime", SC1ServiceTime, sc1,
		"no provider publishes one; a colder, slower disk than st1, taken as twice st1's",
		"sc1 at low depth: seed 004's sc1 / st1 time (the seed: a little under 4x)")
	svc("Persistent Disk SSD service time", "PDServiceTime", PDServiceTime, []string{"pd-balanced", "pd-ssd", "cloudsql-ssd"},
		"no provider publishes one; Persistent Disk is network storage like EBS",
		"PD and Cloud SQL at low depth: InnoDB's log and page flushes (seed 001)")
	svc("pd-standard service time", "PDStandardServiceTime", PDStandardServiceTime, pdStd,
		"no provider publishes one; pd-standard is HDD-backed", "pd-standard at low depth")
	add(provenance.Figure{Name: "cache flush", Go: "FlushTime", Value: FlushTime.String(), Kind: provenance.Assumed,
		Source: "EBS and PD acknowledge a write once durable, so a flush has nothing to drain: one round trip",
		Moves:  "every fsync's flush (git, SQLite, InnoDB): small against the writes it follows"})

	// Instances.
	n1Write := map[float64]string{N1WriteMiBps1: "N1WriteMiBps1", N1WriteMiBps2to7: "N1WriteMiBps2to7", N1WriteMiBps8to15: "N1WriteMiBps8to15", N1WriteMiBps16: "N1WriteMiBps16"}
	for _, in := range Instances {
		if in.Name == "none" {
			continue
		}
		inst := func(f provenance.Figure) {
			f.Instances = []string{in.Name}
			f.Name = in.Name + " " + f.Name
			add(f)
		}
		switch {
		case strings.HasPrefix(in.Name, "c4."):
			inst(provenance.Figure{Name: "EBS IOPS", Go: "Instances[" + in.Name + "].IOPS", Value: num(in.IOPS, "IOPS, one per I/O"), Kind: pub, Source: ebsOpt + " (4,000 IOPS at 16 KiB I/O); that a larger I/O counts once is an assumption (it meets the bandwidth first)",
				Moves: "seed 004's volumes on c4.large: io1's 25,000 provisioned IOPS meet 4,000 here"})
			inst(provenance.Figure{Name: "EBS bandwidth", Go: "Instances[" + in.Name + "].MiBps", Value: fmt.Sprintf("%.1f MiB/s (%g Mbps)", in.MiBps, in.MiBps*(1<<20)*8/1e6), Kind: pub, Source: ebsOpt,
				Moves: "seed 004's volumes on c4.large: large I/O on every type"})
			inst(provenance.Figure{Name: "memory (page cache bound)", Go: "Instances[" + in.Name + "].MemoryBytes", Value: fmt.Sprintf("%d MiB", in.MemoryBytes>>20), Kind: pub, Option: "memory",
				Source: ebsOpt + " and seed 004's configuration (c4.large: 2 vCPU, 3.75 GiB)", Moves: "how much of git's working set stays cached (seed 004's late pace)"})
		case strings.HasPrefix(in.Name, "n1-"):
			inst(provenance.Figure{Name: "write bandwidth to Persistent Disk", Go: n1Write[in.WriteMiBps], Value: fmt.Sprintf("%.1f MiB/s (%.0f MB/s)", in.WriteMiBps, in.WriteMiBps/mb), Kind: pub, Source: pdEgress,
				Moves: "PD writes from small N1 VMs (no built-in scenario uses one)"})
			inst(provenance.Figure{Name: "memory (page cache bound)", Go: "Instances[" + in.Name + "].MemoryBytes", Value: fmt.Sprintf("%d MiB", in.MemoryBytes>>20), Kind: pub, Option: "memory", Source: gcpTypes,
				Moves: "page cache of workloads on that VM"})
		case in.Name == "db-custom-1-3840":
			inst(provenance.Figure{Name: "memory", Go: "Instances[" + in.Name + "].MemoryBytes", Value: fmt.Sprintf("%d MiB", in.MemoryBytes>>20), Kind: pub, Option: "memory",
				Source: sqlMachines, Moves: "the page cache and buffer pool of the cloudsql backend's server (advise's cloud-sql candidate)"})
		default: // db-n1-standard-2
			inst(provenance.Figure{Name: "memory", Go: "Instances[" + in.Name + "].MemoryBytes", Value: fmt.Sprintf("%d MiB", in.MemoryBytes>>20), Kind: pub, Option: "memory",
				Source: "seed 001's configuration (vCPU 2, memory 7.5 GB; Qiita, 2018-12-16) and " + gcpTypes, Moves: "the MySQL server's memory cgroup in cloudsql-bulkload"})
		}
	}
	var n1 []string
	for _, in := range Instances {
		if in.WriteMiBps > 0 {
			n1 = append(n1, in.Name)
		}
	}
	add(provenance.Figure{Name: "N1 egress MB", Go: "mb", Instances: n1, Value: fmt.Sprintf("%.4f MiB", float64(mb)), Kind: provenance.Assumed,
		Source: "Google's egress table gives MB/s; read as 10^6 bytes (network units), where the PD per-GiB figures are read as MiB", Moves: "N1 write caps by 5%"})

	// Prices.
	price := func(name, goName string, v float64, unit string, ts []string, src string) {
		add(provenance.Figure{Name: name + " price", Go: goName, Value: fmt.Sprintf("$%g %s", v, unit), Kind: pub, Types: ts, Source: src,
			Moves: "the bill a report prints beside a volume run; no latency or rate"})
	}
	price("gp3 storage", "PriceGP3PerGiBMonth", PriceGP3PerGiBMonth, "per GiB-month", gp3, ebsPrice)
	price("gp3 IOPS above 3,000", "PriceGP3PerIOPSMonth", PriceGP3PerIOPSMonth, "per IOPS-month", gp3, ebsPrice)
	price("gp3 throughput above 125 MiB/s", "PriceGP3PerMiBpsMonth", PriceGP3PerMiBpsMonth, "per MiB/s-month", gp3, ebsPrice)
	price("gp2 storage", "PriceGP2PerGiBMonth", PriceGP2PerGiBMonth, "per GiB-month", gp2, ebsPrice)
	price("io1/io2 storage", "PriceIOPerGiBMonth", PriceIOPerGiBMonth, "per GiB-month", []string{"io1", "io2"}, ebsPrice)
	price("io1/io2 provisioned IOPS", "PriceIOPerIOPSMonth", PriceIOPerIOPSMonth, "per IOPS-month (io2's first tier)", []string{"io1", "io2"}, ebsPrice)
	price("st1 storage", "PriceST1PerGiBMonth", PriceST1PerGiBMonth, "per GiB-month", st1, ebsPrice+"; checked 2026-11-24: https://aws.amazon.com/ebs/throughput-optimized/ ($0.045 / GB-mo, N. Virginia)")
	price("sc1 storage", "PriceSC1PerGiBMonth", PriceSC1PerGiBMonth, "per GiB-month", sc1, ebsPrice+" ($0.025 when seed 004 was written)")
	price("pd-standard storage", "PricePDStandardPerGiBMonth", PricePDStandardPerGiBMonth, "per GiB-month", pdStd, pdPrice)
	price("pd-balanced storage", "PricePDBalancedPerGiBMonth", PricePDBalancedPerGiBMonth, "per GiB-month", pdBal, pdPrice)
	price("pd-ssd storage", "PricePDSSDPerGiBMonth", PricePDSSDPerGiBMonth, "per GiB-month", pdSSD, pdPrice)
	price("Cloud SQL SSD storage", "PriceCloudSQLSSDPerGiBMonth", PriceCloudSQLSSDPerGiBMonth, "per GiB-month", csql, sqlPrice+" (seed 001 paid $0.22 in 2018, Tokyo)")

	for i := range figs {
		figs[i].Model = "volume"
	}
	return figs
}

// thousands writes n with commas: 16384 -> 16,384.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func mergeWindowText(d time.Duration) string {
	if d == 0 {
		return "none (any time apart, while the run is recent)"
	}
	return d.String()
}

// FiguresFor is the volume figures a volume with these options runs with: those of its type,
// era and instance, each noted where an option replaces it; none in effect with model off.
func FiguresFor(opts map[string]string) ([]provenance.Use, error) {
	cfg, err := ConfigFromOptions(opts)
	if err != nil {
		return nil, err
	}
	s := cfg.Spec
	era := "current"
	if s.era2018() {
		era = "2018"
	}
	in := s.Instance
	if in == "" {
		in = "none"
	}
	var uses []provenance.Use
	for _, f := range Figures() {
		if (len(f.Types) > 0 && !slices.Contains(f.Types, s.Type)) || (f.Era != "" && f.Era != era) || (len(f.Instances) > 0 && !slices.Contains(f.Instances, in)) {
			continue
		}
		u := provenance.Use{Figure: f}
		switch {
		case cfg.Off:
			u.Off, u.Note = true, "model off: this machine's own speed"
		case f.Option == "latency" && s.ServiceTime > 0:
			u.Off, u.Note = true, "option latency: "+s.ServiceTime.String()
		case f.Option == "merge_window" && s.MergeWindow > 0:
			u.Off, u.Note = true, "option merge_window: "+s.MergeWindow.String()
		case f.Option == "credit_scale" && s.CreditScale != 0 && s.CreditScale != 1:
			u.Note = fmt.Sprintf("option credit_scale: %g (a bucket of %g times the published one)", s.CreditScale, s.CreditScale)
		case f.Option == "iops" && s.ProvisionedIOPS > 0 && f.Go != "IOMinIOPS, IOMaxIOPS":
			u.Off, u.Note = true, fmt.Sprintf("option iops: %g", s.ProvisionedIOPS)
		case f.Option == "iops" && s.ProvisionedIOPS > 0:
			u.Note = fmt.Sprintf("option iops: %g", s.ProvisionedIOPS)
		case f.Option == "throughput" && s.ProvisionedMiBps > 0:
			u.Off, u.Note = true, fmt.Sprintf("option throughput: %g MiB/s", s.ProvisionedMiBps)
		case f.Option == "memory" && opts["memory"] != "":
			u.Off, u.Note = true, "option memory: "+opts["memory"]
		}
		uses = append(uses, u)
	}
	return uses, nil
}
