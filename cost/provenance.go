package cost

import (
	"fmt"

	"persistlab/internal/provenance"
)

// The price lists' figures and where each comes from (`persistlab lab model prices`).
// TestProvenanceCoversTheCode (internal/provenance) fails when a number of this package has no row.

func init() { provenance.Register(provenance.Model{Name: "prices", Figures: Figures}) }

const (
	srcGCS = `Cloud Storage pricing, https://cloud.google.com/storage/pricing, Standard storage: class A $0.05 and class B $0.004 per 10,000 operations (as recorded 2026-11-22; not re-read)`
	srcS3  = `Amazon S3 pricing, https://aws.amazon.com/s3/pricing, "Requests & data retrievals", S3 Standard: PUT, COPY, POST, LIST $0.005 and GET, SELECT and all other requests $0.0004 per 1,000 (as recorded 2026-11-22; not re-read)`
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
	for i := range figs {
		figs[i].Model = "prices"
	}
	return figs
}
