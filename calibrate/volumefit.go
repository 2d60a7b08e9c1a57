package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"persistlab/lab/volume"
	"persistlab/profile"
)

// VolumeTarget is what is known of the probed volume: its type as the user names it (--type)
// and the size of the block device under the directory.
type VolumeTarget struct {
	Type      string // "" when not given
	SizeBytes int64  // 0 when unknown
}

// options are the target as volume options, for the model's own checks.
func (t VolumeTarget) options() map[string]string {
	o := map[string]string{"type": t.Type}
	if t.SizeBytes > 0 {
		o["size"] = strconv.FormatInt(t.SizeBytes, 10)
	}
	return o
}

// limits are the model's figures for the target; ok false without a type and a size.
func (t VolumeTarget) limits() (volume.Limits, bool) {
	if t.Type == "" || t.SizeBytes <= 0 {
		return volume.Limits{}, false
	}
	return volume.Spec{Type: t.Type, SizeBytes: t.SizeBytes}.Limits(), true
}

// HasBucket says whether the target's type has a burst credit bucket at its size (gp2 under
// 1,000 GiB; st1, sc1); unknown (no type or size): true, so --long measures it.
func (t VolumeTarget) HasBucket() bool {
	l, ok := t.limits()
	return !ok || l.CreditIOs > 0 || l.CreditMiB > 0
}

// ModelFigure is the model's own value of a volume profile's option for the target, in words;
// "" when the type or size is unknown.
func (t VolumeTarget) ModelFigure(option string) string {
	l, ok := t.limits()
	if !ok {
		return ""
	}
	switch option {
	case "latency":
		return l.ServiceTime.String()
	case "iops":
		switch {
		case l.ReadIOPS > 0:
			return fmt.Sprintf("%.0f read / %.0f write IOPS", l.ReadIOPS, l.WriteIOPS)
		case l.BaseIOPS == 0:
			return "as provisioned"
		case l.BurstIOPS > l.BaseIOPS:
			return fmt.Sprintf("%.0f IOPS (%.0f while credits last)", l.BaseIOPS, l.BurstIOPS)
		}
		return fmt.Sprintf("%.0f IOPS", l.BaseIOPS)
	case "throughput":
		switch {
		case l.ReadMiBps > 0:
			return fmt.Sprintf("%.1f read / %.1f write MiB/s", l.ReadMiBps, l.WriteMiBps)
		case l.BurstMiBps > l.BaseMiBps:
			return fmt.Sprintf("%.1f MiB/s (%.1f while credits last)", l.BaseMiBps, l.BurstMiBps)
		case l.BaseMiBps == 0:
			return "as provisioned"
		}
		return fmt.Sprintf("%.1f MiB/s", l.BaseMiBps)
	case "credit_scale":
		if l.CreditIOs > 0 || l.CreditMiB > 0 {
			return "1 (the published bucket)"
		}
		return "no bucket"
	}
	return ""
}

// CheckTarget refuses a type the volume cannot be: an unknown type, or a size outside its range.
func (t VolumeTarget) CheckTarget() error {
	if t.Type == "" {
		return nil
	}
	if !slices.Contains(volume.TypeNames(), t.Type) {
		return fmt.Errorf("--type %q: want one of %v", t.Type, volume.TypeNames())
	}
	if t.SizeBytes <= 0 {
		return nil
	}
	if _, err := volume.ConfigFromOptions(t.provisioned(t.options())); err != nil {
		return fmt.Errorf("--type %s: the volume under --dir is %.1f GiB, which a %s volume cannot be: %w", t.Type, float64(t.SizeBytes)/(1<<30), t.Type, err)
	}
	return nil
}

// provisioned adds the least IOPS io1 and io2 provision where opts set none: without one they
// are no volume at all, and the other figures are checked against the rest.
func (t VolumeTarget) provisioned(opts map[string]string) map[string]string {
	if _, ok := opts["iops"]; !ok && (t.Type == "io1" || t.Type == "io2") {
		opts["iops"] = strconv.FormatFloat(volume.IOMinIOPS, 'f', -1, 64)
	}
	return opts
}

// Bounds of the fit. saturationShare: a depth-1 rate this close to the depth-32 one is the IOPS
// limit's, so its latency is time spent waiting for the limit, not a service time.
const (
	saturationShare = 0.9
	latencyRound    = 10 * time.Microsecond
)

// VolumeFit is what the samples fit: figures for the volume model's options, what could not be
// fitted (or fitted but cannot be taken by the type), the held-out point, and the drain.
type VolumeFit struct {
	Figures   []profile.Figure
	NotFitted []profile.NotFitted
	HeldOut   []profile.HeldOut
	Drain     *Drain // with --long, when the drain ran
	// AppliesTo is the profile's applies_to: the type, when given.
	AppliesTo map[string]string
}

// Value is the fitted value of option, "" if it was not fitted.
func (f VolumeFit) Value(option string) string {
	for _, x := range f.Figures {
		if x.Option == option {
			return x.Value
		}
	}
	return ""
}

// FitVolume fits the volume model's options to the samples. Each figure is checked against the
// target's type: one the type cannot take (gp2 provisions no IOPS; gp3 none below 3,000) is
// listed as not fitted, with the measured value and the model's rule, not dropped.
func FitVolume(s *VolumeSamples, plan VolumePlan, t VolumeTarget) VolumeFit {
	var f VolumeFit
	if t.Type != "" {
		f.AppliesTo = map[string]string{"type": t.Type}
	}
	taken := t.options()
	add := func(option, value, measured, how string) {
		if t.Type != "" {
			trial := t.options()
			for k, v := range taken {
				trial[k] = v
			}
			trial[option] = value
			var err error
			if t.SizeBytes > 0 {
				_, err = volume.ConfigFromOptions(t.provisioned(trial))
			} else if option == "iops" || option == "throughput" {
				err = provisionable(t.Type, option)
			}
			if err != nil {
				why := fmt.Sprintf("measured %s, which a %s volume cannot take (%v)", measured, t.Type, err)
				if m := t.ModelFigure(option); m != "" {
					why += "; the model keeps its own, " + m
				}
				f.NotFitted = append(f.NotFitted, profile.NotFitted{Option: option, Why: cut(why, 400)})
				return
			}
		}
		taken[option] = value
		f.Figures = append(f.Figures, profile.Figure{Option: option, Value: value, Provenance: "measured", How: cut(how, 400)})
	}
	notFitted := func(option, why string) {
		f.NotFitted = append(f.NotFitted, profile.NotFitted{Option: option, Why: cut(why, 400)})
	}

	rd, wr, qd32 := s.ReadQD1, s.WriteQD1, s.ReadQD32
	r50, r99, w50, w99 := rd.Percentile(50), rd.Percentile(99), wr.Percentile(50), wr.Percentile(99)
	latency := ((r50 + w50) / 2).Round(latencyRound)
	switch {
	case rd.IOPS() > saturationShare*qd32.IOPS():
		notFitted("latency", fmt.Sprintf("4 KiB reads at depth 1 already ran at %.0f IOPS, %.0f%% of the %.0f at depth 32: their latency (median %s) is waiting for the volume's IOPS limit, not a service time",
			rd.IOPS(), 100*rd.IOPS()/qd32.IOPS(), qd32.IOPS(), msText(r50)))
	case r50 <= 0 || w50 <= 0:
		notFitted("latency", "fio reported no latency percentiles for the depth-1 phases")
	case latency > volume.MaxServiceTime:
		notFitted("latency", fmt.Sprintf("measured %s, above the most the model takes (%s)", latency, volume.MaxServiceTime))
	default:
		add("latency", latency.String(), latency.String()+" at depth 1",
			fmt.Sprintf("mean of the median latencies of 4 KiB random reads (%s; p99 %s) and writes (%s; p99 %s) at depth 1, direct I/O, %s each, from fio's latency histograms: the model has one service time for both",
				msText(r50), msText(r99), msText(w50), msText(w99), rd.Elapsed.Round(time.Millisecond)))
	}
	iops := math.Round(qd32.IOPS())
	if iops < 1 || iops > volume.IOMaxIOPS {
		notFitted("iops", fmt.Sprintf("measured %.0f IOPS at depth 32, outside what the model takes (1 to %.0f)", iops, volume.IOMaxIOPS))
	} else {
		add("iops", strconv.FormatFloat(iops, 'f', 0, 64), fmt.Sprintf("%.0f IOPS at depth 32", iops),
			fmt.Sprintf("4 KiB random reads at depth 32, direct I/O (libaio), for %s: %d I/Os", qd32.Elapsed.Round(time.Millisecond), qd32.IOs))
	}
	mibs := math.Round(s.SeqRead.MiBps()*10) / 10
	if mibs < 1 || mibs > volume.IOMaxMiBps {
		notFitted("throughput", fmt.Sprintf("measured %.1f MiB/s of 1 MiB reads, outside what the model takes (1 to %.0f)", mibs, volume.IOMaxMiBps))
	} else {
		add("throughput", strconv.FormatFloat(mibs, 'f', 1, 64), fmt.Sprintf("%.1f MiB/s of 1 MiB reads", mibs),
			fmt.Sprintf("1 MiB sequential reads at depth %d, direct I/O (libaio), for %s: %s", PhaseSeqRead.Depth, s.SeqRead.Elapsed.Round(time.Millisecond), sizeText(s.SeqRead.Bytes)))
	}
	if plan.Long && len(s.Drain) > 0 {
		d := AnalyzeDrain(s.Drain, qd32.IOPS())
		f.Drain = &d
		f.fitCredits(s, d, t, add, notFitted)
	}

	// Held out: Little's law on the depth-1 rate (each of 8 in flight takes as long as one
	// alone), capped by the depth-32 rate (the volume's limit).
	if rd.IOPS() > 0 && s.ReadQD8.IOPS() > 0 {
		predicted := math.Round(min(HeldOutDepth*rd.IOPS(), qd32.IOPS())*10) / 10
		measured := math.Round(s.ReadQD8.IOPS()*10) / 10
		f.HeldOut = append(f.HeldOut, profile.HeldOut{Point: fmt.Sprintf("4 KiB random reads at depth %d", HeldOutDepth), Unit: "IOPS",
			Predicted: predicted, Measured: measured, Error: math.Round((predicted-measured)/measured*1e6) / 1e6})
	}
	return f
}

// fitCredits fits credit_scale from the drain: the I/Os above the baseline it spent until the
// bucket emptied, plus those the earlier phases spent above it, over the type's published bucket.
func (f *VolumeFit) fitCredits(s *VolumeSamples, d Drain, t VolumeTarget, add func(option, value, measured, how string), notFitted func(option, why string)) {
	drained := fmt.Sprintf("4 KiB random reads at depth 32 ran at %.0f IOPS for %s", d.Burst, d.After.Round(100*time.Millisecond))
	l, known := t.limits()
	switch {
	case !d.Emptied:
		notFitted("credit_scale", drained+" without falling: no burst bucket emptied within --drain-max (a longer one may find it)")
		return
	case t.Type == "":
		notFitted("credit_scale", fmt.Sprintf("%s, then %.0f: without --type, which type's published bucket that is, is unknown", drained, d.Base))
		return
	case !known:
		notFitted("credit_scale", fmt.Sprintf("%s, then %.0f: the volume's size is unknown (no block device found under --dir), and %s's published bucket grows with it", drained, d.Base, t.Type))
		return
	}
	published, unit := l.CreditIOs, "I/O credits"
	if l.HDD {
		published, unit = l.CreditMiB, "MiB of credit"
	}
	// The earlier phases spent what they moved in billing units (an HDD counts each I/O of up
	// to 1 MiB as 1 MiB; an SSD 256 KiB as one I/O) above what the baseline refilled meanwhile,
	// fio's start-ups included.
	spent := 0.0
	for _, r := range []PhaseResult{s.Layout, s.ReadQD1, s.WriteQD1, s.ReadQD32, s.ReadQD8, s.SeqRead} {
		units := float64(r.IOs) * math.Ceil(float64(r.Phase.BS)/float64(l.UnitBytes))
		spent += max(0, units-d.Base*r.wall().Seconds())
	}
	total := spent + d.Credits
	scale, _ := strconv.ParseFloat(strconv.FormatFloat(total/published, 'g', 3, 64), 64)
	how := fmt.Sprintf("%s, then %.0f: the bucket held about %.0f %s when the drain began, and the earlier phases spent about %.0f above the baseline; %.0f of %s's published %.3g at %.0f GiB",
		drained, d.Base, d.Credits, unit, spent, total, t.Type, published, float64(t.SizeBytes)/(1<<30))
	if d.BaseUpper {
		how += " (baseline from the falling step alone: the credits are a lower bound)"
	}
	if scale < volume.MinCreditScale || scale > volume.MaxCreditScale {
		notFitted("credit_scale", fmt.Sprintf("%s: a scale of %g, outside what the model takes (%g to %g)", how, scale, volume.MinCreditScale, volume.MaxCreditScale))
		return
	}
	add("credit_scale", strconv.FormatFloat(scale, 'g', -1, 64), fmt.Sprintf("%.0f %s", total, unit), how)
}

// provisionable says whether the type takes option (iops, throughput) at all.
func provisionable(typ, option string) error {
	for _, ti := range volume.Types() {
		if ti.Name == typ && !slices.Contains(ti.Provisionable, option) {
			return fmt.Errorf("%s provisions no %s: its follows from its size", typ, option)
		}
	}
	return nil
}

// cut bounds a profile's text field, on a character's boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("...")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
