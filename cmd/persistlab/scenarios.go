package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"persistlab/internal/provenance/scenarios"
	"persistlab/scenario"
)

func cmdScenarios(args []string) error {
	if len(args) > 0 && args[0] == "show" {
		return cmdScenariosShow(args[1:], os.Stdout)
	}
	rest, err := parseInterspersed(newFlags("scenarios"), args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("want no arguments, or: show NAME [--provenance]")
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSEED\tWORKLOAD\tBACKENDS\tSWEEP\tREPEAT\tTITLE")
	for _, name := range scenario.Builtins() {
		s, err := scenario.Load(name)
		if err != nil {
			return err
		}
		var backends []string
		for _, b := range s.Backends {
			backends = append(backends, b.ID())
		}
		var sweep []string
		for _, a := range s.Sweep {
			sweep = append(sweep, a.Name+"="+a.Text)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%d\t%s\n", s.Name, s.Seed, s.Workload.Type, backends, strings.Join(sweep, " "), s.Repeat, s.Title)
	}
	return tw.Flush()
}

// cmdScenariosShow prints a scenario as YAML, or with --provenance where each figure its backends
// and workload run with comes from, and which of them are calibration for the scenario's seed.
func cmdScenariosShow(args []string, w io.Writer) error {
	fs := newFlags("scenarios show")
	prov := fs.Bool("provenance", false, "the model and app figures each backend runs with, published, assumed or fitted, and which are calibration for the seed's tables")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(names) != 1 {
		return fmt.Errorf("want: show NAME [--provenance]")
	}
	s, err := scenario.Load(names[0])
	if err != nil {
		return err
	}
	if !*prov {
		return yaml.NewEncoder(w).Encode(s)
	}
	p, err := scenarios.ForScenario(s)
	if err != nil {
		return err
	}
	return p.Print(w)
}
