package cost

import (
	"fmt"
	"strconv"

	"persistlab/provenance"
)

// The price lists' and the bill's figures and where each comes from (`persistlab lab model prices`).
// TestProvenanceCoversTheCode (provenance) fails when a number of this package has no row.

func init() { provenance.Register(provenance.Model{Name: "prices", Figures: Figures}) }

const (
	srcGCS = `Cloud Storage pricing, https://cloud.google.com/storage/pricing, Standard storage: class A $0.05 and class B $0.004 per 10,000 operations (as recorded 2026-11-22; not re-read)`
	srcS3  = `Amazon S3 pricing, https://aws.amazon.com/s3/pricing, "Requests & data retrievals", S3 Standard: PUT, COPY, POST, LIST $0.005 and GET, SELECT and all other requests $0.0004 per 1,000 (as recorded 2026-11-22; not re-read)`

	// Read 2026-11-28 in the stored copies named; the live pages cannot be fetched from here.
	srcGCSStorage = `Cloud Storage pricing, https://cloud.google.com/storage/pricing, "Data storage", Iowa (us-central1), Standard storage "$0.020" per GB per month (read 2026-11-28 in stored copies: a web archive of 2022-12-30 and an undated mirror agree; the pricing-examples page prices us-east1 Standard at "$0.020 per GB"; a harvest of the page dated 2026-09-20 gives $0.000027397 per GiB-hour, $0.020 a 730-hour month)`
	srcS3Storage  = `Amazon S3 pricing, https://aws.amazon.com/s3/pricing, S3 Standard, US East (N. Virginia): "First 50 TB / Month $0.023 per GB". The page renders its prices by script and no stored copy holds them: quoted alike by a stored copy of its table (a gist of July 2022) and stored guides that price us-east-1 (howtogeek.com; deepeshsoni.com, "representative of the US East (N. Virginia) region"), read 2026-11-28; not read on the page itself`
	srcR2         = `Cloudflare R2 pricing, https://developers.cloudflare.com/r2/pricing/ (its source, cloudflare/cloudflare-docs src/content/docs/r2/pricing.mdx at commit 07ec87d, read 2026-11-28): Standard storage "$0.015 / GB-month", Class A "$4.50 / million requests", Class B "$0.36 / million requests", Egress "Free"; DeleteObject among the "Free operations"; its free tier (10 GB-month, 1 and 10 million operations) not subtracted`
	srcGCPEgress  = `Cloud Storage pricing examples, https://cloud.google.com/storage/pricing-examples (stored copy, read 2026-11-28): "1 GB outbound data transfer * $0.12 per GB" to the Americas and EMEA; Cloud Run's pricing page: internet egress "charged at Google Cloud networking pricing", "no charge for data transfer to Google Cloud resources in the same region"; the first tier (discounts above 1 TiB a month not modelled; Cloud Run's free 1 GiB in North America not subtracted)`
	srcAWSEgress  = `Amazon S3 pricing, https://aws.amazon.com/s3/pricing, data transfer out to the internet, up to 10 TB a month: $0.09 per GB after the first 100 GB a month, which are free across AWS (not subtracted). The page renders by script: as quoted by stored guides of May-June 2026 (usage.ai, egresscost.com), read 2026-11-28; not read on the page itself`
	srcRun        = `Cloud Run pricing, https://cloud.google.com/run/pricing, Tier 1 regions (stored copies, read 2026-11-28)`
	srcRunRequest = srcRun + `: "Pricing for services with CPU only allocated during request processing" (request-based billing): "$0.00002400 / vCPU-second beyond free tier". The copies cut off before memory and requests: $0.0000025 per GiB-second and $0.40 per million requests as quoted from the page by stored guides (cloudchipr.com 2025, cloudwebschool.com) and many public repositories' notes, read 2026-11-28`
	srcRunInst    = srcRun + `: "Services with CPU always allocated" (instance-based billing): "$0.00001800 / vCPU-second beyond free tier". The copy cuts off before memory: $0.00000200 per GiB-second as quoted from the page in public repositories' notes of 2024-2026, read 2026-11-28`
	srcRunRound   = srcRun + `: "Cloud Run charges you only for the resources you use, rounded up to the nearest 100 millisecond"; Cloud Monitoring's run.googleapis.com/container/billable_instance_time (its description as copied in public repositories, read 2026-11-28): "billable time occurs when the container instance is starting or at least one request is being processed. Billable time is rounded up to the nearest 100 milliseconds", "a single request lasting 30ms ... is rounded up to 100ms"`
	srcCloudSQL   = `Cloud SQL pricing, https://cloud.google.com/sql/pricing, MySQL, Enterprise edition, dedicated-core, Iowa (us-central1): "$0.0413 per vCPU-hour" and "$0.007 per GB-hour" of memory, as quoted from that page by a stored guide of May 2026 (usage.ai, "All rates are for us-central1 (Iowa), May 2026"), read 2026-12-02; a stored copy of the page itself (2025-02-23) holds its text but not its tables. Not read on the page itself`
	srcRunFree    = srcRun + `: request-based "First 180,000 vCPU-seconds free per month", "First 360,000 GiB-seconds free per month", "2 million requests free per month"; instance-based "Free: First 24..." (the copy is cut there): 240,000 vCPU-seconds and 450,000 GiB-seconds as quoted in public repositories' notes and a stored guide (unanswered.io), read 2026-11-28; "The free tier is applied as a spending based discount using Tier 1 pricing"`
)

// Figures is the price lists' table.
func Figures() []provenance.Figure {
	per1000 := func(v float64) string { return fmt.Sprintf("$%g per 1,000", v) }
	const gcsMoves = "the GCS cost of every bucket-backed row (the default price list GCS) and `persistlab lab serve`'s bill on exit"
	const s3Moves = "the S3 cost of every bucket-backed row (the default price list S3): the same counts priced as S3 requests"
	figs := []provenance.Figure{
		{Name: "GCS class A operation price", Go: "GCSClassAPer1000USD", Value: per1000(GCSClassAPer1000USD), Kind: provenance.Published, Source: srcGCS, Moves: gcsMoves},
		{Name: "GCS class B operation price", Go: "GCSClassBPer1000USD", Value: per1000(GCSClassBPer1000USD), Kind: provenance.Published, Source: srcGCS, Moves: gcsMoves},
		{Name: "S3 PUT, COPY, POST, LIST price", Go: "S3PutListPer1000USD", Value: per1000(S3PutListPer1000USD), Kind: provenance.Published, Source: srcS3, Moves: s3Moves},
		{Name: "S3 GET and other requests price", Go: "S3GetPer1000USD", Value: per1000(S3GetPer1000USD), Kind: provenance.Published, Source: srcS3, Moves: s3Moves},
		{Name: "month", Go: "SecondsPerMonth", Value: fmt.Sprintf("%d days", SecondsPerMonth/(24*3600)), Kind: provenance.Assumed,
			Source: "a 30-day month, the common billing convention; the providers bill by the calendar month",
			Moves:  "every $/month figure, by at most 3% against a 31-day or 28-day month"},
	}
	figs = append(figs, billFigures()...)
	for i := range figs {
		figs[i].Model = "prices"
	}
	return figs
}

// billFigures are the figures of the whole bill (bill.go, cloudrun.go): storage, egress, R2 and
// Cloud Run.
func billFigures() []provenance.Figure {
	var figs []provenance.Figure
	pub := func(name, goName, value, source, moves string) {
		figs = append(figs, provenance.Figure{Name: name, Go: goName, Value: value, Kind: provenance.Published, Source: source, Moves: moves})
	}
	perGiBMonth := func(v float64) string { return usd(v) + " per GiB-month" }
	perGiB := func(v float64) string { return usd(v) + " per GiB" }
	perMillion := func(per1000 float64) string { return usd(per1000*1000) + " per million" }
	const bucketMoves = "a bill's bucket lines (cost.Usage.Bill): what advise charges a candidate that keeps its data in that bucket"
	const runMoves = "a bill's Cloud Run lines (cost.Usage.Bill): what advise charges every Cloud Run candidate, and which billing mode is cheaper (CloudRunBreakEven)"

	pub("GCS Standard storage price", "GCSStoragePerGiBMonthUSD", perGiBMonth(GCSStoragePerGiBMonthUSD), srcGCSStorage, bucketMoves)
	pub("S3 Standard storage price", "S3StoragePerGiBMonthUSD", perGiBMonth(S3StoragePerGiBMonthUSD), srcS3Storage, bucketMoves)
	pub("R2 Standard storage price", "R2StoragePerGiBMonthUSD", perGiBMonth(R2StoragePerGiBMonthUSD), srcR2, bucketMoves)
	pub("R2 class A operation price", "R2ClassAPer1000USD", perMillion(R2ClassAPer1000USD), srcR2, bucketMoves+"; not among the default price lists of the report's tables (a scenario may name cost.R2Ops)")
	pub("R2 class B operation price", "R2ClassBPer1000USD", perMillion(R2ClassBPer1000USD), srcR2, bucketMoves+"; not among the default price lists of the report's tables")
	pub("R2 egress price", "R2EgressPerGiBUSD", perGiB(R2EgressPerGiBUSD)+": free", srcR2, "a bill's egress lines from R2: none, whatever is read back")
	pub("Google internet egress price", "GCPInternetEgressPerGiBUSD", perGiB(GCPInternetEgressPerGiBUSD), srcGCPEgress,
		"a bill's egress lines leaving Google's network (an app on Cloud Run writing to S3 or R2); none within a region")
	pub("AWS internet egress price", "AWSInternetEgressPerGiBUSD", perGiB(AWSInternetEgressPerGiBUSD), srcAWSEgress,
		"a bill's egress lines leaving AWS's network (reading an S3 bucket from Cloud Run); none within a region")
	pub("bucket deletes", "Usage{}.DeletesPerS", "free on GCS, S3 and R2", srcR2+`; GCS: delete is a free operation ("Operations by class", https://cloud.google.com/storage/pricing, as recorded 2026-11-22); S3: DELETE requests are free (its pricing page, as quoted by stored guides, read 2026-11-28)`,
		"nothing: a bill lists the deletes it counts at $0, so the model says they are free")
	figs = append(figs, provenance.Figure{Name: "billed gigabyte", Go: "GiB", Value: grouped(GiB) + " bytes (a GiB)", Kind: provenance.Assumed,
		Source: `Google bills storage and network in binary GB ("1 GB = 2^30 bytes", the Cloud Storage pricing page as archived 2015) and Cloud Run memory in GiB-seconds ("running a 1 gibibyte instance for 1 second", its pricing page); AWS's and Cloudflare's GB read alike (AWS bills EBS and S3 GB-months of 2^30 bytes; Cloudflare's page does not say)`,
		Moves:  "storage and egress lines: R2's by at most 7% should Cloudflare's GB be 10^9 bytes"})

	perSecond := func(v float64, unit string) string { return usd(v) + " per " + unit }
	pub("Cloud Run vCPU price, request-based", "CloudRunRequestVCPUSecondUSD", perSecond(CloudRunRequestVCPUSecondUSD, "vCPU-second"), srcRunRequest, runMoves)
	pub("Cloud Run memory price, request-based", "CloudRunRequestGiBSecondUSD", perSecond(CloudRunRequestGiBSecondUSD, "GiB-second"), srcRunRequest, runMoves)
	pub("Cloud Run request price", "CloudRunPerMillionRequestsUSD", usd(CloudRunPerMillionRequestsUSD)+" per million requests", srcRunRequest, runMoves+"; request-based billing only")
	pub("Cloud Run vCPU price, instance-based", "CloudRunInstanceVCPUSecondUSD", perSecond(CloudRunInstanceVCPUSecondUSD, "vCPU-second"), srcRunInst, runMoves)
	pub("Cloud Run memory price, instance-based", "CloudRunInstanceGiBSecondUSD", perSecond(CloudRunInstanceGiBSecondUSD, "GiB-second"), srcRunInst, runMoves)
	pub("Cloud Run billable-time rounding", "CloudRunRoundSeconds", fmt.Sprintf("up to the next %g s", CloudRunRoundSeconds), srcRunRound,
		"request-based bills for short requests at low rates: a request alone is billed as one step however short")
	figs = append(figs, provenance.Figure{Name: "Cloud Run rounding, per busy spell", Go: "Usage.billedShare",
		Value: "each spell of an instance's busy time rounded up; spells per second the request rate times the idle share, unless measured", Kind: provenance.Assumed,
		Source: "Google says billable time is rounded up, not whether spells closer than one step merge; rounding each spell is the reading that bills most. Spells per second are what Poisson arrivals give (an arrival that finds the instance idle starts one), unless the caller measured them (Usage.BusySpellsPerS)",
		Moves:  "request-based Cloud Run lines at low rates of short requests, where the rounding outweighs the busy time"})
	const sqlMoves = "a bill's Cloud SQL line (cost.CloudSQLInstance): what advise charges its cloud-sql candidate, about $48 a month for db-custom-1-3840 at list price"
	pub("Cloud SQL vCPU price", "CloudSQLVCPUHourUSD", usd(CloudSQLVCPUHourUSD)+" per vCPU-hour", srcCloudSQL, sqlMoves)
	pub("Cloud SQL memory price", "CloudSQLMemoryGiBHourUSD", usd(CloudSQLMemoryGiBHourUSD)+" per GiB-hour (Google's GB read as GiB, as for Cloud Run)", srcCloudSQL, sqlMoves)
	free := fmt.Sprintf("request-based: %s vCPU-seconds, %s GiB-seconds, %s requests; instance-based: %s vCPU-seconds, %s GiB-seconds",
		grouped(CloudRunFreeRequestVCPUSeconds), grouped(CloudRunFreeRequestGiBSeconds), grouped(CloudRunFreeRequests),
		grouped(CloudRunFreeInstanceVCPUSeconds), grouped(CloudRunFreeInstanceGiBSeconds))
	pub("Cloud Run free tier a month", "CloudRunFreeRequestVCPUSeconds, CloudRunFreeRequestGiBSeconds, CloudRunFreeRequests, CloudRunFreeInstanceVCPUSeconds, CloudRunFreeInstanceGiBSeconds",
		free, srcRunFree, "nothing unless a bill asks (Usage.CloudRunFreeTier): the allowance is the billing account's, shared by all its services and projects, so one candidate's bill cannot know what is left of it")
	return figs
}

// grouped writes n with thousands separators: 180000 -> 180,000.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
