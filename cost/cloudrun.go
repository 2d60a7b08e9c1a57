package cost

import (
	"fmt"
	"math"
)

// Cloud Run's list prices in a Tier 1 region (us-central1 among them), per second of an instance's
// vCPU and GiB of memory, and per million requests (cloud.google.com/run/pricing; sources and dates:
// provenance.go). Request-based billing (CPU allocated only while requests are in flight) bills an
// instance's busy time and each request; instance-based billing bills its whole life at a lower
// rate and no request fee.
const (
	CloudRunRequestVCPUSecondUSD  = 0.000024
	CloudRunRequestGiBSecondUSD   = 0.0000025
	CloudRunPerMillionRequestsUSD = 0.40
	CloudRunInstanceVCPUSecondUSD = 0.000018
	CloudRunInstanceGiBSecondUSD  = 0.000002
)

// CloudRunRoundSeconds is the billable-time granularity: Cloud Run rounds billable time up to the
// nearest 100 ms, so under request-based billing a 30 ms request alone is billed as 100 ms.
const CloudRunRoundSeconds = 0.1

// Cloud Run's monthly free tier per billing account, applied as a discount at Tier 1 prices.
// Usage.CloudRunFreeTier subtracts it; off by default, because the allowance is shared by every
// service and project of the account, so one candidate's bill cannot know what is left of it, and a
// ranking at list price does not depend on what else the account runs.
const (
	CloudRunFreeRequestVCPUSeconds  = 180_000
	CloudRunFreeRequestGiBSeconds   = 360_000
	CloudRunFreeRequests            = 2_000_000
	CloudRunFreeInstanceVCPUSeconds = 240_000
	CloudRunFreeInstanceGiBSeconds  = 450_000
)

// Billing is how Cloud Run bills an instance's time.
type Billing string

const (
	// RequestBased bills an instance while it starts or has at least one request in flight (CPU
	// allocated only then), each span rounded up to CloudRunRoundSeconds, and each request.
	RequestBased Billing = "request-based"
	// InstanceBased bills an instance for its whole life (CPU always allocated), no request fee.
	InstanceBased Billing = "instance-based"
)

// ParseBilling reads a billing mode's name.
func ParseBilling(s string) (Billing, error) {
	switch b := Billing(s); b {
	case RequestBased, InstanceBased:
		return b, nil
	}
	return "", fmt.Errorf("cloud run billing %q: want %s or %s", s, RequestBased, InstanceBased)
}

// billedShare is the share of time request-based billing bills an instance for: its busy share,
// each busy spell rounded up to CloudRunRoundSeconds. Spells per second are the caller's measure,
// or for Poisson arrivals at rate r per instance, r·(1 − busy): an arrival starts a spell when it
// finds the instance idle, which it does for the idle share of arrivals. The spells' mean length
// is rounded up, not each spell: exact when every spell is shorter than the granularity (each is
// billed one step) and within one step per spell of exact when spells are long.
func (u Usage) billedShare() (share, spellsPerS float64) {
	switch {
	case u.BusyShare <= 0:
		return 0, 0
	case u.BusyShare >= 1:
		return 1, 0
	}
	spellsPerS = u.BusySpellsPerS
	if spellsPerS == 0 {
		spellsPerS = u.RequestsPerS / u.Instances * (1 - u.BusyShare)
	}
	mean := u.BusyShare / spellsPerS
	billed := math.Ceil(mean/CloudRunRoundSeconds-1e-9) * CloudRunRoundSeconds // 1e-9: 0.3/0.1 is 2.9999999999999996
	return min(1, spellsPerS*billed), spellsPerS
}

// CloudRunBreakEven is the billed share of time at which request-based and instance-based billing
// cost the same for an instance of vcpus and gib serving requestsPerS: request-based costs
// b·(vcpus·CPU + gib·memory) + requests·fee per second, instance-based vcpus·CPU' + gib·memory'.
// Above it instance-based is cheaper. The billed share is Usage's busy share after rounding, so a
// busy share below this can still cross it (short requests billed as whole 100 ms steps). A value
// of 1 or more: request-based is cheaper however busy; 0 or less: the request fee alone costs more.
func CloudRunBreakEven(vcpus, gib, requestsPerS float64) float64 {
	instance := vcpus*CloudRunInstanceVCPUSecondUSD + gib*CloudRunInstanceGiBSecondUSD
	busy := vcpus*CloudRunRequestVCPUSecondUSD + gib*CloudRunRequestGiBSecondUSD
	return (instance - requestsPerS*CloudRunPerMillionRequestsUSD/1e6) / busy
}
