package instance

import (
	"fmt"

	"persistlab/provenance"
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
	// periodSource: what bench/instance measured (docs/benchmarks.md, 2026-11-28) and the probe's
	// own runs under half a CPU.
	periodSource = "bench/instance (2026-11-28, 400 requests of 5 ms of SHA-256, this project's 2-core machine; docs/benchmarks.md): no period keeps a slow CPU's shape. A request alone is slowed less than f (it spends quota left unused while idle): 1.01x at f 2 and 5 ms, 1.49x at the shortest period (2 ms); back to back the median is near f but the p99 1.4-1.6 times too long (f 2, 5 ms: 2.01x, p99 2.88x); 100 ms leaves medians unslowed and p99s 11-16x. 5 ms came nearer f than the shortest period in 6 of 8 figures, and the probe's work under half a CPU had 0.49 of a CPU at 5 ms against 0.43 at 2 ms"
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
		{Name: "CFS period of the emulated slowdown", Go: "DefaultPeriod, Period", Value: fmt.Sprintf("%v; longer where that holds less than the kernel's least quota of %v (under %g CPUs: %v over the quota)", DefaultPeriod, MinQuotaPerPeriod, float64(MinQuotaPerPeriod)/float64(DefaultPeriod), MinQuotaPerPeriod),
			Kind:   provenance.Assumed,
			Source: periodSource,
			Moves:  "the shape of latency under an instance profile run with a CPU limit (how much a request alone and a p99 are slowed against the median of requests back to back); not the CPU time given. A scenario that pins one instance to one CPU for a target of one CPU runs under cpu_slowdown instead (a pinned spinner's cgroup weight), to which no period applies"},
	}
	for _, where := range []string{"fs", "fuse"} {
		place := map[string]string{"fs": "in the probed directory", "fuse": "on the probed FUSE mount"}[where]
		for _, call := range FSCalls {
			figs = append(figs, provenance.Figure{Name: fmt.Sprintf("%s call time %s, the target's over this machine's", call, place), Go: "DefaultFSFactor",
				Value: fmt.Sprintf("%g (recorded, not emulated)", DefaultFSFactor), Kind: provenance.Assumed, Option: FSFactorOption(where, call), Source: whyNoFS,
				Moves: provenance.MovesNothing + ": the reader's judgement of how the target's file system compares"})
		}
	}
	for i := range figs {
		figs[i].Model = "instance"
	}
	return figs
}
