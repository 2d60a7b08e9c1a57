package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"persistlab/backend"
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
// for the whole scenario unless it sets them itself (in workload, a sweep, or a backend entry's
// params: its own value wins). A target no slower than this machine sets nothing.
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
	values := map[string]string{runner.QuotaParam: emu.QuotaText(), runner.PeriodParam: emu.Period.String()}
	own := func(params map[string]string, name string) bool { _, ok := params[name]; return ok }
	scenarioOwn := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		scenarioOwn[name] = own(spec.Workload.Params, name) || spec.Sweep.Has(name)
		if !scenarioOwn[name] {
			spec.Workload.SetParam(name, values[name])
		}
	}
	for _, b := range spec.Backends {
		e := profile.EntryUse{Entry: b.ID()}
		for _, name := range slices.Sorted(maps.Keys(values)) {
			if scenarioOwn[name] || own(b.Params, name) {
				e.Kept = append(e.Kept, name)
			} else {
				e.Took = append(e.Took, name)
			}
		}
		use.Entries = append(use.Entries, e)
	}
	use.Effect = fmt.Sprintf("each instance's CPU limited to %s CPUs per %s period, as the target's (cpu_factor %s, effective_cpus %s)",
		emu.QuotaText(), emu.Period, p.Options()[instance.CPUFactorOption], p.Options()[instance.EffectiveCPUsOption])
	return use, emu, nil
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
		var took []string
		for _, e := range use.Entries {
			if len(e.Took) > 0 {
				took = append(took, e.Entry)
			}
			if len(e.Kept) > 0 {
				fmt.Fprintf(w, "  %s sets %s itself: its own value wins over the profile's\n", e.Entry, strings.Join(e.Kept, ", "))
			}
		}
		if len(took) > 0 {
			fmt.Fprintf(w, "  each instance of %s runs under cpu_quota %s CPUs per cpu_period %s (effective_cpus / cpu_factor): a CFS quota with the shortest period that holds the kernel's least quota of 1 ms, so a request is slowed evenly, a millisecond at a time (--set cpu_period=100ms: the containers' default period instead)\n",
				strings.Join(took, ", "), emu.QuotaText(), emu.Period)
		}
		room := float64(runtime.NumCPU())
		if n, err := strconv.Atoi(spec.Workload.Params[runner.CPUsParam]); err == nil && n > 0 {
			room = float64(n)
		}
		if emu.Quota >= room {
			fmt.Fprintf(w, "  the quota, %s CPUs, is no less than the %g CPUs the instance can use here: it limits nothing, and the run is this machine's\n", emu.QuotaText(), room)
		}
		if emu.CPUs > 1.1 {
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
		fmt.Fprintf(w, "  the scenario burns cpu_per_request %s per request: where that was fitted to a seed's own instance (seed 000's 4.7ms, its Cloud Run vCPU), it is that instance's CPU time already, and the quota slows it again\n", v)
	}
	fmt.Fprintf(w, "  the file system figures (fs_*, fuse_*) are recorded, not emulated\n")
	if h, ok := p.WorstHeldOut(); ok {
		fmt.Fprintf(w, "  its fit predicted the held-out %s within %.1f%%\n", h.Point, 100*math.Abs(h.Error))
	}
}
