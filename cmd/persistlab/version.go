package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"persistlab/backend"
	"persistlab/internal/mariadb"
	iproc "persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/internal/tools"
	"persistlab/workload/fio"
)

// versionProbe is a program persistlab drives: how a run finds it, and how it says its version.
type versionProbe struct {
	name string
	find func() (string, error)
	args []string
}

// versionProbes are the backends' programs (each backend's Info names its own) and the
// workloads', found as they find them, so version names what a run would use.
func versionProbes() []versionProbe {
	var out []versionProbe
	for _, name := range backend.Names() {
		info, _ := backend.Lookup(name)
		for _, p := range info.Programs {
			out = append(out, versionProbe{p.Name, func() (string, error) { return tools.Find(p.Name) }, p.VersionArgs})
		}
	}
	return append(out,
		versionProbe{"fio", fio.Find, []string{"--version"}},
		versionProbe{"k6", func() (string, error) { return tools.Find("k6") }, []string{"version"}},
		versionProbe{"git", func() (string, error) { return exec.LookPath("git") }, []string{"--version"}},
		versionProbe{"mariadbd", func() (string, error) { p, err := mariadb.FindPrograms(); return p.Server, err }, []string{"--version"}})
}

// versionTimeout bounds one program's answer to --version.
const versionTimeout = 10 * time.Second

// ProgramVersion is what version says of one program.
type ProgramVersion struct {
	Version string `json:"version,omitempty"`
	Path    string `json:"path,omitempty"`
	// Error says why there is no version: "not found (where it was looked for)" or the program's
	// failure.
	Error string `json:"error,omitempty"`
}

// Versions is what `persistlab version --json` prints.
type Versions struct {
	// Commit is the commit the binary was built from (make build stamps it), "" if unstamped.
	Commit     string                    `json:"commit"`
	Persistlab string                    `json:"persistlab"` // the module's version, "(devel)" in a checkout
	Go         string                    `json:"go"`
	SQLite     string                    `json:"sqlite"` // built in
	Programs   map[string]ProgramVersion `json:"programs"`
}

func cmdVersion(args []string, w io.Writer) error {
	fs := newFlags("version")
	asJSON := fs.Bool("json", false, "print the versions as one JSON object, for scripts")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return fmt.Errorf("version takes no arguments, not %q", positional[0])
	}
	own := sysinfo.Versions()
	v := Versions{Commit: own["persistlab_commit"], Persistlab: own["persistlab"], Go: own["go"], SQLite: own["sqlite"], Programs: map[string]ProgramVersion{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	probes := versionProbes()
	for _, p := range probes {
		wg.Go(func() {
			pv := probeVersion(p)
			mu.Lock()
			v.Programs[p.name] = pv
			mu.Unlock()
		})
	}
	wg.Wait()
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	commit := v.Commit
	if commit == "" {
		commit = "unstamped (make build stamps the commit)"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "persistlab\tcommit %s\n", commit)
	fmt.Fprintf(tw, "go\t%s\n", v.Go)
	fmt.Fprintf(tw, "sqlite\t%s (built in)\n", v.SQLite)
	for _, p := range probes {
		pv := v.Programs[p.name]
		switch {
		case pv.Error != "":
			fmt.Fprintf(tw, "%s\t%s\n", p.name, pv.Error)
		case strings.Contains(pv.Version, pv.Path): // mariadbd names itself
			fmt.Fprintf(tw, "%s\t%s\n", p.name, pv.Version)
		default:
			fmt.Fprintf(tw, "%s\t%s  (%s)\n", p.name, pv.Version, pv.Path)
		}
	}
	return tw.Flush()
}

// probeVersion finds p and asks its version: the first line it prints, within versionTimeout
// and 64 KiB.
func probeVersion(p versionProbe) ProgramVersion {
	path, err := p.find()
	if err != nil {
		return ProgramVersion{Error: "not found (" + err.Error() + ")"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	out := iproc.NewLimitedBuffer(p.name, 64<<10)
	cmd := exec.CommandContext(ctx, path, p.args...)
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = out, out, time.Second
	runErr := cmd.Run()
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	switch {
	case ctx.Err() != nil:
		return ProgramVersion{Path: path, Error: fmt.Sprintf("no answer to %s %s within %s", p.name, strings.Join(p.args, " "), versionTimeout)}
	case runErr != nil && line == "":
		return ProgramVersion{Path: path, Error: fmt.Sprintf("%s %s: %v", p.name, strings.Join(p.args, " "), runErr)}
	}
	return ProgramVersion{Version: line, Path: path}
}
