package instance

import (
	"fmt"

	"persistlab/internal/provenance"
)

// The instance model's figures and where each comes from (package provenance; `persistlab lab
// model instance` prints them): without an instance profile, every one takes the target to be
// this machine.

func init() {
	provenance.Register(provenance.Model{Name: "instance", Figures: Figures})
}

const (
	whyThisMachine = "nothing tells how fast a user's instance is against the machine persistlab runs on: without a profile the run is this machine's; persistlab calibrate instance measures it on the target (a profile of kind instance)"
	whyNoFS        = "the runner slows no system call: a profile records the target's factor beside the CPU's for the reader, and a run applies none"
)

// Figures is the instance model's table.
func Figures() []provenance.Figure {
	figs := []provenance.Figure{
		{Name: "CPU time per unit of work, the target's over this machine's", Go: "DefaultCPUFactor", Value: fmt.Sprintf("%g (the target as fast as this machine)", DefaultCPUFactor),
			Kind: provenance.Assumed, Option: CPUFactorOption, Source: whyThisMachine,
			Moves: "every CPU-bound figure of the system under test: requests/s where its CPU binds, the latency of CPU-heavy requests (seed 000's Rails app: 446 requests/s at 2 VUs here against the seed's 119 on Cloud Run, issue 36)"},
		{Name: "CPUs of the instance", Go: "Emulation.CPUs", Value: "the scenario's cpus or cpu_quota, else this machine's",
			Kind: provenance.Assumed, Option: EffectiveCPUsOption, Source: whyThisMachine,
			Moves: "with cpu_factor, the CPU quota an instance runs under (effective_cpus / cpu_factor): its requests/s where the CPU binds"},
		{Name: "CFS period of the emulated slowdown", Go: "MinQuotaPerPeriod, ShortestPeriod", Value: fmt.Sprintf("the shortest that holds the kernel's least quota: %v of quota per period (%v per %v at a quarter of a CPU), at least %v", MinQuotaPerPeriod, MinQuotaPerPeriod, ShortestPeriod(0.25), MinQuotaPerPeriod),
			Kind:   provenance.Assumed,
			Source: "so that a request slowed f-fold gets its CPU in pieces of a millisecond, evenly, instead of running at full speed and stopping for the rest of a 100 ms period (the containers' default, which makes tails of its own); a 5 ms period left a 2 ms request unslowed at f = 2 (its quota, 2.5 ms, outlasts it); bench/instance measures each",
			Moves:  "the shape of latency under an instance profile (its tail against its median); not the CPU time given"},
	}
	for _, where := range []string{"fs", "fuse"} {
		place := map[string]string{"fs": "in the probed directory", "fuse": "on the probed FUSE mount"}[where]
		for _, call := range FSCalls {
			figs = append(figs, provenance.Figure{Name: fmt.Sprintf("%s call time %s, the target's over this machine's", call, place), Go: "DefaultFSFactor",
				Value: fmt.Sprintf("%g (recorded, not emulated)", DefaultFSFactor), Kind: provenance.Assumed, Option: FSFactorOption(where, call), Source: whyNoFS,
				Moves: "nothing a run measures: the reader's judgement of how the target's file system compares"})
		}
	}
	for i := range figs {
		figs[i].Model = "instance"
	}
	return figs
}
