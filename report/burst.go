package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"persistlab/backend"
	"persistlab/measure"
	"persistlab/results"
	"persistlab/scenario"
)

// BurstUse is how one backend's burst bucket (gp2's I/O credits, st1's and sc1's MiB of credit)
// fared in its cells, from the balance and the billed I/O units the runner sampled.
type BurstUse struct {
	Backend  string
	Type     string
	Unit     string  // what a credit is: "I/O", "MiB"
	Bucket   float64 // credits, full at the start of a cell
	Baseline float64 // credits refilled per second
	Cells    int     // cells with a sampled balance
	// Lasted counts the cells that never ran dry while the burst mattered to them (Slowdown at
	// least 1+BurstMatters); Drained, those that ran dry.
	Lasted, Drained int
	// Of the undrained cell that leaned on its burst the most: its sampled seconds, the credits it
	// spent net of refill, the I/O units it was billed, and Slowdown, how much longer the same
	// I/O takes at least without credits: the units billed over what the baseline gives in its
	// time.
	Seconds, Spent, Billed, Slowdown float64
	// Of the first drained cell: how far into its sampled time the balance ran dry.
	DrainedAt, DrainedOf float64
	// LeastLeft is the lowest balance any cell reached, as a share of the bucket.
	LeastLeft float64
}

// BurstMatters is how much slower a cell's I/O would be at its volume's baseline before its
// burst counts as part of what it measured: a tenth, below which a ranking within the one-run
// margin could not turn on it (an assumed bound).
const BurstMatters = 0.10

// dryShare is the balance, as a share of the bucket, under which a bucket counts as run dry.
const dryShare = 0.01

// Lasts is how long a full bucket lasts at the cell's pace of spending (+Inf if it spent none).
func (u BurstUse) Lasts() float64 {
	if u.Spent <= 0 || u.Seconds <= 0 {
		return math.Inf(1)
	}
	return u.Bucket / (u.Spent / u.Seconds)
}

// BurstUses is each burst backend's use of its bucket, in the run's backend order; backends
// whose cells sampled no balance are left out.
func BurstUses(r *results.Results) []BurstUse {
	var out []BurstUse
	for _, b := range r.BackendOrder() {
		m, ok := VolumeModel(r, b)
		if !ok {
			continue
		}
		u := BurstUse{Backend: b, Type: m.Type, LeastLeft: 1}
		key := ""
		switch {
		case m.CreditIOs > 0:
			u.Unit, u.Bucket, u.Baseline, key = "I/O", m.CreditIOs, m.BaseIOPS, backend.VolumeCreditIOs
		case m.CreditMiB > 0:
			u.Unit, u.Bucket, u.Baseline, key = "MiB", m.CreditMiB, m.BaseMiBps, backend.VolumeCreditMiB
		default:
			continue
		}
		for _, c := range r.Cells {
			balance := c.Series[backend.StatsSeries(key)]
			if c.Backend != b || c.Failure != "" || len(balance) < 2 {
				continue
			}
			u.Cells++
			for _, p := range balance {
				u.LeastLeft = min(u.LeastLeft, p.V/u.Bucket)
			}
			first, last := balance[0], balance[len(balance)-1]
			seconds := last.T - first.T
			if seconds <= 0 {
				continue
			}
			if at, dry := dryAt(balance, u.Bucket); dry {
				if u.Drained == 0 {
					u.DrainedAt, u.DrainedOf = at-first.T, seconds
				}
				u.Drained++
				continue
			}
			if u.Baseline <= 0 {
				continue
			}
			billed := grown(c.Series[backend.StatsSeries(backend.VolumeReadUnits)]) + grown(c.Series[backend.StatsSeries(backend.VolumeWriteUnits)])
			slowdown := billed / (u.Baseline * seconds)
			if slowdown >= 1+BurstMatters {
				u.Lasted++
			}
			if u.Seconds == 0 || slowdown > u.Slowdown {
				u.Seconds, u.Spent, u.Slowdown, u.Billed = seconds, first.V-last.V, slowdown, billed
			}
		}
		if u.Cells > 0 {
			out = append(out, u)
		}
	}
	return out
}

// dryAt is when a sampled balance first fell under dryShare of the bucket.
func dryAt(balance []measure.Point, bucket float64) (float64, bool) {
	for _, p := range balance {
		if p.V <= max(1, dryShare*bucket) {
			return p.T, true
		}
	}
	return 0, false
}

// grown is how much a sampled counter grew over its samples.
func grown(s []measure.Point) float64 {
	if len(s) < 2 {
		return 0
	}
	return s[len(s)-1].V - s[0].V
}

// OnBurst names the backends whose figures rest on a burst they never used up, for a verdict to
// say so beside it.
func OnBurst(r *results.Results) []string {
	var out []string
	for _, u := range BurstUses(r) {
		if u.Lasted > 0 {
			out = append(out, u.Backend)
		}
	}
	return out
}

// BurstNote is what a finding about backends adds where some of them ran on a burst they never
// used up ("; st1 on burst credits throughout: see below"), or "".
func BurstNote(r *results.Results, backends ...string) string {
	var on []string
	for _, b := range OnBurst(r) {
		if slices.Contains(backends, b) {
			on = append(on, b)
		}
	}
	if len(on) == 0 {
		return ""
	}
	return "; " + ListAnd(on) + " on burst credits throughout: see below"
}

// burstFindings say where a bucket ran dry well into a cell: what follows is the baseline.
func burstFindings(r *results.Results) []string {
	var out []string
	for _, u := range BurstUses(r) {
		// A bucket dry from the first seconds (a test's tiny one) is the baseline throughout.
		if u.Drained == 0 || u.DrainedAt < 0.05*u.DrainedOf {
			continue
		}
		out = append(out, fmt.Sprintf("%s ran out of burst credits %.0f s into a run of %.0f s: its figures after that are its baseline (%s)",
			u.Backend, u.DrainedAt, u.DrainedOf, baselineText(u)))
	}
	return out
}

// burstCaveats say, per backend whose figures rest on a burst it never used up, how much slower
// it would be without it and how long a full bucket lasts at the run's pace; then how to measure
// it drained: a like volume of the run that did, or a smaller bucket (credit_scale).
func burstCaveats(r *results.Results) []string {
	uses := BurstUses(r)
	var out, settle []string
	scale := 1.0
	for _, u := range uses {
		if u.Lasted == 0 {
			continue
		}
		cells := ""
		if u.Cells > 1 {
			cells = fmt.Sprintf(" in %d of its %d runs", u.Lasted, u.Cells)
		}
		out = append(out, fmt.Sprintf("%s ran on burst credits it never used up%s (%s of its bucket spent in %s; at that pace a full bucket lasts %s): without them the same I/O takes at least %.1fx as long, at its baseline of %s",
			u.Backend, cells, shareText(u.Spent/u.Bucket), secondsText(u.Seconds), secondsText(u.Lasts()), u.Slowdown, baselineText(u)))
		if twin := drainedTwin(r, uses, u); twin != "" {
			out[len(out)-1] += "; " + twin + ", the same volume drained, shows that"
			continue
		}
		settle = append(settle, u.Backend)
		scale = min(scale, creditScaleToDrain(u))
	}
	if len(settle) > 0 {
		out = append(out, fmt.Sprintf("to measure %s drained: %s", ListAnd(settle), withOption(r, settle, fmt.Sprintf("credit_scale: %q", trimScale(scale)))))
	}
	return out
}

// drainedTwin names a backend of the run on a volume of the same type and size whose bucket ran
// dry, or "".
func drainedTwin(r *results.Results, uses []BurstUse, u BurstUse) string {
	m, _ := VolumeModel(r, u.Backend)
	for _, o := range uses {
		if om, _ := VolumeModel(r, o.Backend); o.Backend != u.Backend && o.Drained > 0 && o.Lasted == 0 && om.Type == m.Type && om.SizeBytes == m.SizeBytes {
			return o.Backend
		}
	}
	return ""
}

// creditScaleToDrain is a credit_scale whose bucket the cell would have spent in half its time,
// at its pace: half the share it spent, to one significant digit, rounded down.
func creditScaleToDrain(u BurstUse) float64 {
	share := u.Spent / u.Bucket / 2
	if share <= 0 {
		return 1e-6
	}
	p := math.Pow(10, math.Floor(math.Log10(share)))
	return max(1e-9, math.Floor(share/p)*p)
}

func trimScale(v float64) string { return fmt.Sprintf("%.1g", v) }

// withOption is how to run backends again with option set in their entries: in the scenario
// file the run read, or in a copy of the built-in scenario.
func withOption(r *results.Results, backends []string, option string) string {
	file := scenarioFile(r)
	steps := ""
	if file == "" {
		file = r.Scenario.Name + ".yaml"
		steps = fmt.Sprintf("persistlab scenarios show %s > %s, then ", r.Scenario.Name, ShellWord(file))
	}
	return fmt.Sprintf("%sadd %s to %s options in %s and persistlab run %s --backend %s",
		steps, option, possessive(backends), ShellWord(file), ShellWord(file), strings.Join(backends, ","))
}

// scenarioFile is the scenario file a run read ("" for a built-in scenario or a merged run).
func scenarioFile(r *results.Results) string {
	args := r.Command
	if len(args) < 3 || args[1] != "run" || strings.HasPrefix(args[2], "-") || slices.Contains(scenario.Builtins(), args[2]) {
		return ""
	}
	return args[2]
}

func possessive(names []string) string {
	var out []string
	for _, n := range names {
		out = append(out, n+"'s")
	}
	return ListAnd(out)
}

// baselineText is a bucket's baseline: "19.5 MiB/s", "1500 IOPS".
func baselineText(u BurstUse) string {
	if u.Unit == "MiB" {
		return fmt.Sprintf("%.1f MiB/s", u.Baseline)
	}
	return fmt.Sprintf("%.0f IOPS", u.Baseline)
}

// secondsText is a time as a reader sizes it: "45 s", "33 min", "1.6 h", "4.8 days".
func secondsText(s float64) string {
	switch {
	case math.IsInf(s, 1):
		return "forever"
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 2*3600:
		return fmt.Sprintf("%.0f min", s/60)
	case s < 48*3600:
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.1f days", s/86400)
}

// shareText is a share as a percentage, to two digits where under 1%.
func shareText(v float64) string {
	if v < 0.01 {
		return fmt.Sprintf("%.2g%%", 100*v)
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

// writeBurstTable shows each burst bucket's use, from which the answer's caveats follow.
func writeBurstTable(w io.Writer, r *results.Results) {
	uses := BurstUses(r)
	if len(uses) == 0 {
		return
	}
	fmt.Fprintln(w, "\nburst credits, sampled during each run (drained: how much longer the same I/O takes at least on the baseline alone)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\tbucket\tbaseline\truns\tran dry\tlowest left\tspent\tin\tunits/s\tdrained\tfull bucket lasts\t")
	for _, u := range uses {
		spent, in, rate, drained, lasts := "-", "-", "-", "-", "-"
		if u.Seconds > 0 {
			spent, in, rate, lasts = shareText(u.Spent/u.Bucket), secondsText(u.Seconds), fmt.Sprintf("%.1f", u.Billed/u.Seconds), secondsText(u.Lasts())
			drained = fmt.Sprintf("%.1fx", u.Slowdown)
			if u.Slowdown < 1 {
				drained = "under it"
			}
		}
		fmt.Fprintf(tw, "%s\t%.3g %s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", u.Backend, u.Bucket, u.Unit, baselineText(u), u.Cells, u.Drained,
			shareText(max(0, u.LeastLeft)), spent, in, rate, drained, lasts)
	}
	tw.Flush()
}
