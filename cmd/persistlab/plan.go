package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"persistlab/runner"
	"persistlab/scenario"
)

// writePlan says, before a run starts, how many cells it runs and about how long it takes (the
// scenario run beside it first), and for a long run how to shorten it.
func writePlan(w io.Writer, plan, besidePlan *scenario.Plan, name string, o scenario.Overrides) error {
	var total time.Duration
	known := true
	for _, p := range []*scenario.Plan{besidePlan, plan} {
		if p == nil {
			continue
		}
		e, err := runner.EstimatePlan(p)
		if err != nil {
			return err
		}
		if besidePlan != nil {
			fmt.Fprintf(w, "%s: ", p.Spec.Name)
		}
		fmt.Fprintln(w, e)
		total += e.Total()
		known = known && e.Known()
	}
	if known && total <= runner.LongRun {
		return nil
	}
	if !plan.Spec.QuickRun && plan.Shard == nil {
		if quick, derived, err := quickEstimate(name, o); err == nil && (quick.Total() < total || !known) {
			variant := "the scenario's short variant"
			if derived {
				variant = fmt.Sprintf("every point once, for at most %s each", scenario.QuickDuration)
			}
			fmt.Fprintf(w, "a shorter run: --quick, %s (%s)\n", variant, quick.Brief())
			return nil
		}
	}
	hint := "a shorter run: fewer cells with --backend, --sweep or --repeat 1"
	if plan.Spec.Crash != nil {
		hint = "a shorter run: fewer crash runs with --crash N, an earlier --crash-after, or fewer cells with --backend or --sweep"
	}
	if e, err := runner.EstimatePlan(plan); err == nil && e.Timed && plan.Spec.Crash == nil {
		hint += ", or a shorter --duration"
	}
	fmt.Fprintln(w, hint)
	return nil
}

// quickEstimate is the estimate of the scenario name with o and --quick, and whether its quick
// variant is derived (the scenario has no quick section).
func quickEstimate(name string, o scenario.Overrides) (e runner.Estimate, derived bool, err error) {
	spec, err := scenario.Load(name)
	if err != nil {
		return e, false, err
	}
	o.Quick = true
	if err := spec.Apply(o); err != nil {
		return e, false, err
	}
	plan, err := scenario.NewPlan(spec, runner.Known())
	if err != nil {
		return e, false, err
	}
	e, err = runner.EstimatePlan(plan)
	return e, spec.Quick != nil && spec.Quick.Derived, err
}

// writeDryRun prints what run would do, and nothing is run: the plan, its backends and sweep.
func writeDryRun(w io.Writer, plan, besidePlan *scenario.Plan, name string, o scenario.Overrides) error {
	if err := writePlan(w, plan, besidePlan, name, o); err != nil {
		return err
	}
	for _, p := range []*scenario.Plan{besidePlan, plan} {
		if p == nil {
			continue
		}
		var backends []string
		for _, b := range p.Spec.Backends {
			backends = append(backends, b.ID())
		}
		fmt.Fprintf(w, "%s: backends %s", p.Spec.Name, strings.Join(backends, ", "))
		if len(p.Spec.Sweep) > 0 {
			fmt.Fprintf(w, "; sweep %s", sweepSummary(p.Spec.Sweep))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "nothing was run (--dry-run)")
	return nil
}
