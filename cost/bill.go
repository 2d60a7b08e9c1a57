package cost

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Usage is what one design uses, as measured (per second) or sized (bytes, instances): the bill's
// input. Zero fields add nothing: a design with no bucket leaves Bucket empty; one not on Cloud Run
// leaves Instances 0. Same-region traffic is free and is not egress.
type Usage struct {
	// Cloud Run.
	Billing      Billing // RequestBased or InstanceBased; required when Instances > 0
	Instances    float64 // instances serving, on average over the month
	VCPUs        float64 // per instance
	GiB          float64 // memory per instance
	RequestsPerS float64 // requests per second over all instances
	// BusyShare is the share of time an instance has at least one request in flight, 0 to 1: what
	// request-based billing bills (before rounding). Required with requests under request-based
	// billing; instance-based billing bills all of the time whatever it is.
	BusyShare float64
	// BusySpellsPerS is how many separate busy spells an instance has per second, if measured; 0:
	// estimated as for Poisson arrivals (billedShare). It sets how much the 100 ms rounding adds.
	BusySpellsPerS float64
	// CloudRunFreeTier subtracts Cloud Run's monthly free tier as a discount line. Off by default:
	// see CloudRunFreeRequestVCPUSeconds.
	CloudRunFreeTier bool

	// Bucket: a name of Buckets (GCS, S3, R2), or "" for none.
	Bucket      string
	ClassAPerS  float64 // uploads and listings per second
	ClassBPerS  float64 // reads per second
	DeletesPerS float64 // free on all three; listed so the bill says so
	StoredBytes float64 // bytes stored, on average over the month

	// Egress is traffic that leaves a provider's network for the internet.
	Egress []Egress
	// Priced are lines priced by their own models and passed in as they are: a volume's
	// MonthlyUSD and how (lab/volume: a disk with its provisioned IOPS and throughput, Cloud SQL's
	// storage), with its source.
	Priced []Line
}

// Network is whose network egress leaves, and so whose price it pays.
type Network string

const (
	NetworkGCP Network = "GCP" // Cloud Run, a GCS bucket: Google's internet egress
	NetworkAWS Network = "AWS" // an S3 bucket: AWS's
	NetworkR2  Network = "R2"  // an R2 bucket: free
)

var egressPrices = map[Network]struct {
	usdPerGiB float64
	page      string
}{
	NetworkGCP: {GCPInternetEgressPerGiBUSD, "https://cloud.google.com/storage/pricing-examples (internet egress, North America, first tier)"},
	NetworkAWS: {AWSInternetEgressPerGiBUSD, "https://aws.amazon.com/s3/pricing (data transfer out to the internet, first 10 TB)"},
	NetworkR2:  {R2EgressPerGiBUSD, pageR2 + " (egress free)"},
}

// Egress is one flow of bytes leaving a network for the internet: an app on Cloud Run uploading
// to S3 or R2 leaves Google's (NetworkGCP); reading them back leaves AWS's or R2's.
type Egress struct {
	What      string // what the flow is: "Litestream uploads to S3"
	From      Network
	BytesPerS float64
}

// Line is one item of a bill.
type Line struct {
	Item        string  `json:"item"`
	USDPerMonth float64 `json:"usd_per_month"`
	How         string  `json:"how"`    // how it is made up: the usage and the price
	Source      string  `json:"source"` // the price's page (dates and quotes: `persistlab lab model prices`)
}

// Bill is a design's monthly bill at list prices, a 30-day month (SecondsPerMonth).
type Bill struct {
	Lines []Line `json:"lines"`
}

// Total is the sum of the lines.
func (b Bill) Total() float64 {
	var t float64
	for _, l := range b.Lines {
		t += l.USDPerMonth
	}
	return t
}

// Validate says what is wrong with the usage: every number finite and not negative, shares within
// 0 to 1, names known, and what a mode needs present. Each error names the field.
func (u Usage) Validate() error {
	var errs []error
	check := func(field string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			errs = append(errs, fmt.Errorf("usage %s = %v: want a finite number, 0 or more", field, v))
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Instances", u.Instances}, {"VCPUs", u.VCPUs}, {"GiB", u.GiB}, {"RequestsPerS", u.RequestsPerS}, {"BusyShare", u.BusyShare},
		{"BusySpellsPerS", u.BusySpellsPerS}, {"ClassAPerS", u.ClassAPerS}, {"ClassBPerS", u.ClassBPerS}, {"DeletesPerS", u.DeletesPerS},
		{"StoredBytes", u.StoredBytes}} {
		check(f.name, f.v)
	}
	if u.BusyShare > 1 {
		errs = append(errs, fmt.Errorf("usage BusyShare = %v: a share of time, want 0 to 1", u.BusyShare))
	}
	if u.Instances > 0 {
		if _, err := ParseBilling(string(u.Billing)); err != nil {
			errs = append(errs, fmt.Errorf("usage Billing: %w", err))
		}
		if u.VCPUs <= 0 || u.GiB <= 0 {
			errs = append(errs, fmt.Errorf("usage VCPUs = %v, GiB = %v: an instance needs both above 0", u.VCPUs, u.GiB))
		}
		if u.Billing == RequestBased && u.RequestsPerS > 0 && u.BusyShare == 0 {
			errs = append(errs, fmt.Errorf("usage BusyShare = 0 with RequestsPerS = %v: request-based billing bills the busy time; measure it", u.RequestsPerS))
		}
		if u.Billing == RequestBased && u.BusyShare > 0 && u.BusyShare < 1 && u.RequestsPerS == 0 && u.BusySpellsPerS == 0 {
			errs = append(errs, fmt.Errorf("usage BusyShare = %v with no RequestsPerS or BusySpellsPerS: busy without requests", u.BusyShare))
		}
	} else if u.RequestsPerS > 0 || u.BusyShare > 0 {
		errs = append(errs, fmt.Errorf("usage RequestsPerS = %v, BusyShare = %v with Instances = 0: requests need an instance", u.RequestsPerS, u.BusyShare))
	}
	if u.Bucket != "" {
		if _, err := BucketNamed(u.Bucket); err != nil {
			errs = append(errs, fmt.Errorf("usage Bucket: %w", err))
		}
	} else if u.ClassAPerS+u.ClassBPerS+u.DeletesPerS+u.StoredBytes > 0 {
		errs = append(errs, errors.New("usage Bucket is empty but bucket operations or bytes are given: name its price list (GCS, S3 or R2)"))
	}
	for i, e := range u.Egress {
		field := fmt.Sprintf("Egress[%d] (%s)", i, e.What)
		check(field+".BytesPerS", e.BytesPerS)
		if _, ok := egressPrices[e.From]; !ok {
			errs = append(errs, fmt.Errorf("usage %s.From = %q: want %s, %s or %s", field, e.From, NetworkGCP, NetworkAWS, NetworkR2))
		}
	}
	for i, l := range u.Priced {
		field := fmt.Sprintf("Priced[%d] (%s)", i, l.Item)
		check(field+".USDPerMonth", l.USDPerMonth)
		if strings.TrimSpace(l.Item) == "" || strings.TrimSpace(l.How) == "" {
			errs = append(errs, fmt.Errorf("usage %s: a priced line needs its item and how it is made up", field))
		}
	}
	return errors.Join(errs...)
}

// Bill prices the usage at list prices, line by line, each line saying how it is made up.
func (u Usage) Bill() (Bill, error) {
	if err := u.Validate(); err != nil {
		return Bill{}, err
	}
	var b Bill
	add := func(item string, dollars float64, source, how string, a ...any) {
		b.Lines = append(b.Lines, Line{Item: item, USDPerMonth: dollars, How: fmt.Sprintf(how, a...), Source: source})
	}
	const month = SecondsPerMonth

	if u.Instances > 0 {
		u.cloudRun(add)
	}

	if u.Bucket != "" {
		bk, _ := BucketNamed(u.Bucket)
		name, ops := bk.Ops.Name, bk.Ops
		// Operations are priced per 1,000: the month's count over 1,000 times the price.
		if u.ClassAPerS > 0 {
			add(name+" class A operations", u.ClassAPerS*month/1000*ops.ClassAPer1000, bk.Page,
				"%.4g/s x %d s = %.4g operations x %s per 1,000", u.ClassAPerS, month, u.ClassAPerS*month, usd(ops.ClassAPer1000))
		}
		if u.ClassBPerS > 0 {
			add(name+" class B operations", u.ClassBPerS*month/1000*ops.ClassBPer1000, bk.Page,
				"%.4g/s x %d s = %.4g operations x %s per 1,000", u.ClassBPerS, month, u.ClassBPerS*month, usd(ops.ClassBPer1000))
		}
		if u.DeletesPerS > 0 {
			add(name+" deletes", 0, bk.Page, "%.4g/s x %d s = %.4g deletes: free", u.DeletesPerS, month, u.DeletesPerS*month)
		}
		// Storage is billed on the month's average bytes, in GiB.
		if u.StoredBytes > 0 {
			add(name+" storage", u.StoredBytes/GiB*bk.StoragePerGiBMonthUSD, bk.Page,
				"%.4g GiB x %s per GiB-month", u.StoredBytes/GiB, usd(bk.StoragePerGiBMonthUSD))
		}
	}

	// Egress is the month's bytes in GiB times the network's first-tier price; a free tier (AWS's
	// first 100 GB, Cloud Run's 1 GiB in North America) is not subtracted, as Cloud Run's is not.
	for _, e := range u.Egress {
		if e.BytesPerS == 0 {
			continue
		}
		p := egressPrices[e.From]
		gib := e.BytesPerS * month / GiB
		add(fmt.Sprintf("%s egress: %s", e.From, e.What), gib*p.usdPerGiB, p.page,
			"%.4g MiB/s x %d s = %.4g GiB x %s per GiB", e.BytesPerS/(1<<20), month, gib, usd(p.usdPerGiB))
	}

	b.Lines = append(b.Lines, u.Priced...)
	return b, nil
}

// cloudRun adds the Cloud Run lines: vCPU and memory for the billed time, and requests.
func (u Usage) cloudRun(add func(item string, dollars float64, source, how string, a ...any)) {
	const month = SecondsPerMonth
	if u.Billing == InstanceBased {
		// Every instance is billed all month, CPU and memory, at the lower rate; no request fee.
		secs := u.Instances * month
		add("Cloud Run vCPU, instance-based", secs*u.VCPUs*CloudRunInstanceVCPUSecondUSD, pageCloudRun,
			"%.3g instances x %d s x %g vCPU x %s per vCPU-second", u.Instances, month, u.VCPUs, usd(CloudRunInstanceVCPUSecondUSD))
		add("Cloud Run memory, instance-based", secs*u.GiB*CloudRunInstanceGiBSecondUSD, pageCloudRun,
			"%.3g instances x %d s x %g GiB x %s per GiB-second", u.Instances, month, u.GiB, usd(CloudRunInstanceGiBSecondUSD))
		if u.CloudRunFreeTier {
			u.freeTier(add, secs*u.VCPUs, secs*u.GiB, 0, CloudRunFreeInstanceVCPUSeconds, CloudRunFreeInstanceGiBSeconds, 0,
				CloudRunInstanceVCPUSecondUSD, CloudRunInstanceGiBSecondUSD)
		}
		return
	}
	// Request-based: each instance is billed for its busy time, each busy spell rounded up to
	// 100 ms (billedShare), at the higher rate, and each request besides.
	share, spells := u.billedShare()
	secs := u.Instances * share * month
	rounding := fmt.Sprintf("busy %.4g%% of the time", 100*u.BusyShare)
	if spells > 0 {
		rounding += fmt.Sprintf(" in %.3g spells/s, each rounded up to %g s", spells, CloudRunRoundSeconds)
	}
	add("Cloud Run vCPU, request-based", secs*u.VCPUs*CloudRunRequestVCPUSecondUSD, pageCloudRun,
		"%.3g instances x %.4g%% billed (%s) x %d s x %g vCPU x %s per vCPU-second",
		u.Instances, 100*share, rounding, month, u.VCPUs, usd(CloudRunRequestVCPUSecondUSD))
	add("Cloud Run memory, request-based", secs*u.GiB*CloudRunRequestGiBSecondUSD, pageCloudRun,
		"%.3g instances x %.4g%% billed x %d s x %g GiB x %s per GiB-second", u.Instances, 100*share, month, u.GiB, usd(CloudRunRequestGiBSecondUSD))
	requests := u.RequestsPerS * month
	add("Cloud Run requests", requests/1e6*CloudRunPerMillionRequestsUSD, pageCloudRun,
		"%.4g/s x %d s = %.4g requests x %s per million", u.RequestsPerS, month, requests, usd(CloudRunPerMillionRequestsUSD))
	if u.CloudRunFreeTier {
		u.freeTier(add, secs*u.VCPUs, secs*u.GiB, requests, CloudRunFreeRequestVCPUSeconds, CloudRunFreeRequestGiBSeconds, CloudRunFreeRequests,
			CloudRunRequestVCPUSecondUSD, CloudRunRequestGiBSecondUSD)
	}
}

// freeTier adds the free tier as one discount line: each resource's use up to its allowance, at
// Tier 1 prices (the page: "applied as a spending based discount using Tier 1 pricing").
func (u Usage) freeTier(add func(item string, dollars float64, source, how string, a ...any), vcpuS, gibS, requests, freeVCPUS, freeGiBS, freeRequests, vcpuPrice, gibPrice float64) {
	cpu, mem, req := min(vcpuS, freeVCPUS), min(gibS, freeGiBS), min(requests, freeRequests)
	discount := cpu*vcpuPrice + mem*gibPrice + req/1e6*CloudRunPerMillionRequestsUSD
	how := fmt.Sprintf("%.4g of %.4g free vCPU-seconds at %s, %.4g of %.4g free GiB-seconds at %s", cpu, freeVCPUS, usd(vcpuPrice), mem, freeGiBS, usd(gibPrice))
	if freeRequests > 0 {
		how += fmt.Sprintf(", %.4g of %.4g free requests at %s per million", req, freeRequests, usd(CloudRunPerMillionRequestsUSD))
	}
	add("Cloud Run free tier", -discount, pageCloudRun, "%s", how)
}
