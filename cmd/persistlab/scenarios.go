package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

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
	fmt.Fprintln(tw, "NAME\tSEED\tBACKENDS\tVUS\tDURATION\tREPEAT\tTITLE")
	for _, name := range scenario.Builtins() {
		s, err := scenario.Load(name)
		if err != nil {
			return err
		}
		var backends []string
		for _, b := range s.Backends {
			backends = append(backends, b.ID())
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%d\t%s\n", s.Name, s.Seed, backends, s.Sweep.VUs.Text, time.Duration(s.Duration), s.Repeat, s.Title)
	}
	return tw.Flush()
}
