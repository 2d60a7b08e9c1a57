package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"

	"persistlab/scenario"
)

func cmdScenarios(args []string) error {
	if len(args) == 2 && args[0] == "show" {
		s, err := scenario.Load(args[1])
		if err != nil {
			return err
		}
		return yaml.NewEncoder(os.Stdout).Encode(s)
	}
	if len(args) != 0 {
		return fmt.Errorf("want no arguments, or: show NAME")
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
