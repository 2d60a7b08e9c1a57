package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"persistlab/param"
	"persistlab/report"
	"persistlab/results"
	"persistlab/workload"
)

// formats are what --format may print on standard output.
var formats = []string{"text", "json", "markdown"}

// exportFlags are the flags report and run share for what they print and the files they write
// beside the results file: --format, --samples and --openmetrics.
type exportFlags struct {
	format      string
	samples     string
	openMetrics string
}

func addExportFlags(fs *flag.FlagSet) *exportFlags {
	e := &exportFlags{}
	fs.StringVar(&e.format, "format", "text", "what standard output gets: text (the tables), json (a summary for scripts: docs/results-schema.md, \"report --format json\") or markdown (the tables for a pull request's comment)")
	fs.StringVar(&e.samples, "samples", "", "also write every cell's metrics as newline-delimited JSON to this file, one {metric, value, unit, labels, timestamp} per line (PerfKitBenchmarker's samples)")
	fs.StringVar(&e.openMetrics, "openmetrics", "", "also write each row's medians as OpenMetrics text to this file, a gauge per metric, for a CI dashboard")
	return e
}

// check refuses a --format it does not know.
func (e *exportFlags) check() error {
	for _, f := range formats {
		if e.format == f {
			return nil
		}
	}
	return &param.FieldError{Field: "--format", Value: e.format, Allowed: "text, json or markdown"}
}

// text says whether standard output gets the tables as text: what else a command prints (where
// its files went) may go there too; with json or markdown it goes to standard error.
func (e *exportFlags) text() bool { return e.format == "text" }

// output is a file a flag names and how to write it.
type output struct {
	flag, path string
	write      func(w io.Writer, r *results.Results) error
}

// files are the export files the flags name.
func (e *exportFlags) files() []output {
	return []output{
		{"--samples", e.samples, report.WriteSamples},
		{"--openmetrics", e.openMetrics, func(w io.Writer, r *results.Results) error { return report.WriteOpenMetrics(w, r, metricHelp(r)) }},
	}
}

// checkOutputs resolves each output's path by results.OutputPath's rules (an existing file only
// with force) and refuses one that names a file already taken: the results file being read or
// written, or another output's.
func checkOutputs(outs []output, force bool, taken map[string]string) ([]output, error) {
	var kept []output
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		for flag, path := range taken {
			if sameFile(o.path, path) {
				return nil, fmt.Errorf("%s %s is the file %s names: want another path for the output", o.flag, o.path, flag)
			}
		}
		var err error
		if o.path, err = results.OutputPath(o.flag, o.path, force); err != nil {
			return nil, err
		}
		for flag, path := range taken {
			if abs, err := filepath.Abs(path); err == nil && abs == o.path { // a results file not written yet
				return nil, fmt.Errorf("%s %s is the file %s names: want another path for the output", o.flag, o.path, flag)
			}
		}
		for _, other := range kept {
			if other.path == o.path {
				return nil, fmt.Errorf("%s and %s name one file, %s: want a file each", other.flag, o.flag, o.path)
			}
		}
		kept = append(kept, o)
	}
	return kept, nil
}

// writeOutputs writes each output whole (writeWhole) and says where, on said.
func writeOutputs(outs []output, r *results.Results, said io.Writer) error {
	for _, o := range outs {
		if err := writeWhole(o.path, func(w io.Writer) error { return o.write(w, r) }); err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		fmt.Fprintf(said, "wrote %s\n", o.path)
	}
	return nil
}

// writeFormat prints r on w as --format asks.
func (e *exportFlags) writeFormat(w io.Writer, r *results.Results, view report.View) error {
	switch e.format {
	case "json":
		return report.WriteSummaryJSON(w, r)
	case "markdown":
		return report.WriteMarkdownView(w, r, view)
	}
	report.WriteView(w, r, view)
	return nil
}

// said is where a command says what else it did (files written): standard output beside text,
// standard error beside a summary or Markdown, which scripts read whole.
func (e *exportFlags) said() io.Writer {
	if e.text() {
		return os.Stdout
	}
	return os.Stderr
}

// declareUnits fills the units of r's metrics its file lacks (files of the first format record
// none) from its workload's declarations.
func declareUnits(r *results.Results) {
	info, err := workload.Lookup(r.WorkloadType())
	if err != nil {
		return
	}
	for _, m := range info.Metrics {
		if r.Units[m.Name] == "" && m.Unit != "" {
			if r.Units == nil {
				r.Units = map[string]string{}
			}
			r.Units[m.Name] = m.Unit
		}
	}
}

// metricHelp is what each metric of r's workload is, as the workload declares it.
func metricHelp(r *results.Results) map[string]string {
	help := map[string]string{}
	if info, err := workload.Lookup(r.WorkloadType()); err == nil {
		for _, m := range info.Metrics {
			help[m.Name] = m.Help
		}
	}
	return help
}
