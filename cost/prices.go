// Package cost holds the providers' list prices for what the lab measures, and the monthly bill
// they make (bill.go). The lab counts operations, bytes and busy time; what they cost is a price
// list's, so the lab, the runner's checks, the report and advise all read the prices here. Callers
// pass what they measured: the package imports none of the lab, so a price cannot depend on a
// model's state. Where each figure comes from: provenance.go (`persistlab lab model prices`).
package cost

import (
	"fmt"
	"strconv"
	"strings"
)

// Price is a price list for bucket operations, per 1,000 operations (a scenario's prices: entry).
type Price struct {
	Name          string  `yaml:"name" json:"name"`
	ClassAPer1000 float64 `yaml:"class_a_per_1000" json:"class_a_per_1000"` // uploads, listings (S3: PUT, COPY, POST, LIST)
	ClassBPer1000 float64 `yaml:"class_b_per_1000" json:"class_b_per_1000"` // reads (S3: GET)
}

// Published list prices per 1,000 operations, Standard storage.
// GCS: class A $0.05 and class B $0.004 per 10,000 (cloud.google.com/storage/pricing, "Operations
// charges"). S3: PUT, COPY, POST, LIST $0.005; GET, SELECT and all other requests $0.0004 per 1,000
// (aws.amazon.com/s3/pricing, "Requests & data retrievals", S3 Standard). Uploads and listings are
// class A on GCS and PUT/LIST on S3; reads are class B and GET, so one count prices both.
const (
	GCSClassAPer1000USD = 0.005
	GCSClassBPer1000USD = 0.0004
	S3PutListPer1000USD = 0.005
	S3GetPer1000USD     = 0.0004
)

// GCSOps and S3Ops are GCS's and S3's operation price lists.
var (
	GCSOps = Price{Name: "GCS", ClassAPer1000: GCSClassAPer1000USD, ClassBPer1000: GCSClassBPer1000USD}
	S3Ops  = Price{Name: "S3", ClassAPer1000: S3PutListPer1000USD, ClassBPer1000: S3GetPer1000USD}
)

// DefaultPrices are the price lists a run uses unless its scenario names its own.
var DefaultPrices = []Price{GCSOps, S3Ops}

// SecondsPerMonth is a 30-day month.
const SecondsPerMonth = 30 * 24 * 3600

// PriceListNames name the default price lists.
func PriceListNames() []string {
	var out []string
	for _, p := range DefaultPrices {
		out = append(out, p.Name)
	}
	return out
}

// GCSUSD prices class A and class B operations at GCS's list prices (network egress not included).
func GCSUSD(classA, classB int64) float64 {
	return float64(classA)/1000*GCSClassAPer1000USD + float64(classB)/1000*GCSClassBPer1000USD
}

// Bucket storage per GiB-month, Standard class, and each provider's internet egress per GiB, first
// tier (same-region traffic is free: a design that stays in the bucket's region lists no egress).
// GCS in us-central1 (cloud.google.com/storage/pricing); S3 in us-east-1, first 50 TB
// (aws.amazon.com/s3/pricing); R2 (developers.cloudflare.com/r2/pricing), whose class A and B are
// $4.50 and $0.36 per million and whose egress is free. Sources and dates: provenance.go.
const (
	GCSStoragePerGiBMonthUSD = 0.020
	S3StoragePerGiBMonthUSD  = 0.023
	R2StoragePerGiBMonthUSD  = 0.015
	R2ClassAPer1000USD       = 0.0045
	R2ClassBPer1000USD       = 0.00036

	GCPInternetEgressPerGiBUSD = 0.12
	AWSInternetEgressPerGiBUSD = 0.09
	R2EgressPerGiBUSD          = 0
)

// GiB is the billed gigabyte: Google bills storage and network in GiB (2^30 bytes) and Cloud Run
// memory in GiB-seconds; AWS and Cloudflare are read alike (provenance.go).
const GiB = 1 << 30

// R2Ops is R2's operation price list, for a scenario's prices: entry. It is not among DefaultPrices:
// a third list would add a column to every bucket-backed report table.
var R2Ops = Price{Name: "R2", ClassAPer1000: R2ClassAPer1000USD, ClassBPer1000: R2ClassBPer1000USD}

// Bucket is one provider's whole bucket price list: operations, storage and egress. Deletes are
// free on all three (GCS: "Operations by class"; S3: DELETE requests; R2: "Free operations").
type Bucket struct {
	Ops                   Price   // class A and B per 1,000 operations; Ops.Name names the bucket
	Network               Network // whose network the bucket is on: what its traffic to another's pays
	StoragePerGiBMonthUSD float64 // Standard storage
	EgressPerGiBUSD       float64 // to the internet, first tier
	Page                  string  // the pricing page, for a bill's source column
}

// Buckets are the bucket price lists a bill can use.
var Buckets = []Bucket{
	{Ops: GCSOps, Network: NetworkGCP, StoragePerGiBMonthUSD: GCSStoragePerGiBMonthUSD, EgressPerGiBUSD: GCPInternetEgressPerGiBUSD, Page: pageGCS},
	{Ops: S3Ops, Network: NetworkAWS, StoragePerGiBMonthUSD: S3StoragePerGiBMonthUSD, EgressPerGiBUSD: AWSInternetEgressPerGiBUSD, Page: pageS3},
	{Ops: R2Ops, Network: NetworkR2, StoragePerGiBMonthUSD: R2StoragePerGiBMonthUSD, EgressPerGiBUSD: R2EgressPerGiBUSD, Page: pageR2},
}

// BucketNamed is the bucket price list of that name (GCS, S3 or R2).
func BucketNamed(name string) (Bucket, error) {
	var names []string
	for _, b := range Buckets {
		if b.Ops.Name == name {
			return b, nil
		}
		names = append(names, b.Ops.Name)
	}
	return Bucket{}, fmt.Errorf("no bucket price list %q: want one of %s", name, strings.Join(names, ", "))
}

// The pricing pages a bill's lines name (their figures, quotes and dates: provenance.go).
const (
	pageGCS      = "https://cloud.google.com/storage/pricing (us-central1, Standard)"
	pageS3       = "https://aws.amazon.com/s3/pricing (us-east-1, S3 Standard)"
	pageR2       = "https://developers.cloudflare.com/r2/pricing/ (Standard storage)"
	pageCloudRun = "https://cloud.google.com/run/pricing (Tier 1 region)"
	pageCloudSQL = "https://cloud.google.com/sql/pricing (Enterprise edition, us-central1)"
)

// usd writes a price in plain decimals, to ten significant digits: $0.000024, not $2.4e-05 or
// $0.36000000000000004.
func usd(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
	return "$" + strconv.FormatFloat(r, 'f', -1, 64)
}
