package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"persistlab/lab"
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
	// Lasted counts the cells that leaned on their burst (drew on credits for at least
	// BurstMatters of what the baseline gives in their time) and never ran dry; Drained, those
	// that ran dry.
	Lasted, Drained int
	// Of the undrained cell that drew the largest share of its bucket: its sampled seconds, the
	// most credits it had drawn at once (its starting balance less its lowest) and how far in,
	// and the I/O units it was billed.
	Seconds, Drawn, DrawnAt, Billed float64
	// Of the first drained cell: how far into its sampled time the balance ran dry.
	DrainedAt, DrainedOf float64
	// LeastLeft is the lowest balance any cell reached, as a share of the bucket.
	LeastLeft float64
}

// BurstMatters is the credit a cell must draw, as a share of what its baseline gives over its
// time, before its figures count as its burst's rather than its baseline's: a cell that drew
// less asked for more than the baseline only for moments. An assumed bound; what draining does
// to such a cell is not: throttled I/O merges less and costs more units (a drained sc1 quick
// run of ebs-git went from 57.6 to 2.5 changes/s).
const BurstMatters = 0.01

// dryShare is the balance, as a share of the bucket, under which a bucket counts as run dry.
const dryShare = 0.01

// Lasts is how long a full bucket lasts at the pace the cell drew on it (+Inf if it drew none).
func (u BurstUse) Lasts() float64 {
	if u.Drawn <= 0 || u.DrawnAt <= 0 {
		return math.Inf(1)
	}
	return u.Bucket / (u.Drawn / u.DrawnAt)
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
			u.Unit, u.Bucket, u.Baseline, key = "I/O", m.CreditIOs, m.BaseIOPS, lab.VolumeCreditIOs
		case m.CreditMiB > 0:
			u.Unit, u.Bucket, u.Baseline, key = "MiB", m.CreditMiB, m.BaseMiBps, lab.VolumeCreditMiB
		default:
			continue
		}
		for _, c := range r.Cells {
			balance := c.Series[lab.StatsSeries(key)]
			if c.Backend != b || c.Failure != "" || len(balance) < 2 {
				continue
			}
			u.Cells++
			first, last := balance[0], balance[len(balance)-1]
			lowest := first
			for _, p := range balance {
				u.LeastLeft = min(u.LeastLeft, p.V/u.Bucket)
				if p.V < lowest.V {
					lowest = p
				}
			}
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
			drawn := first.V - lowest.V
			if u.Baseline > 0 && drawn >= BurstMatters*u.Baseline*seconds {
				u.Lasted++
			}
			if u.Seconds == 0 || drawn/u.Bucket > u.Drawn/u.Bucket {
				billed := grown(c.Series[lab.StatsSeries(lab.VolumeReadUnits)]) + grown(c.Series[lab.StatsSeries(lab.VolumeWriteUnits)])
				u.Seconds, u.Drawn, u.DrawnAt, u.Billed = seconds, drawn, lowest.T-first.T, billed
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

// burstCaveats say which backends' figures rest on a burst they never used up, how much of the
// bucket each drew and how long a full one lasts at that pace; then how to measure them drained:
// a like volume of the run that was, or a smaller bucket (credit_scale).
func burstCaveats(r *results.Results) []string {
	uses := BurstUses(r)
	var out []string
	var settle []BurstUse
	for _, u := range uses {
		if u.Lasted == 0 {
			continue
		}
		if twin := drainedTwin(r, uses, u); twin != "" {
			out = append(out, burstSentence([]BurstUse{u})+"; "+twin+", the same volume drained, measures it")
			continue
		}
		settle = append(settle, u)
	}
	if len(settle) == 0 {
		return out
	}
	out = append(out, burstSentence(settle))
	scale := 1.0
	var names []string
	for _, u := range settle {
		scale = min(scale, creditScaleToDrain(u))
		names = append(names, u.Backend)
	}
	return append(out, fmt.Sprintf("to measure %s drained: %s", ListAnd(names), withOption(r, names, fmt.Sprintf("credit_scale: %q", trimScale(scale)))))
}

// burstSentence says that backends never used up their burst credits, with what each drew.
func burstSentence(uses []BurstUse) string {
	var names, drawn, runs, lasts, baselines []string
	for _, u := range uses {
		name := u.Backend
		if u.Lasted < u.Cells {
			name += fmt.Sprintf(" (in %d of its %d runs)", u.Lasted, u.Cells)
		}
		names = append(names, name)
		drawn = append(drawn, shareText(u.Drawn/u.Bucket))
		runs = append(runs, secondsText(u.Seconds))
		lasts = append(lasts, secondsText(u.Lasts()))
		baselines = append(baselines, baselineText(u))
	}
	const unmeasured = "and throttled I/O merges less: how much slower that is, this run does not measure"
	if len(uses) == 1 {
		return fmt.Sprintf("%s never used up its burst credits (at most %s of its bucket drawn, in a run of %s; a full bucket lasts %s at that pace): its figures are its burst's; drained, it is held to its %s baseline, which this run passed at times, %s",
			names[0], drawn[0], runs[0], lasts[0], baselines[0], unmeasured)
	}
	return fmt.Sprintf("%s never used up their burst credits (at most %s of their buckets drawn, in runs of %s; full buckets last %s at those paces): their figures are their bursts'; drained, each is held to its baseline (%s), which these runs passed at times, %s",
		ListAnd(names), ListAnd(drawn), ListAnd(runs), ListAnd(lasts), ListAnd(baselines), unmeasured)
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

// creditScaleToDrain is a credit_scale whose bucket the cell would have drawn dry in half the
// time it took to draw what it did: half the share it drew, to one significant digit, rounded
// down.
func creditScaleToDrain(u BurstUse) float64 {
	share := u.Drawn / u.Bucket / 2
	if share <= 0 {
		return 1e-6
	}
	p := math.Pow(10, math.Floor(math.Log10(share)))
	return max(1e-9, math.Floor(share/p+1e-9)*p) // the epsilon keeps 7e-5/1e-5 at 7
}

// trimScale writes a credit_scale of one significant digit as a plain decimal.
func trimScale(v float64) string {
	return strconv.FormatFloat(v, 'f', max(0, -int(math.Floor(math.Log10(v)))), 64)
}

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
	if len(args) < 3 || args[1] != "run" {
		return ""
	}
	for _, a := range args[2:] { // flags may come first (run --quick my.yaml)
		if !strings.HasPrefix(a, "-") && (strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml")) {
			return a
		}
	}
	if strings.HasPrefix(args[2], "-") || slices.Contains(scenario.Builtins(), args[2]) {
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

// shareText is a share as a percentage: whole from 1%, to two significant digits under it.
func shareText(v float64) string {
	p := 100 * v
	switch {
	case p <= 0:
		return "0%"
	case p >= 1:
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.*f%%", 1-int(math.Floor(math.Log10(p))), p)
}

// writeBurstTable shows each burst bucket's use, from which the answer's caveats follow.
func writeBurstTable(w io.Writer, r *results.Results) {
	uses := BurstUses(r)
	if len(uses) == 0 {
		return
	}
	t := Table{Title: "burst credits, sampled during each run (drawn: the most the run had spent at once, of the bucket; lasts: a full bucket at that pace)",
		Columns: []string{"backend", "bucket", "baseline", "runs", "ran dry", "lowest left", "drawn", "in a run of", "units/s billed", "full bucket lasts"}}
	for _, u := range uses {
		drawn, in, rate, lasts := "-", "-", "-", "-"
		if u.Seconds > 0 {
			drawn, in, rate, lasts = shareText(u.Drawn/u.Bucket), secondsText(u.Seconds), fmt.Sprintf("%.1f", u.Billed/u.Seconds), secondsText(u.Lasts())
		}
		t.Rows = append(t.Rows, []string{u.Backend, fmt.Sprintf("%.3g %s", u.Bucket, u.Unit), baselineText(u), fmt.Sprint(u.Cells), fmt.Sprint(u.Drained),
			shareText(max(0, u.LeastLeft)), drawn, in, rate, lasts})
	}
	WriteTable(w, t)
}
