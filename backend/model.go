package backend

import "persistlab/internal/registry"

// VolumeModel is what an emulated volume entry's cloud model says of it, for the report: what the
// volume is, the limits and price its provider publishes for it, and the rate those limits allow
// a steady job. The report reads it through VolumeModelOf, so it links no model of its own.
type VolumeModel struct {
	Type      string
	SizeBytes int64
	Limits    string // one line: IOPS, throughput, burst
	// The most the volume writes within its instance's caps, at its burst where it has one: IOPS
	// in the model's billing units, and MiB/s (what the lab's ceiling is held against).
	WriteIOPS, WriteMiBps float64
	// The burst buckets, full at creation (0 without one): gp2's I/O credits, st1's and sc1's MiB
	// of throughput credit; and the baselines that refill them, in the same units per second.
	CreditIOs, CreditMiB float64
	BaseIOPS, BaseMiBps  float64
	MonthlyUSD           float64
	PriceBasis           string // how the price is made up, with its sources
	// Expect is the I/O rate (I/Os per second) the limits allow job, from full credits.
	Expect func(job Job) float64
}

// Job is a steady I/O pattern: direction, randomness, block size, I/Os in flight, and how long it
// runs (0: unbounded), which sets how much burst credit it can spend.
type Job struct {
	Write, Random bool
	BS            int64
	Depth         int
	Seconds       float64
}

// VolumeModeler describes an entry of a backend from its options; false when the entry has no
// volume model in effect (the model off).
type VolumeModeler func(options map[string]string) (VolumeModel, bool)

var volumeModels = registry.New[VolumeModeler]("backend: volume model of")

// RegisterVolumeModel says how a backend's entries describe their volume model; backends call it
// from init, beside Register. A second registration of one backend panics.
func RegisterVolumeModel(backend string, m VolumeModeler) { volumeModels.Register(backend, m) }

// VolumeModelOf is the volume model of an entry of backend with options, if it has one in effect.
func VolumeModelOf(backend string, options map[string]string) (VolumeModel, bool) {
	m, ok := volumeModels.Get(backend)
	if !ok {
		return VolumeModel{}, false
	}
	return m(options)
}
