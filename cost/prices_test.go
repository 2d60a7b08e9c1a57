package cost

import (
	"slices"
	"testing"
)

// R2 is a bucket price list of the bill but not a default list of the report's tables: a third
// list would add a column to every bucket-backed table. The bill's GCS and S3 operations are the
// report's.
func TestR2StaysOutOfTheReportsPriceLists(t *testing.T) {
	if got := PriceListNames(); !slices.Equal(got, []string{"GCS", "S3"}) {
		t.Errorf("default price lists %v, want GCS and S3 (R2 would change every report's cost table)", got)
	}
	for i, p := range DefaultPrices {
		if Buckets[i].Ops != p {
			t.Errorf("bucket %d's operations %+v, the report's %+v", i, Buckets[i].Ops, p)
		}
	}
	if r2, err := BucketNamed("R2"); err != nil || r2.Ops != R2Ops || r2.EgressPerGiBUSD != 0 {
		t.Errorf("R2: %+v %v", r2, err)
	}
}

// Prices print in plain decimals: the table's $0.000024, not $2.4e-05; R2's $0.36 per million, not
// the float product $0.36000000000000004.
func TestUSDPrintsPlainDecimals(t *testing.T) {
	for v, want := range map[float64]string{0.000024: "$0.000024", R2ClassBPer1000USD * 1000: "$0.36", 0.12: "$0.12", 0: "$0"} {
		if got := usd(v); got != want {
			t.Errorf("usd(%v) = %s, want %s", v, got, want)
		}
	}
}
