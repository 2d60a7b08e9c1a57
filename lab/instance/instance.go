// Package instance is the emulated instance's CPU: how much slower than this machine the user's
// target does the same work (a profile of kind instance, from persistlab calibrate instance), and
// how the system under test is made that much slower here. The runner enforces it through each
// instance's cpu cgroup: a pinned spinner's weight (its cpu_slowdown) for one instance on one CPU,
// else a CPU limit (its cpu_quota and cpu_period); this package only says which.
package instance

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"persistlab/internal/cgroup"
	"persistlab/param"
	"persistlab/profile"
)

// Figures an instance profile sets.
const (
	CPUFactorOption     = "cpu_factor"
	EffectiveCPUsOption = "effective_cpus"
)

// FSCalls are the file system calls the probe times; each has a factor option in the directory
// probed (fs_CALL_factor) and on a FUSE mount (fuse_CALL_factor).
var FSCalls = []string{"create", "fsync", "rename", "stat", "unlink"}

// FSFactorOption names a call's factor option: where is "fs" or "fuse".
func FSFactorOption(where, call string) string { return where + "_" + call + "_factor" }

// Defaults: without a profile the target is taken to be this machine.
const (
	DefaultCPUFactor = 1.0
	DefaultFSFactor  = 1.0
)

// Bounds of the emulation. The kernel takes no CFS quota under 1 ms per period, and the runner no
// period over 1 s, so a hundredth of a CPU is the least it can give; the runner's cpu_quota, no
// more than 1024 CPUs.
const (
	MinQuotaPerPeriod = cgroup.MinQuota
	MinEmulatedCPUs   = 0.01
	MaxEmulatedCPUs   = 1024
)

// DefaultPeriod is the CFS period of the emulated slowdown where it holds the kernel's least
// quota (1 ms: from 0.2 CPUs up). Measured (docs/benchmarks.md): against the shortest period that
// holds 1 ms of quota, it came nearer a CPU f times slower in 6 of the 8 figures of bench/instance
// (2026-11-28), and the probe's work (SQLite through cgo, JSON, the Go runtime's threads) under
// half a CPU had 0.49 of a CPU at 5 ms against 0.43 at 2 ms, and ran 2.1-2.7 times slower against
// 2.5-3.2 (a shared machine, alternated runs): the shortest period slows a multi-threaded app by
// more than its quota says.
const DefaultPeriod = 5 * time.Millisecond

// Period is the CFS period of the emulated slowdown for a quota of cpus CPUs: DefaultPeriod, or
// the shortest that holds the kernel's least quota where DefaultPeriod does not.
func Period(cpus float64) time.Duration { return max(DefaultPeriod, cgroup.ShortestPeriod(cpus)) }

// Options are what an instance profile's figures may set.
var Options = func() []param.Param {
	opts := []param.Param{
		{Name: CPUFactorOption, Kind: param.KindFloat, Default: param.PlainNumber(DefaultCPUFactor), Min: 0.001, Max: 1000, Unit: "x",
			Help: "the target's CPU time per unit of work over this machine's (above 1: the target is slower)"},
		{Name: EffectiveCPUsOption, Kind: param.KindFloat, Min: 0.001, Max: 4096, Unit: "CPUs",
			Help: "the target's CPUs' worth at once, each as fast as one of its threads (its work with every thread busy against one thread's, at least 1); the run's quota is effective_cpus / cpu_factor"},
	}
	for _, where := range []string{"fs", "fuse"} {
		for _, call := range FSCalls {
			opts = append(opts, param.Param{Name: FSFactorOption(where, call), Kind: param.KindFloat, Default: param.PlainNumber(DefaultFSFactor), Min: 1e-4, Max: 1e4, Unit: "x",
				Help: "the target's median time of the " + call + " call over this machine's (" + where + "; recorded, not emulated)"})
		}
	}
	return opts
}()

func init() {
	profile.RegisterKind(profile.Kind{Name: "instance", Model: "instance", Options: Options, Check: checkFigures, Relative: true,
		Target: "the target's hostname as its probe recorded it (letters, digits, '.', '-', '_')", ValidTarget: validHost})
}

// checkFigures: an instance profile holds the CPU factor and the CPUs it is relative to.
func checkFigures(opts map[string]string) error {
	for _, need := range []string{CPUFactorOption, EffectiveCPUsOption} {
		if opts[need] == "" {
			return fmt.Errorf("no %s: an instance profile holds %s and %s", need, CPUFactorOption, EffectiveCPUsOption)
		}
	}
	return nil
}

// validHost: a host name, nothing that could carry a credential or a path.
func validHost(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Emulation is how a run makes this machine's CPU as slow as the target's: a CFS quota of
// CPUs / Factor per Period on each instance. It gives the target's CPU time, not its latency
// shape (docs/benchmarks.md, bench/instance). Quota 0: nothing is emulated, and None says why.
type Emulation struct {
	Factor float64       // the target's CPU time per unit over this machine's
	CPUs   float64       // the target's effective CPUs
	Quota  float64       // CPUs of quota per period
	Period time.Duration // the CFS period
	None   string
}

// FactorText is the factor as the runner's cpu_slowdown takes it.
func (e Emulation) FactorText() string {
	return strconv.FormatFloat(math.Round(e.Factor*1e4)/1e4, 'f', -1, 64)
}

// QuotaText is the quota as the runner's cpu_quota takes it.
func (e Emulation) QuotaText() string { return strconv.FormatFloat(e.Quota, 'f', -1, 64) }

// EmulationOf is the emulation an instance profile's figures ask for. A target faster than this
// machine (factor 1 or less) is never emulated by speeding anything up: nothing is done.
func EmulationOf(figures map[string]string) (Emulation, error) {
	var read struct {
		Factor float64  `param:"cpu_factor"`
		CPUs   *float64 `param:"effective_cpus"` // no default: a profile must hold it
	}
	if err := param.Decode(Options, figures, &read); err != nil {
		return Emulation{}, err
	}
	if read.CPUs == nil {
		return Emulation{}, fmt.Errorf("no %s: an instance profile holds %s and %s", EffectiveCPUsOption, CPUFactorOption, EffectiveCPUsOption)
	}
	f, cpus := read.Factor, *read.CPUs
	e := Emulation{Factor: f, CPUs: cpus}
	switch {
	case f == 1:
		e.None = "the target is as fast as this machine (cpu_factor 1): nothing to slow down"
		return e, nil
	case f < 1:
		e.None = fmt.Sprintf("this machine is slower than the target (cpu_factor %s: the target does the work in %.0f%% of this machine's time); nothing is sped up, so the figures are pessimistic", figures[CPUFactorOption], 100*f)
		return e, nil
	}
	q := math.Round(cpus/f*1e4) / 1e4
	if q < MinEmulatedCPUs {
		return Emulation{}, fmt.Errorf("%s %s over %s %s asks for %g CPUs: below the %g CPUs the runner can give (the kernel's 1 ms quota per period, periods up to 1 s)",
			EffectiveCPUsOption, figures[EffectiveCPUsOption], CPUFactorOption, figures[CPUFactorOption], cpus/f, MinEmulatedCPUs)
	}
	if q > MaxEmulatedCPUs {
		return Emulation{}, fmt.Errorf("%s %s over %s %s asks for %g CPUs: above the %d CPUs the runner's cpu_quota takes",
			EffectiveCPUsOption, figures[EffectiveCPUsOption], CPUFactorOption, figures[CPUFactorOption], cpus/f, MaxEmulatedCPUs)
	}
	e.Quota, e.Period = q, Period(q)
	return e, nil
}
