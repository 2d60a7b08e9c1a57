package report

import (
	"persistlab/lab/bucket"
	"persistlab/scenario"
)

// Published list prices for the operations the lab bucket counts (Standard storage, per 1,000).
// GCS: class A $0.005, class B $0.0004 (cloud.google.com/storage/pricing, "Operations charges").
// S3: PUT, COPY, POST, LIST $0.005; GET, SELECT and all other requests $0.0004
// (aws.amazon.com/s3/pricing, "Requests & data retrievals", S3 Standard). Uploads and listings
// are class A on GCS and PUT/LIST on S3; reads are class B and GET, so one count prices both.
var DefaultPrices = []scenario.Price{
	{Name: "GCS", ClassAPer1000: bucket.PriceClassAPer1000USD, ClassBPer1000: bucket.PriceClassBPer1000USD},
	{Name: "S3", ClassAPer1000: s3PutListPer1000USD, ClassBPer1000: s3GetPer1000USD},
}

const (
	s3PutListPer1000USD = 0.005
	s3GetPer1000USD     = 0.0004
)

// SecondsPerMonth is a 30-day month.
const SecondsPerMonth = 30 * 24 * 3600

// Cost is what the bucket operations of a run cost under one price list.
type Cost struct {
	Prices string `json:"prices"`
	// USDPerUnit is the operations' cost per unit of the workload's work (one app request, one GiB).
	USDPerUnit float64 `json:"usd_per_unit"`
	// USDPerMonth runs the measured operation rate for a month. It holds only at the measured
	// rate of work: Litestream uploads once per sync interval whatever the request rate, so its cost
	// per request falls as the rate grows (run an open loop, --rate, at your own rate).
	USDPerMonth float64 `json:"usd_per_month_at_measured_rate"`
}

// PriceListNames name the default price lists.
func PriceListNames() []string {
	var out []string
	for _, p := range DefaultPrices {
		out = append(out, p.Name)
	}
	return out
}

func (r *Results) prices() []scenario.Price {
	if r.Scenario != nil && len(r.Scenario.Prices) > 0 {
		return r.Scenario.Prices
	}
	return DefaultPrices
}

// costs prices operations per unit of work (classA, classB) and per second (aPerS, bPerS).
func costs(prices []scenario.Price, classA, classB, aPerS, bPerS float64) []Cost {
	var out []Cost
	for _, p := range prices {
		price := func(a, b float64) float64 { return a/1000*p.ClassAPer1000 + b/1000*p.ClassBPer1000 }
		out = append(out, Cost{Prices: p.Name, USDPerUnit: price(classA, classB), USDPerMonth: price(aPerS, bPerS) * SecondsPerMonth})
	}
	return out
}
