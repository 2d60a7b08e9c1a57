package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"

	"persistlab/results"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Parse(pageTemplate))

type pageData struct {
	Title     string
	Status    string
	Started   string
	Tables    string
	ChartData template.JS
	Machine   [][2]string
	Versions  [][2]string
	Scenario  string
	Command   string
}

// WriteHTML writes one self-contained page: charts drawn by an inline script from inline data, the
// tables, and the run's configuration, machine and versions. Its Content-Security-Policy forbids
// every request, so opening it never touches the network.
func WriteHTML(w io.Writer, r *results.Results) error {
	charts, err := ChartsFor(r)
	if err != nil {
		return err
	}
	data, err := json.Marshal(charts)
	if err != nil {
		return err
	}
	var tables bytes.Buffer
	WriteTables(&tables, r)
	scenarioJSON, _ := json.MarshalIndent(r.Scenario, "", "  ")
	title := r.Scenario.Name
	if r.Scenario.Title != "" {
		title = r.Scenario.Title
	}
	m := r.Machine
	machine := [][2]string{{"CPU", m.CPUModel}, {"cores", fmt.Sprint(m.Cores)}, {"memory", fmt.Sprintf("%.1f GiB", float64(m.MemoryBytes)/(1<<30))},
		{"kernel", m.Kernel}, {"OS", m.OS}, {"host", m.Hostname}}
	var dirs []string
	for d := range m.FileSystems {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		machine = append(machine, [2]string{"file system of " + d, m.FileSystems[d]})
	}
	if len(r.Placement.AppCPUs) > 0 {
		machine = append(machine, [2]string{"CPUs", fmt.Sprintf("app %v, driver %v", r.Placement.AppCPUs, r.Placement.DriverCPUs)})
	}
	var versions [][2]string
	for k, v := range r.Versions {
		versions = append(versions, [2]string{k, v})
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i][0] < versions[j][0] })
	cmd, _ := json.Marshal(r.Command)
	return page.Execute(w, pageData{
		Title: title, Status: r.Status, Started: r.Started.Format(time.RFC3339), Tables: tables.String(),
		ChartData: template.JS(data), Machine: machine, Versions: versions, Scenario: string(scenarioJSON), Command: string(cmd),
	})
}
