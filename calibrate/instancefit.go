package calibrate

import (
	"fmt"
	"math"
	"strconv"

	"persistlab/lab/instance"
	"persistlab/profile"
)

// InstanceFit is what two probes fit: the target's speed factors against this machine's, and the
// held-out unit size.
type InstanceFit struct {
	Figures []profile.Figure
	HeldOut []profile.HeldOut
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
// out and predicted; effective_cpus as the target measured it; each file system call's median
// ratio.
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
	fit.add(instance.EffectiveCPUsOption, sig3(target.CPU.EffectiveCPUs), fmt.Sprintf("%d threads on the target did the %d-row work at %.4g ms per unit against one thread's %.4g (%d cores visible, cgroup limit %s)",
		target.CPU.Threads, target.CPU.ParallelRows, target.CPU.ParallelMs, targetMs[HeldOutRows], target.Machine.Cores, limitText(target.Machine.CgroupCPULimit)))
	// The held-out size, predicted by the fitted factor from here's time, as the run will apply it.
	fitted, _ := strconv.ParseFloat(fValue, 64)
	predicted := fitted * hereMs[HeldOutRows]
	measured := targetMs[HeldOutRows]
	fit.HeldOut = append(fit.HeldOut, profile.HeldOut{Point: fmt.Sprintf("%d-row unit of CPU work", HeldOutRows), Unit: "ms",
		Predicted: predicted, Measured: measured, Error: (predicted - measured) / measured})
	fs := func(where string, t, h *FSResult, into map[string]float64) {
		for _, call := range instance.FSCalls {
			tc, ok1 := t.Call(call)
			hc, ok2 := h.Call(call)
			if !ok1 || !ok2 || hc.MedianUs <= 0 || tc.MedianUs <= 0 {
				continue
			}
			into[call] = tc.MedianUs / hc.MedianUs
			fit.add(instance.FSFactorOption(where, call), sig3(into[call]), fmt.Sprintf("median µs of %d rounds, target %.4g (p99 %.4g) on %s, here %.4g (p99 %.4g) on %s",
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

func (f *InstanceFit) add(option, value, how string) {
	if r := []rune(how); len(r) > 400 {
		how = string(r[:397]) + "..."
	}
	f.Figures = append(f.Figures, profile.Figure{Option: option, Value: value, Provenance: "measured", How: how})
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
