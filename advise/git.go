package advise

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"persistlab/lab"
	"persistlab/lab/volume"
	"persistlab/lib/readfile"
	"persistlab/param"
	"persistlab/results"
	"persistlab/scenario"
)

// Kinds of apps: one that serves HTTP requests (its rate in requests/s), or seed 004's crawler
// committing each change to git (its rate in changes/s).
const (
	KindRequests = ""
	KindChanges  = "changes"
)

// GitLatencyMetric is the latency a git ranking shows where no requirement names one.
const GitLatencyMetric = "change_p95_ms"

// PaceMetric is a changes app's pace: what it sustains at the rate, the page cache's write-back
// counted (gitcommit's sustained_per_s, shown and judged under the name users know).
const PaceMetric = "changes_per_s"

// Git's variants of core.fsync offered on every volume: git's own default (no loose object, index
// or ref synced), and objects and refs synced with each git init made durable.
var gitFsyncVariants = []struct{ suffix, what string }{
	{"git", "git's defaults (core.fsync unset: loose objects, the index and refs are not synced)"},
	{"fsync", "core.fsync=committed and each git init synced (objects and refs durable at every commit)"},
}

// gitFsyncParams are the workload parameters of a variant.
func gitFsyncParams(suffix string) map[string]string {
	if suffix == "fsync" {
		return map[string]string{"fsync": "committed", "init_fsync": "true"}
	}
	return map[string]string{"fsync": "default", "init_fsync": "false"}
}

// gitVolumeTypes are the block volumes offered for git on a VM of their cloud, cheapest SSD first
// (it runs the crash runs of its fsync variant). Dominated says why a type is only run when named:
// on a c4.large, gp3 of a size costs less than gp2 ($0.08 against $0.10 per GB-month) and its
// published limits are at least gp2's, and io1 costs what io2 does with no higher limits (persistlab
// lab model volume; the instance caps all at 4,000 IOPS and 62.5 MB/s).
var gitVolumeTypes = []struct{ name, cloud, what, dominated string }{
	{"pd-balanced", "gce", "git's repositories on a Persistent Disk, balanced", ""},
	{"pd-ssd", "gce", "git's repositories on a Persistent Disk, SSD", ""},
	{"pd-standard", "gce", "git's repositories on a Persistent Disk, standard (HDD)", ""},
	{"gp3", "ec2", "git's repositories on an EBS gp3 volume", ""},
	{"io2", "ec2", "git's repositories on an EBS io2 volume", ""},
	{"st1", "ec2", "git's repositories on an EBS st1 volume (throughput-optimized HDD)", ""},
	{"sc1", "ec2", "git's repositories on an EBS sc1 volume (cold HDD)", ""},
	{"gp2", "ec2", "git's repositories on an EBS gp2 volume", "gp3 of the same size costs less and its limits are at least gp2's"},
	{"io1", "ec2", "git's repositories on an EBS io1 volume", "io2 costs the same and its limits are at least io1's"},
}

// AssumedUnitsPerChange are a volume's billed write units per git change, for sizing a volume
// before anything is measured, rounded up from what git wrote on this lab: with git's defaults 3.6
// units of 256 KiB per change on io1 and gp2 (docs/runs/ebs-git-def3e16), with core.fsync=committed
// 9.6 on gp3 and 9.3 on io2 at 20 changes/s (synced writes do not merge: docs/runs/advise-git-dba532f);
// on HDD 5.6 (st1) and 7.3 (sc1) units of 1 MiB with git's defaults (def3e16), where every small
// write costs a whole unit of throughput. Each row shows what it measured (volume_write_units).
const (
	AssumedUnitsPerChangeSSD      = 4
	AssumedUnitsPerChangeSSDFsync = 10
	AssumedUnitsPerChangeHDD      = 8
)

// DryCreditScale shrinks a credit bucket to less than one I/O (volume.MinCreditScale): the volume a
// crawler running around the clock has, its burst long spent. A new volume's burst is a transient
// a 24/7 crawler leaves within hours.
const DryCreditScale = "1e-9"

// gitCandidates are the designs for seed 004's crawler on platform p at rate changes/s, with
// repositories taking dbBytes; maxUSD (0: none) bounds a volume's size: a type whose sustaining size
// alone breaks the budget is measured at its smallest size instead, saying so.
func gitCandidates(p Platform, rate float64, dbBytes int64, maxUSD float64) []Candidate {
	local := Candidate{Name: "local", Backend: "local", What: "git's repositories on the instance's own disk: everything on it is lost with the instance",
		Params: gitFsyncParams("git")}
	switch p.Kind {
	case "ec2":
		local.Excluded = "a " + p.Instance + " has no instance store (EBS only)"
	case "cloudrun":
		local.What = "git's repositories on Cloud Run's in-memory file system (counted in its memory): everything on it is lost with the instance"
	}
	out := []Candidate{local,
		// gcsfuse's semantics page (cloud.google.com/storage/docs/gcsfuse-file-semantics, as
		// recorded, not re-read here): a rename on a bucket without hierarchical namespace is a
		// copy and a delete, not atomic; git commits by renaming lock files over refs and the index.
		{Name: "gcsfuse", Backend: "gcsfuse", Bucket: BucketData, What: "git's repositories on a Cloud Storage FUSE mount",
			Excluded: "git makes each commit by renaming lock files over its refs and index, which gcsfuse does as a copy and a delete, not atomically: not measured here"},
		{Name: "litestream", Backend: "litestream", Bucket: BucketReplica, What: "a SQLite database replicated by Litestream", Excluded: "Litestream replicates one SQLite database; git keeps none"},
	}
	for _, t := range gitVolumeTypes {
		base := Candidate{Name: t.name, Backend: "volume", What: t.what, Excluded: volumeExcluded(p, t.cloud)}
		if base.Excluded != "" {
			out = append(out, base)
			continue
		}
		// Each fsync setting sized for itself: synced writes do not merge.
		for _, v := range gitFsyncVariants {
			c := base
			c.Params = gitFsyncParams(v.suffix)
			spec, note := sizeGitVolume(t.name, p.Instance, dbBytes, 2*rate*unitsPerChange(t.name, c.Params), c.Params, maxUSD)
			c.Volume, c.Sizing, c.Dominated = &spec, note, t.dominated
			c.Options = map[string]string{"type": spec.Type, "size": fmt.Sprintf("%dGiB", spec.SizeBytes>>30), "instance": p.Instance}
			if spec.ProvisionedIOPS > 0 {
				c.Options["iops"] = fmt.Sprintf("%.0f", spec.ProvisionedIOPS)
				c.What += fmt.Sprintf(" with %.0f IOPS", spec.ProvisionedIOPS)
			}
			if l := spec.Limits(); l.CreditIOs > 0 || l.CreditMiB > 0 {
				c.Options["credit_scale"] = DryCreditScale
				c.What += ", its burst credits spent"
			}
			c.What += fmt.Sprintf(", %d GiB; %s", spec.SizeBytes>>30, v.what)
			c.Name = fmt.Sprintf("%s-%dg-%s", t.name, spec.SizeBytes>>30, v.suffix)
			out = append(out, c)
		}
	}
	return append(out, Candidate{Name: "cloud-sql", Backend: "mysql", What: "a managed MySQL server (Cloud SQL, RDS)",
		Excluded: "git keeps its repositories in files: a MySQL server serves only an app that speaks MySQL"})
}

func unitsPerChange(typ string, params map[string]string) float64 {
	switch {
	case (volume.Spec{Type: typ}).Limits().HDD:
		return AssumedUnitsPerChangeHDD
	case params["fsync"] != "" && params["fsync"] != "default" && params["fsync"] != "none":
		return AssumedUnitsPerChangeSSDFsync
	}
	return AssumedUnitsPerChangeSSD
}

// sizeGitVolume is the smallest volume of the type on the instance that holds the repositories
// twice over and sustains units write units a second without credits; where no size does, or the
// size that would costs more than maxUSD, the type's smallest size, with a note saying why.
func sizeGitVolume(typ, instance string, dbBytes int64, units float64, params map[string]string, maxUSD float64) (volume.Spec, string) {
	s := SizeVolume(typ, dbBytes, units)
	s.Instance = instance
	smallest := func() volume.Spec {
		minGiB, _ := volume.SizeRange(typ)
		t := volume.Spec{Type: typ, Instance: instance, SizeBytes: max(int64(minGiB), int64(MinVolumeGiB), (2*dbBytes+(1<<30)-1)>>30) << 30}
		if typ == "io2" || typ == "io1" {
			t.ProvisionedIOPS = volume.IOMinIOPS
		}
		return t
	}
	if got := sustainedIOPS(s); got < units {
		small := smallest()
		why := fmt.Sprintf("no %s size sustains %.0f write units/s (twice the rate at an assumed %d per change)", typ, units, int(unitsPerChange(typ, params)))
		if capped := s.Limits().Instance; capped.Name != "" && capped.Name != "none" {
			why += fmt.Sprintf(" on a %s: at most %.0f; a larger volume buys nothing", capped.Name, got)
		}
		return small, why + "; measured at its smallest size"
	}
	if usd, _ := s.MonthlyUSD(); maxUSD > 0 && usd > maxUSD {
		small := smallest()
		if cheaper, _ := small.MonthlyUSD(); cheaper < usd {
			return small, fmt.Sprintf("the %s that would sustain %.0f write units/s costs $%.2f a month, over the budget; measured at its smallest size", volumeSizeText(s), units, usd)
		}
	}
	return s, ""
}

func volumeSizeText(s volume.Spec) string {
	if s.ProvisionedIOPS > 0 {
		return fmt.Sprintf("%d GiB with %.0f IOPS", s.SizeBytes>>30, s.ProvisionedIOPS)
	}
	return fmt.Sprintf("%d GiB", s.SizeBytes>>30)
}

// DirtyExpire is how long this machine's kernel holds a dirty page before writing it back
// (vm.dirty_expire_centisecs; 30 s by default): a git cell shorter than it ends before write-back
// begins, so its timed write-back after the cell is the volume's own time to take the cell's
// changes. Read once, when a git plan first asks, bounded.
var DirtyExpire = sync.OnceValue(readDirtyExpire)

func readDirtyExpire() time.Duration {
	data, err := readfile.Regular("/proc/sys/vm/dirty_expire_centisecs", 64)
	if err != nil {
		return 30 * time.Second
	}
	cs, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || cs < 100 || cs > 60000 {
		return 30 * time.Second
	}
	return time.Duration(cs) * 10 * time.Millisecond
}

// A git plan's fixed costs, assumed like CellStartup: a crash cell's recovery runs git fsck on
// every repository the run made; a prefill makes a repository a change will touch at about the
// pace of git on the emulator with its model off (125 changes/s in docs/runs/ebs-git-def3e16's
// lab-model-off row).
const (
	GitCrashRecovery   = 20 * time.Second
	GitPrefillPerS     = 100
	GitCrashAfterFrom  = 5 * time.Second
	GitCrashAfterSlack = 15 * time.Second // the last crash lands this long after write-back began
	GitMinCell         = 5 * time.Second
)

// gitCrashTo is when the last crash lands: after the kernel began writing back, so that early and
// late crashes differ as ebs-git-crash's do.
func gitCrashTo() time.Duration { return DirtyExpire() + GitCrashAfterSlack }

// GitCellMax is the longest git cell: it ends before the kernel writes anything back.
func GitCellMax() time.Duration { return max(GitMinCell, DirtyExpire()-5*time.Second) }

// MinPaceChanges is the fewest changes a git cell holds where no latency quantile is required: its
// pace rests on them (a cell's edges are one change each).
const MinPaceChanges = 50

// minChanges is the fewest changes a cell at the rate holds for the quantiles the requirements
// name: a quantile q rests on its 10 slowest, so 10/(1-q) changes (200 for p95); a quantile shown
// but not required is marked where a cell holds too few.
func minChanges(reqs []Requirement) float64 {
	least := float64(MinPaceChanges)
	for _, r := range reqs {
		if q, ok := quantileOf(r.Metric); ok {
			least = max(least, math.Ceil(10/(1-q)))
		}
	}
	return least
}

// quantileOf reads the quantile of a latency metric: change_p99_ms is 0.99, p99.9_ms 0.999.
func quantileOf(metric string) (float64, bool) {
	name, ok := strings.CutSuffix(metric, "_ms")
	if !ok {
		return 0, false
	}
	if i := strings.LastIndex(name, "_"); i >= 0 {
		name = name[i+1:]
	}
	digits, ok := strings.CutPrefix(name, "p")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseFloat(digits, 64)
	if err != nil || n <= 0 || n >= 100 {
		return 0, false
	}
	return n / 100, true
}

// assignCrashRuns names, for each volume candidate, the one whose crash runs stand for it: the
// first runnable volume of its fsync variant (the cheapest SSD). Every lab volume type makes a
// flushed write durable the same way, one emulator differing only in limits and service times, so
// what git loses carries from one type to another; each row that borrows it says so.
func assignCrashRuns(cands []Candidate) {
	reps := map[string]string{}
	for i, c := range cands {
		if c.Backend != "volume" || !c.runnable() {
			continue
		}
		key := c.Params["fsync"] + "/" + c.Params["init_fsync"]
		if rep, ok := reps[key]; ok {
			cands[i].CrashFrom = rep
		} else {
			reps[key] = c.Name
		}
	}
}

// sizeGit sizes a git plan's cells to the budget: the crash runs first, once per crash group,
// then two cells per candidate (at the rate and at twice it), each a prefill, the paced loop for
// the cell's length and its write-back, estimated at twice the cell on HDD (its cap: a dry HDD
// falls behind) and a quarter of it elsewhere (assumed; gp3 took 0.15 s after a 25 s cell at
// 5 changes/s on this lab).
func (p *Plan) sizeGit(budget time.Duration) error {
	groups := len(p.CrashRuns())
	crash := time.Duration(groups*p.Crashes) * (CellStartup + (GitCrashAfterFrom+gitCrashTo())/2 + GitCrashRecovery)
	least := max(GitMinCell, time.Duration(math.Ceil(minChanges(p.Requirements)/p.Rate))*time.Second)
	total := func(t time.Duration) time.Duration {
		prefill := time.Duration(math.Ceil(2*p.Rate*t.Seconds()/GitPrefillPerS)) * time.Second
		sum := crash
		for _, c := range p.Runnable() {
			writeBack := t / 4
			if c.Volume != nil && c.Volume.Limits().HDD {
				writeBack = 2 * t
			}
			sum += 2 * (CellStartup + prefill + t + writeBack)
		}
		return sum
	}
	if least > GitCellMax() {
		return &param.FieldError{Field: "--rate", Value: rateText(p.Rate), Allowed: fmt.Sprintf(
			"at least %s changes/s: a git cell ends before the kernel writes back (%s here) and must hold %.0f changes for the quantiles required", rateText(minChanges(p.Requirements)/GitCellMax().Seconds()), DirtyExpire(), minChanges(p.Requirements))}
	}
	if need := total(least); need > budget {
		return &param.FieldError{Field: "--time", Value: budget.String(), Allowed: fmt.Sprintf(
			"at least %s for %d crash runs on each of %d fsync settings and cells of %s (%.0f changes at %s/s) on %d candidates; or fewer candidates with --candidates, fewer crash runs with --crashes",
			(need + time.Minute - 1).Truncate(time.Minute), p.Crashes, groups, least, minChanges(p.Requirements), rateText(p.Rate), len(p.Runnable()))}
	}
	t := GitCellMax()
	for t > least && total(t) > budget {
		t -= time.Second
	}
	p.Duration, p.estimate = t, total(t)
	return nil
}

// CrashRuns are the candidates whose crash runs run: each stands for the candidates that name it
// in CrashFrom.
func (p *Plan) CrashRuns() []Candidate {
	if p.Crashes == 0 {
		return nil
	}
	var out []Candidate
	for _, c := range p.Runnable() {
		if c.CrashFrom == "" {
			out = append(out, c)
		}
	}
	return out
}

// FailsCrash says whether crash figures already fail a crash requirement: a git candidate whose
// crash runs fail one (or whose group's do) runs no steady cells.
func (p *Plan) FailsCrash(f Figures) bool {
	for _, r := range p.Requirements {
		if r.Where != Crash {
			continue
		}
		if x, ok := f.Value(r); ok && !r.Holds(x) {
			return true
		}
	}
	return false
}

// gitSpec is a git candidate's scenario: a paced loop at the rate and twice it, each for the
// cell's length after a prefill of what it will touch, its write-back timed; or crash runs at the
// rate from empty.
func (p *Plan) gitSpec(c Candidate, kind string) *scenario.Spec {
	w := scenario.Workload{Type: p.App.Workload.Type, Params: map[string]string{}, Sections: p.App.Workload.Sections, Dir: p.App.Workload.Dir}
	for k, v := range p.App.Workload.Params {
		w.Params[k] = v
	}
	for k, v := range c.Params {
		w.Params[k] = v
	}
	delete(w.Params, "rate")
	s := &scenario.Spec{
		Name:     "advise-" + c.Name + "-" + kind,
		Title:    fmt.Sprintf("advise: %s, %s at %s changes/s on %s", c.Name, p.App.Name, rateText(p.Rate), p.Platform),
		Workload: w,
		Backends: []scenario.BackendSpec{{Name: c.Backend, Label: c.Name, Options: c.Options}},
		Repeat:   1,
	}
	if kind == "crash" {
		limit := gitCrashTo() + 30*time.Second
		w.Params["time_limit"] = limit.String()
		w.Params["changes"] = maxChanges(p.Rate, limit)
		w.Params["prefill"], w.Params["writeback"] = "none", "false"
		s.Sweep = scenario.Sweep{{Name: "rate", Text: rateText(p.Rate)}}
		s.Crash = &scenario.Crash{Count: p.Crashes, After: scenario.DurRange{From: GitCrashAfterFrom, To: gitCrashTo()}, Seed: 1}
		return s
	}
	w.Params["time_limit"] = p.Duration.String()
	w.Params["changes"] = maxChanges(2*p.Rate, p.Duration)
	w.Params["prefill"], w.Params["writeback"] = "touched", "true"
	s.Sweep = scenario.Sweep{{Name: "rate", Text: rateText(p.Rate) + "," + rateText(2*p.Rate)}}
	return s
}

// maxChanges is the most changes a paced loop makes in a time limit, as a plan's length: the time
// limit ends the cell, and the plan bounds what the target must hold.
func maxChanges(rate float64, limit time.Duration) string {
	return strconv.FormatFloat(math.Ceil(rate*limit.Seconds())+1, 'f', 0, 64)
}

// KeepsUp is the requirement a changes app's rate implies: the sustained pace at least the rate, less what a
// cell's edges take (MinServedShare).
func KeepsUp(rate float64, metrics map[string]string) (Requirement, error) {
	r, err := ParseRequirement(fmt.Sprintf("%s >= %s", PaceMetric, strconv.FormatFloat(MinServedShare*rate, 'g', 6, 64)), metrics)
	if err != nil {
		return r, err
	}
	r.Text = fmt.Sprintf("%s >= %s (%.0f%% of %s/s)", PaceMetric, rateText(MinServedShare*rate), 100*MinServedShare, rateText(rate))
	return r, nil
}

// gitFigures reads a git row's figures: the pace judged is the sustained one; a latency is left
// unjudged where the page cache was still taking writes after the cell (the volume fell behind,
// which the loop's latencies do not see) or where too few changes were made for its quantile.
func (p *Plan) gitFigures(into map[string]float64, rate float64) []string {
	var notes []string
	if achieved, ok := into[PaceMetric]; ok {
		into["achieved_per_s"] = achieved
	}
	if s, ok := into["sustained_per_s"]; ok {
		into[PaceMetric] = s
	}
	var lats []string
	for k := range into {
		if _, ok := quantileOf(k); ok {
			lats = append(lats, k)
		}
	}
	slices.Sort(lats)
	if w, ok := into["writeback_s"]; ok && w >= 2*p.Duration.Seconds()*0.99 {
		notes = append(notes, fmt.Sprintf("at %s/s the write-back was cut off at twice the cell (%.0f s): %.1f %s/s is an upper bound", rateText(rate), w, into[PaceMetric], "changes"))
	}
	if w, ok := into["writeback_s"]; ok && w > p.Duration.Seconds() {
		for _, k := range lats {
			delete(into, k)
		}
		notes = append(notes, fmt.Sprintf("at %s/s the write-back after a %s cell took %.1f s: the volume fell behind and the page cache was still absorbing writes, so its latencies are not judged", rateText(rate), p.Duration, w))
		return notes
	}
	shown := latencyMetric(p.Requirements, GitLatencyMetric)
	if n, ok := into["changes"]; ok {
		for _, k := range lats {
			q, _ := quantileOf(k)
			if n < math.Ceil(10/(1-q)) {
				delete(into, k)
				if k == shown {
					notes = append(notes, fmt.Sprintf("at %s/s %.0f changes, too few to tell a %s (at least %.0f)", rateText(rate), n, strings.TrimSuffix(k, "_ms"), math.Ceil(10/(1-q))))
				}
			}
		}
	}
	return notes
}

// gitVolumeNotes say what a volume's cells at the rate wrote per change, against the sizing's
// assumption, and, for a volume with burst credits, how long a new one's burst would last at the
// rate: computed from the published bucket and the measured units, never measured or judged (the
// row is the volume after it).
func (p *Plan) gitVolumeNotes(c Candidate, steady *results.Results) []string {
	var units, changes float64
	atLeast := ""
	for _, cell := range steady.Cells {
		if cell.Backend != c.Name || cell.Failure != "" || results.ParamNumber(cell.Resolved["rate"]) != p.Rate {
			continue
		}
		units += cell.BackendStats[lab.VolumeWriteUnits]
		changes += cell.M("changes")
		if strings.HasPrefix(cell.Facts["writeback"], "capped") {
			atLeast = "at least " // the rest was written after the cap, uncounted
		}
	}
	if changes == 0 || units == 0 {
		return nil
	}
	per := units / changes
	assumed := unitsPerChange(c.Volume.Type, c.Params)
	notes := []string{fmt.Sprintf("at %s/s it wrote %s%.1f billed units per change (its size assumed %.0f)", rateText(p.Rate), atLeast, per, assumed)}
	l := c.Volume.Limits() // the published bucket: the run's was dry
	use := p.Rate * per
	var bucket, base float64
	var what string
	switch {
	case l.CreditIOs > 0:
		bucket, base, what = l.CreditIOs, l.BaseIOPS, fmt.Sprintf("%.1f million I/O credits", l.CreditIOs/1e6)
		use = min(use, l.BurstIOPS)
	case l.CreditMiB > 0:
		bucket, base, what = l.CreditMiB, l.BaseMiBps, fmt.Sprintf("%.0f GiB of throughput credit", l.CreditMiB/1024)
		use = min(use, l.BurstMiBps)
	default:
		return notes
	}
	if use <= base {
		return append(notes, fmt.Sprintf("a new volume's burst (%s) never drains at %s/s: its baseline covers the %.1f units/s it used", what, rateText(p.Rate), use))
	}
	hours := bucket / (use - base) / 3600
	return append(notes, fmt.Sprintf("a new volume would run on its burst (%s) for about %s at %s/s before slowing to this row's pace (computed from the published bucket and this run's units per change; not measured)",
		what, hoursText(hours), rateText(p.Rate)))
}

func hoursText(h float64) string {
	switch {
	case h < 1:
		return fmt.Sprintf("%.0f minutes", h*60)
	case h < 48:
		return fmt.Sprintf("%.1f hours", h)
	}
	return fmt.Sprintf("%.0f days", h/24)
}
