// Package cost holds the providers' list prices for the bucket operations the lab counts. The lab
// counts operations; what one costs is a price list's, so the lab, the runner's checks and the
// report all read the prices here.
package cost

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

// DefaultPrices are the price lists a run uses unless its scenario names its own.
var DefaultPrices = []Price{
	{Name: "GCS", ClassAPer1000: GCSClassAPer1000USD, ClassBPer1000: GCSClassBPer1000USD},
	{Name: "S3", ClassAPer1000: S3PutListPer1000USD, ClassBPer1000: S3GetPer1000USD},
}

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
