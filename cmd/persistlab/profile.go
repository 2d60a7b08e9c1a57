package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/sysinfo"
	"persistlab/lab/instance"
	"persistlab/param"
	"persistlab/profile"
	"persistlab/runner"
	"persistlab/scenario"
)

// useProfile reads the run's profile (flagPath, else the scenario's profile:), applies its
// figures to every backend entry that runs its model and does not set the option itself, and
// says on w what each entry took. It returns nil when there is no profile.
func useProfile(spec *scenario.Spec, flagPath string, w io.Writer) (*profile.Use, error) {
	path, from := flagPath, "--profile"
	if path == "" {
		path, from = spec.ProfilePath(), "the scenario's profile:"
	} else if spec.Profile != "" {
		fmt.Fprintf(w, "--profile %s replaces the scenario's profile: %s\n", flagPath, spec.Profile)
	}
	if path == "" {
		return nil, nil
	}
	p, err := profile.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	if p.Kind == "instance" {
		use, emu, err := applyInstanceProfile(spec, p, path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		writeInstanceUse(w, use, emu, spec)
		return use, nil
	}
	use := spec.ApplyProfile(p, path, func(b scenario.BackendSpec) (bool, string) {
		info, err := backend.Lookup(b.Name)
		if err != nil {
			return false, err.Error()
		}
		for _, f := range p.Figures {
			if _, ok := param.Find(info.Options, f.Option); !ok {
				return false, fmt.Sprintf("backend %s runs no %s model", b.Name, p.Kind)
			}
		}
		if b.Options["endpoint"] != "" {
			return false, "a real bucket (option endpoint): no lab model to replace"
		}
		return true, ""
	})
	writeProfileUse(w, use)
	return use, nil
}

// writeProfileUse says which entries took which of the profile's figures, and which kept their own.
func writeProfileUse(w io.Writer, use *profile.Use) {
	p := use.Profile
	var figures []string
	for _, f := range p.Figures {
		figures = append(figures, f.Option+" "+f.Value)
	}
	var took, skipped []string
	for _, e := range use.Entries {
		switch {
		case e.Skipped != "":
			skipped = append(skipped, e.Entry+" ("+e.Skipped+")")
		case len(e.Took) > 0:
			took = append(took, e.Entry)
		}
	}
	fmt.Fprintf(w, "profile %s: %s figures measured on %s at %s from %s: %s\n", use.Path, p.Kind, p.Measured.Target, p.Measured.When, p.Measured.Machine.Hostname, strings.Join(figures, ", "))
	if len(took) == 0 {
		fmt.Fprintf(w, "  no backend entry takes them: the profile changes nothing in this run\n")
	} else {
		fmt.Fprintf(w, "  they replace the %s model's defaults for %s\n", p.Kind, strings.Join(took, ", "))
	}
	for _, e := range use.Entries {
		if len(e.Kept) > 0 {
			fmt.Fprintf(w, "  %s sets %s itself: its own value wins over the profile's\n", e.Entry, strings.Join(e.Kept, ", "))
		}
		for _, d := range e.Declined {
			fmt.Fprintf(w, "  %s cannot take %s %s, so it keeps its model's own: %s\n", e.Entry, d.Option, p.Options()[d.Option], d.Why)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "  not for %s\n", strings.Join(skipped, "; "))
	}
	if h, ok := p.WorstHeldOut(); ok {
		fmt.Fprintf(w, "  its fit predicted the held-out %s within %.1f%%\n", h.Point, 100*math.Abs(h.Error))
	}
}

// applyInstanceProfile makes each instance of the system under test as slow as the profile's
// target: the runner's cpu_quota (effective_cpus / cpu_factor) and cpu_period (a short one), set
// on each backend entry that can take them. An entry whose cpu_quota the scenario sets (in
// workload, --set, a sweep, or the entry's params) keeps its own limit whole, quota and period:
// the profile's quota with another period is another limit. An entry whose cpu_period alone the
// scenario sets takes the profile's quota per that period, if the kernel takes it. A target no
// slower than this machine sets nothing.
func applyInstanceProfile(spec *scenario.Spec, p *profile.Profile, path string) (*profile.Use, instance.Emulation, error) {
	emu, err := instance.EmulationOf(p.Options())
	if err != nil {
		return nil, emu, fmt.Errorf("profile %s: %w", path, err)
	}
	use := &profile.Use{Path: path, Profile: *p}
	spec.ProfileUsed = use
	if emu.Quota == 0 {
		use.Effect = emu.None
		for _, b := range spec.Backends {
			use.Entries = append(use.Entries, profile.EntryUse{Entry: b.ID(), Skipped: "no CPU limit: " + emu.None})
		}
		return use, emu, nil
	}
	_, fixedQuota := spec.Workload.Params[runner.QuotaParam]
	scenarioQuota := fixedQuota || spec.Sweep.Has(runner.QuotaParam)
	slowdown := slowdownFits(spec, emu)
	var ownPeriods []string
	for i := range spec.Backends {
		b := &spec.Backends[i]
		e := profile.EntryUse{Entry: b.ID()}
		if _, own := b.Params[runner.QuotaParam]; own || scenarioQuota {
			e.Kept = []string{runner.PeriodParam, runner.QuotaParam}
			use.Entries = append(use.Entries, e)
			continue
		}
		if why := cannotTakeCPULimit(*b, path); why != "" {
			e.Skipped = why
			use.Entries = append(use.Entries, e)
			continue
		}
		params := maps.Clone(b.Params) // entries may share a map with another spec
		if params == nil {
			params = map[string]string{}
		}
		if slowdown {
			params[runner.SlowdownParam] = emu.FactorText()
			e.Took = append(e.Took, runner.SlowdownParam)
			b.Params = params
			use.Entries = append(use.Entries, e)
			continue
		}
		params[runner.QuotaParam] = emu.QuotaText()
		e.Took = append(e.Took, runner.QuotaParam)
		period, field := ownPeriod(spec, i)
		switch {
		case period != "":
			if err := checkOwnPeriod(emu, field, period, path); err != nil {
				return nil, emu, err
			}
			fallthrough
		case spec.Sweep.Has(runner.PeriodParam): // the runner checks each swept value
			e.Kept = append(e.Kept, runner.PeriodParam)
			ownPeriods = append(ownPeriods, b.ID())
		default:
			params[runner.PeriodParam] = emu.Period.String()
			e.Took = append(e.Took, runner.PeriodParam)
		}
		b.Params = params
		use.Entries = append(use.Entries, e)
	}
	use.Effect = fmt.Sprintf("each instance's CPU limited to %s CPUs per %s period, as the target's (cpu_factor %s, effective_cpus %s)",
		emu.QuotaText(), emu.Period, p.Options()[instance.CPUFactorOption], p.Options()[instance.EffectiveCPUsOption])
	if slowdown {
		use.Effect = fmt.Sprintf("each instance's pinned CPU slowed %s times by a spinner's cgroup weight (cpu_slowdown), as the target's (cpu_factor %s, effective_cpus %s)",
			emu.FactorText(), p.Options()[instance.CPUFactorOption], p.Options()[instance.EffectiveCPUsOption])
	}
	if len(ownPeriods) > 0 {
		use.Effect += fmt.Sprintf("; %s per its own cpu_period", strings.Join(ownPeriods, ", "))
	}
	var without []string
	for _, e := range use.Entries {
		switch {
		case e.Skipped != "":
			without = append(without, e.Entry+" takes none ("+e.Skipped+")")
		case slices.Contains(e.Kept, runner.QuotaParam):
			without = append(without, e.Entry+" keeps its own cpu_quota")
		}
	}
	if len(without) > 0 {
		use.Effect += "; " + strings.Join(without, "; ")
	}
	return use, emu, nil
}

// slowdownFits says whether the instance profile's slowdown can be a spinner's weight
// (cpu_slowdown), which keeps a slower CPU's latency shape (a request takes about cpu_factor times
// as long alone and back to back), rather than a CFS quota, which gives its CPU time only
// (docs/calibrate.md): the scenario pins one instance to one CPU (cpus: 1) for a target of one
// CPU (effective_cpus rounded), sets no CPU limit or period of its own, this machine has a CPU
// besides for the driver, and cgroups can weigh CPUs.
func slowdownFits(spec *scenario.Spec, emu instance.Emulation) bool {
	if runner.PinnedCPUs(spec.Workload.Params) != 1 || math.Round(emu.CPUs) != 1 || emu.Factor < runner.MinSlowdown || emu.Factor > runner.MaxSlowdown || runtime.NumCPU() < 2 {
		return false
	}
	if v, ok := spec.Workload.Params[runner.InstancesParam]; spec.Instances > 1 || spec.Sweep.Has(runner.InstancesParam) || (ok && v != "1") {
		return false
	}
	for _, knob := range []string{runner.QuotaParam, runner.PeriodParam, runner.SlowdownParam} {
		if _, own := spec.Workload.Params[knob]; own || spec.Sweep.Has(knob) {
			return false
		}
	}
	for _, b := range spec.Backends {
		for _, knob := range []string{runner.QuotaParam, runner.PeriodParam, runner.SlowdownParam, runner.InstancesParam} {
			if _, own := b.Params[knob]; own {
				return false
			}
		}
	}
	return cgroup.CheckCPU() == nil
}

// ownPeriod is the cpu_period the scenario fixes for backend entry i, and where: the entry's
// params, else the workload's (the scenario's or --set's); "" for none.
func ownPeriod(spec *scenario.Spec, i int) (value, field string) {
	if v, ok := spec.Backends[i].Params[runner.PeriodParam]; ok {
		return v, fmt.Sprintf("backends[%d].params.%s", i, runner.PeriodParam)
	}
	if v, ok := spec.Workload.Params[runner.PeriodParam]; ok {
		return v, "workload." + runner.PeriodParam
	}
	return "", ""
}

// checkOwnPeriod refuses a period of the scenario's own under which the profile's quota is less
// than the kernel's least (1 ms per period). A value that is no duration is left to the
// scenario's own check.
func checkOwnPeriod(emu instance.Emulation, field, value, path string) error {
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return nil
	}
	if cgroup.CheckQuota(emu.Quota, d) == nil {
		return nil
	}
	return &param.FieldError{Field: field, Value: value, Allowed: fmt.Sprintf("a period of at least %v with profile %s's cpu_quota of %s CPUs (the kernel takes no CFS quota under %v per period), or none: the profile's own, %v",
		cgroup.ShortestPeriod(emu.Quota), path, emu.QuotaText(), cgroup.MinQuota, emu.Period)}
}

// cpuIsV2 is cgroup.CPUIsV2; tests stand in for a machine of the other version.
var cpuIsV2 = cgroup.CPUIsV2

// cannotTakeCPULimit says why backend entry b cannot run under an instance profile's CPU limit
// ("" if it can): under cgroup v2 a process is in one cgroup only, so a backend that runs its
// instance in a cgroup of its own (a volume with the instance's memory bounded) would lose it.
func cannotTakeCPULimit(b scenario.BackendSpec, path string) string {
	if v2, err := cpuIsV2(); err != nil || !v2 {
		return ""
	}
	dir, err := os.MkdirTemp("", "persistlab-profile-check-")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(dir)
	be, err := backend.New(b.Name, backend.Env{WorkDir: dir, Options: b.Options})
	if err != nil {
		return "" // the run refuses the entry with its own error
	}
	if w, ok := be.(backend.InstanceWrapper); !ok || !w.WrapsInstance() {
		return ""
	}
	return fmt.Sprintf("no CPU limit from profile %s: this backend runs its instance in a cgroup of its own (the instance's memory) and under cgroup v2 a process is in one cgroup only, so its CPU is this machine's (memory: 0 lets it take the limit)", path)
}

// writeInstanceUse says what an instance profile did to the run: the CPU limit each instance
// runs under, the entries that set their own, and what the limit cannot hold.
func writeInstanceUse(w io.Writer, use *profile.Use, emu instance.Emulation, spec *scenario.Spec) {
	p := use.Profile
	opts := p.Options()
	fmt.Fprintf(w, "profile %s: instance figures measured on %s at %s: cpu_factor %s, effective_cpus %s, against %s\n", use.Path, p.Measured.Machine,
		p.Measured.When, opts[instance.CPUFactorOption], opts[instance.EffectiveCPUsOption], p.Reference)
	if emu.Quota == 0 {
		fmt.Fprintf(w, "  no CPU limit: %s\n", emu.None)
	} else {
		var took, slowed []string
		for _, e := range use.Entries {
			switch {
			case slices.Contains(e.Took, runner.SlowdownParam):
				slowed = append(slowed, e.Entry)
			case e.Skipped != "":
				fmt.Fprintf(w, "  %s: %s\n", e.Entry, e.Skipped)
			case slices.Contains(e.Kept, runner.QuotaParam):
				fmt.Fprintf(w, "  %s sets cpu_quota itself: its own CPU limit wins over the profile's, whole (its cpu_quota and cpu_period)\n", e.Entry)
			case slices.Contains(e.Kept, runner.PeriodParam):
				fmt.Fprintf(w, "  %s sets cpu_period itself: it runs under the profile's cpu_quota %s CPUs per its own period\n", e.Entry, emu.QuotaText())
			default:
				took = append(took, e.Entry)
			}
		}
		if len(slowed) > 0 {
			fmt.Fprintf(w, "  each instance of %s runs on its pinned CPU beside a busy spinner whose cgroup weight leaves it 1/%s of the CPU whenever it wants it (cpu_slowdown %s): a CPU-bound request takes about cpu_factor times as long alone and back to back, as on the target; measured (bench/instance, docs/benchmarks.md), medians within 15%% of that and back-to-back p99s 1.5 times longer (--set cpu_period=5ms: a CFS quota instead)\n",
				strings.Join(slowed, ", "), emu.FactorText(), emu.FactorText())
		}
		if len(took) > 0 {
			fmt.Fprintf(w, "  each instance of %s runs under cpu_quota %s CPUs per cpu_period %s (effective_cpus / cpu_factor; the period: 5 ms, longer where a quota under 0.2 CPUs needs it for the kernel's least quota of 1 ms; --set cpu_period=100ms: the containers' default instead)\n",
				strings.Join(took, ", "), emu.QuotaText(), emu.Period)
			fmt.Fprintf(w, "  the quota gives the target's CPU time, not its latency shape: measured (bench/instance, docs/benchmarks.md), a CPU-bound request alone is slowed less than cpu_factor and back to back the p99 runs 1.5-1.6 times longer than a CPU that much slower would take (a scenario that pins its instance to one CPU, cpus: 1, for a target of one CPU gets cpu_slowdown instead)\n")
		}
		room := float64(runtime.NumCPU())
		if n := runner.PinnedCPUs(spec.Workload.Params); n > 0 {
			room = float64(n)
		}
		if len(took) > 0 && emu.Quota >= room {
			fmt.Fprintf(w, "  the quota, %s CPUs, is no less than the %g CPUs the instance can use here: it limits nothing, and the run is this machine's\n", emu.QuotaText(), room)
		}
		if len(took) > 0 && emu.CPUs > 1.1 {
			fmt.Fprintf(w, "  the target has %.3g CPUs' worth: the quota holds its CPU time in all, not each thread's speed, so with fewer requests at once than its CPUs they run up to %.2g times faster here than there\n",
				emu.CPUs, min(emu.Factor, emu.CPUs))
		}
	}
	if r := p.Reference; r != nil {
		if m := sysinfo.Describe(); m.Hostname != r.Hostname || m.CPUModel != r.CPU {
			fmt.Fprintf(w, "  its factors are against %s; this machine is %s (%s): calibrate instance here with the target's probe for factors against this one\n", r, m.Hostname, m.CPUModel)
		}
	}
	if v := spec.Workload.Params["cpu_per_request"]; emu.Quota > 0 && v != "" && v != "0s" && v != "0" {
		fmt.Fprintf(w, "  the scenario burns cpu_per_request %s per request: where that was fitted to a seed's own instance (seed 000's 4.7ms, its Cloud Run vCPU), it is that instance's CPU time already, and the profile slows it again\n", v)
	}
	fmt.Fprintf(w, "  the file system figures (fs_*, fuse_*) are recorded, not emulated\n")
	if h, ok := p.WorstHeldOut(); ok {
		fmt.Fprintf(w, "  its fit predicted the held-out %s within %.1f%%\n", h.Point, 100*math.Abs(h.Error))
	}
}
