package calibrate

import (
	"fmt"
	"math"
	"strconv"

	"persistlab/lab/instance"
	"persistlab/param"
	"persistlab/profile"
)

// InstanceFit is what two probes fit: the target's speed factors against this machine's, and the
// held-out unit size.
type InstanceFit struct {
	Figures []profile.Figure
	HeldOut []profile.HeldOut
	// NotFitted are the factors measured but left out of the profile, and why (a ratio beyond
	// what a profile holds): the run keeps the default for them.
	NotFitted []profile.NotFitted
	// Ratios are the target's ms per unit over here's, by unit size (rows).
	Ratios map[int]float64
	// FS and FUSE are the factors by call; FUSE is empty unless both probes timed a FUSE mount.
	FS, FUSE map[string]float64
	// NoFUSE says why there are no FUSE factors although the target timed a FUSE mount.
	NoFUSE string
}

// Value is the figure set for option, "" if none.
func (f InstanceFit) Value(option string) string {
	for _, x := range f.Figures {
		if x.Option == option {
			return x.Value
		}
	}
	return ""
}

// FitInstance fits the target's speed against here's: cpu_factor from the smallest and largest
// units (the geometric mean of their time ratios, so each size weighs alike), the middle size held
// out and predicted; effective_cpus from the target's work with every thread busy; each file
// system call's median ratio.
//
// effective_cpus is what the run's quota (effective_cpus / cpu_factor) is made of: the target's
// all-threads time per unit against its one-thread time as cpu_factor predicts it (cpu_factor x
// here's), so that the quota is here's one-thread CPU time per unit over the target's
// all-threads wall time per unit: the CPU time that does the target's work in the target's
// time. It is at least 1: one thread of the target runs at its own speed by definition, and less
// is the parallel phase's own loss (under exactly half a CPU the probe's two threads did 0.87 of
// one thread's work at once), which the emulated instance suffers again under its own quota.
func FitInstance(target, here *Probe) InstanceFit {
	fit := InstanceFit{Ratios: map[int]float64{}, FS: map[string]float64{}, FUSE: map[string]float64{}}
	hereMs := map[int]float64{}
	targetMs := map[int]float64{}
	for i, s := range target.CPU.Sizes {
		targetMs[s.Rows], hereMs[s.Rows] = s.MsPerUnit, here.CPU.Sizes[i].MsPerUnit
		fit.Ratios[s.Rows] = s.MsPerUnit / here.CPU.Sizes[i].MsPerUnit
	}
	lo, hi := UnitRows[0], UnitRows[len(UnitRows)-1]
	f := math.Sqrt(fit.Ratios[lo] * fit.Ratios[hi])
	fValue := sig3(f)
	fit.add(instance.CPUFactorOption, fValue, fmt.Sprintf("target's ms per unit over this machine's, one thread, median of %d and %d batches: %d rows %.4g/%.4g = %.3f, %d rows %.4g/%.4g = %.3f; their geometric mean",
		target.CPU.Repeats, here.CPU.Repeats, lo, targetMs[lo], hereMs[lo], fit.Ratios[lo], hi, targetMs[hi], hereMs[hi], fit.Ratios[hi]))
	fitted, _ := strconv.ParseFloat(fValue, 64)
	// The held-out size, predicted by the fitted factor from here's time, as the run will apply it.
	predicted := fitted * hereMs[HeldOutRows]
	measured := targetMs[HeldOutRows]
	atOnce := predicted / target.CPU.ParallelMs
	fit.add(instance.EffectiveCPUsOption, sig3(max(1, atOnce)), fmt.Sprintf("%d threads on the target did the %d-row work at %.4g ms per unit against one thread's %.4g predicted (cpu_factor x here's %.4g): %.3f at once, at least 1 (measured one thread: %.4g ms, %.3f at once; %d cores visible, cgroup limit %s)",
		target.CPU.Threads, target.CPU.ParallelRows, target.CPU.ParallelMs, predicted, hereMs[HeldOutRows], atOnce, measured, target.CPU.EffectiveCPUs, target.Machine.Cores, limitText(target.Machine.CgroupCPULimit)))
	fit.HeldOut = append(fit.HeldOut, profile.HeldOut{Point: fmt.Sprintf("%d-row unit of CPU work", HeldOutRows), Unit: "ms",
		Predicted: predicted, Measured: measured, Error: (predicted - measured) / measured})
	fs := func(where string, t, h *FSResult, into map[string]float64) {
		for _, call := range instance.FSCalls {
			option := instance.FSFactorOption(where, call)
			tc, ok1 := t.Call(call)
			hc, ok2 := h.Call(call)
			if !ok1 || !ok2 {
				continue
			}
			if hc.MedianUs <= 0 || tc.MedianUs <= 0 {
				fit.notFitted(option, fmt.Sprintf("a median of 0 µs (target %g, here %g): no ratio", tc.MedianUs, hc.MedianUs))
				continue
			}
			x := tc.MedianUs / hc.MedianUs
			o, _ := param.Find(instance.Options, option)
			if _, err := o.Number(sig3(x)); err != nil {
				fit.notFitted(option, fmt.Sprintf("target %.4g µs over here %.4g µs is %.3g: beyond what a profile holds (%s)", tc.MedianUs, hc.MedianUs, x, o.Accepts()))
				continue
			}
			into[call] = x
			fit.add(option, sig3(x), fmt.Sprintf("median µs of %d rounds, target %.4g (p99 %.4g) on %s, here %.4g (p99 %.4g) on %s",
				t.Ops, tc.MedianUs, tc.P99Us, t.FileSystem, hc.MedianUs, hc.P99Us, h.FileSystem))
		}
	}
	fs("fs", &target.FS, &here.FS, fit.FS)
	switch {
	case target.FUSE != nil && here.FUSE != nil:
		fs("fuse", target.FUSE, here.FUSE, fit.FUSE)
	case target.FUSE != nil:
		fit.NoFUSE = "the target timed a FUSE mount and this machine did not (--fuse-dir here too, or a --here probe with one): no FUSE factors"
	}
	return fit
}

func (f *InstanceFit) notFitted(option, why string) {
	f.NotFitted = append(f.NotFitted, profile.NotFitted{Option: option, Why: clip(why)})
}

func (f *InstanceFit) add(option, value, how string) {
	f.Figures = append(f.Figures, profile.Figure{Option: option, Value: value, Provenance: "measured", How: clip(how)})
}

// clip keeps a profile's text within the 400 characters it holds.
func clip(s string) string {
	if r := []rune(s); len(r) > 400 {
		return string(r[:397]) + "..."
	}
	return s
}

// sig3 writes x to 3 significant digits, without an exponent.
func sig3(x float64) string {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	digits := max(0, 2-int(math.Floor(math.Log10(x))))
	return strconv.FormatFloat(x, 'f', digits, 64)
}

func limitText(cpus float64) string {
	if cpus <= 0 {
		return "none"
	}
	return strconv.FormatFloat(cpus, 'f', -1, 64) + " CPUs"
}
