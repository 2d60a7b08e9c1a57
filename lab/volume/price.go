package volume

import "fmt"

// List prices of the emulated volume types, USD per month (30 days), for the bill a report prints
// beside a run. Sources, as listed in 2025 and not re-read by this build (it has no internet):
// verify against the pages before quoting a figure.
//
//	[ebs-pricing] aws.amazon.com/ebs/pricing, US East (N. Virginia): gp3 $0.08 per GB-month, each
//	              IOPS above 3,000 $0.005, each MB/s above 125 $0.04; gp2 $0.10; io1 $0.125 and
//	              $0.065 per provisioned IOPS-month; io2 $0.125 and $0.065 per IOPS-month up to
//	              32,000 (tiers above: not modelled, the first tier is used); st1 $0.045; sc1 $0.015.
//	[pd-pricing]  cloud.google.com/compute/disks-image-pricing, us-central1: pd-standard $0.04 per
//	              GB-month, pd-balanced $0.10, pd-ssd $0.17.
//	[sql-pricing] cloud.google.com/sql/pricing, us-central1: SSD storage $0.17 per GB-month.
//
// AWS and Google bill a GB-month of 2^30 bytes. Prices differ by region and over time (sc1 cost
// $0.025 per GB-month when seed 004 was written); the figures are the current list's.
const (
	PriceGP3PerGiBMonth, PriceGP3PerIOPSMonth, PriceGP3PerMiBpsMonth = 0.08, 0.005, 0.04
	PriceGP2PerGiBMonth                                              = 0.10
	PriceIOPerGiBMonth, PriceIOPerIOPSMonth                          = 0.125, 0.065
	PriceST1PerGiBMonth, PriceSC1PerGiBMonth                         = 0.045, 0.015
	PricePDStandardPerGiBMonth, PricePDBalancedPerGiBMonth           = 0.04, 0.10
	PricePDSSDPerGiBMonth, PriceCloudSQLSSDPerGiBMonth               = 0.17, 0.17
)

// MonthlyUSD is what a volume of this spec costs per month at list price, and how that is made
// up, for reports.
func (s Spec) MonthlyUSD() (float64, string) {
	g := s.gib()
	perGiB := func(price float64, source string) (float64, string) {
		return g * price, fmt.Sprintf("%.0f GiB x $%.3f [%s]", g, price, source)
	}
	switch s.Type {
	case "gp3":
		iops, mibs := max(s.ProvisionedIOPS, GP3BaseIOPS), max(s.ProvisionedMiBps, GP3BaseMiBps)
		usd := g*PriceGP3PerGiBMonth + (iops-GP3BaseIOPS)*PriceGP3PerIOPSMonth + (mibs-GP3BaseMiBps)*PriceGP3PerMiBpsMonth
		return usd, fmt.Sprintf("%.0f GiB x $%.3f + %.0f IOPS above 3,000 x $%.3f + %.0f MiB/s above 125 x $%.2f [ebs-pricing]",
			g, PriceGP3PerGiBMonth, iops-GP3BaseIOPS, PriceGP3PerIOPSMonth, mibs-GP3BaseMiBps, PriceGP3PerMiBpsMonth)
	case "gp2":
		return perGiB(PriceGP2PerGiBMonth, "ebs-pricing")
	case "io1", "io2":
		usd := g*PriceIOPerGiBMonth + s.ProvisionedIOPS*PriceIOPerIOPSMonth
		return usd, fmt.Sprintf("%.0f GiB x $%.3f + %.0f IOPS x $%.3f [ebs-pricing]", g, PriceIOPerGiBMonth, s.ProvisionedIOPS, PriceIOPerIOPSMonth)
	case "st1":
		return perGiB(PriceST1PerGiBMonth, "ebs-pricing")
	case "sc1":
		return perGiB(PriceSC1PerGiBMonth, "ebs-pricing")
	case "pd-standard":
		return perGiB(PricePDStandardPerGiBMonth, "pd-pricing")
	case "pd-balanced":
		return perGiB(PricePDBalancedPerGiBMonth, "pd-pricing")
	case "pd-ssd":
		return perGiB(PricePDSSDPerGiBMonth, "pd-pricing")
	case "cloudsql-ssd":
		return perGiB(PriceCloudSQLSSDPerGiBMonth, "sql-pricing")
	}
	return 0, "no list price for type " + s.Type
}
