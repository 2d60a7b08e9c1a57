package cost

import "fmt"

// Cloud SQL for MySQL's list prices, Enterprise edition, dedicated-core machines, us-central1: per
// vCPU-hour and per GB-hour of memory, billed while the instance runs (sources and dates:
// provenance.go). A Cloud SQL disk is priced with its volume model (lab/volume, cloudsql-ssd); a
// high-availability standby, backups and an IPv4 address are not billed here.
const (
	CloudSQLVCPUHourUSD      = 0.0413
	CloudSQLMemoryGiBHourUSD = 0.007
)

// CloudSQLInstance is the monthly line of one Cloud SQL instance of vcpus and gib, up all month.
func CloudSQLInstance(machine string, vcpus, gib float64) Line {
	hours := float64(SecondsPerMonth) / 3600
	return Line{Item: "Cloud SQL instance " + machine,
		USDPerMonth: hours * (vcpus*CloudSQLVCPUHourUSD + gib*CloudSQLMemoryGiBHourUSD),
		How:         fmt.Sprintf("(%g vCPU x %s + %g GiB x %s) an hour, %.0f hours", vcpus, usd(CloudSQLVCPUHourUSD), gib, usd(CloudSQLMemoryGiBHourUSD), hours),
		Source:      pageCloudSQL}
}
