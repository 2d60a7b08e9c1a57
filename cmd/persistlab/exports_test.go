package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/report"
)

const recordedRun = "../../report/testdata/cloudrun-sqlite-quick.json" // a real quick run, of the first results format

// report --format prints a summary or Markdown on standard output alone, and --samples and
// --openmetrics write their files by the rules --html and --csv follow.
func TestReportExportsEachFormat(t *testing.T) {
	work := t.TempDir()
	stdout, stderr, err := persistlab(t, "report", recordedRun, "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var s report.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("stdout is no JSON summary: %v\n%s", err, stdout)
	}
	// the file records no units: the workload's declarations give them
	if s.Schema != report.SummarySchema || len(s.Rows) != 12 || s.Units["p95_ms"] != "ms" {
		t.Errorf("summary %+v", s)
	}
	stdout, _, err = persistlab(t, "report", recordedRun, "--format", "markdown")
	if err != nil || !strings.HasPrefix(stdout, "## cloudrun-sqlite") || !strings.Contains(stdout, "\n| vus | med | avg |") {
		t.Errorf("markdown: %v\n%s", err, stdout)
	}
	samples, metrics := filepath.Join(work, "s.jsonl"), filepath.Join(work, "m.txt")
	stdout, stderr, err = persistlab(t, "report", recordedRun, "--format", "json", "--samples", samples, "--openmetrics", metrics)
	if err != nil || !strings.Contains(stderr, "wrote "+samples) || strings.Contains(stdout, "wrote") {
		t.Fatalf("%v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	f, err := os.Open(samples)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var line report.Sample
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Metric == "" || line.Labels["backend"] == "" {
			t.Fatalf("sample line %d: %v %s", lines+1, err, sc.Text())
		}
	}
	text, _ := os.ReadFile(metrics)
	if lines < 12 || !strings.HasSuffix(string(text), "# EOF\n") || !strings.Contains(string(text), "# UNIT persistlab_p95_seconds seconds") {
		t.Errorf("%d samples; openmetrics:\n%s", lines, text)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--samples", samples}, "--samples " + samples + ": the file exists: want a new path, or --force"},
		{[]string{"--samples", filepath.Join(work, "x"), "--openmetrics", filepath.Join(work, "x")}, "--samples and --openmetrics name one file"},
		{[]string{"--openmetrics", recordedRun}, "is the file the results file being read names"},
		{[]string{"--format", "yaml"}, `--format: "yaml" is not allowed: want text, json or markdown`},
	} {
		_, stderr, err := persistlab(t, append([]string{"report", recordedRun}, c.args...)...)
		if err == nil || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: %v, stderr %q, want %q", c.args, err, stderr, c.want)
		}
	}
	if _, stderr, err := persistlab(t, "report", recordedRun, "--samples", samples, "--force"); err != nil {
		t.Errorf("--force: %v %s", err, stderr)
	}
}

// run --format json prints the summary alone on standard output; its export files are checked
// before the run starts.
func TestRunPrintsItsSummaryAndWritesItsExports(t *testing.T) {
	work := t.TempDir()
	out, samples := filepath.Join(work, "r.json"), filepath.Join(work, "s.jsonl")
	os.WriteFile(samples, []byte("earlier"), 0o644)
	short := []string{"run", "cloudrun-sqlite", "--backend", "local", "--vus", "2", "--duration", "1s", "--warmup", "0s", "--repeat", "1", "--out", out}
	_, stderr, err := persistlab(t, append(short, "--samples", samples)...)
	if err == nil || !strings.Contains(stderr, "the file exists") {
		t.Fatalf("an existing --samples file: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the run started before its outputs were checked")
	}
	if _, stderr, err = persistlab(t, append(short, "--format", "json", "--beside", "cloudrun-sqlite-rails")...); err == nil || !strings.Contains(stderr, "--format") {
		t.Errorf("--format json with --beside: %v %s", err, stderr)
	}
	// --brief asks the text report for less; what it adds ("tables: ...") is not JSON's.
	stdout, stderr, err := persistlab(t, append(short, "--format", "json", "--samples", samples, "--force", "--brief")...)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var s report.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || len(s.Rows) != 1 || s.Rows[0].Median["ok"] <= 0 {
		t.Fatalf("stdout: %v\n%s", err, stdout)
	}
	if !strings.Contains(stderr, "results: "+out) || !strings.Contains(stderr, "wrote "+samples) {
		t.Errorf("stderr:\n%s", stderr)
	}
	if data, _ := os.ReadFile(samples); !strings.Contains(string(data), `"metric":"p95_ms"`) {
		t.Errorf("samples:\n%s", data)
	}
}

// version names every program persistlab drives: its version and where it is, or that it was
// not found; and the commit a stamped build carries.
func TestVersionNamesEachProgram(t *testing.T) {
	stamped := filepath.Join(t.TempDir(), "persistlab")
	if out, err := exec.Command("go", "build", "-ldflags", "-X persistlab/internal/sysinfo.buildCommit=abc1234", "-o", stamped, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cmd := exec.Command(stamped, "version", "--json")
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir()) // no git, fio or mariadbd on it
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var v Versions
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if v.Commit != "abc1234" || !strings.HasPrefix(v.Go, "go1.") {
		t.Errorf("commit %q, go %q", v.Commit, v.Go)
	}
	for _, p := range versionProbes() {
		pv, ok := v.Programs[p.name]
		if !ok || (pv.Version == "") == (pv.Error == "") {
			t.Errorf("%s: %+v", p.name, pv)
		}
	}
	// Each backend names its own programs, the software of the seeds' day among them.
	for _, name := range []string{"gcsfuse", "gcsfuse-3.2.8", "litestream", "litestream-0.3.13", "fio", "k6", "mariadbd"} {
		if _, ok := v.Programs[name]; !ok {
			t.Errorf("version names no %s: %v", name, v.Programs)
		}
	}
	if git := v.Programs["git"]; !strings.HasPrefix(git.Error, "not found") {
		t.Errorf("git with an empty PATH: %+v", git)
	}
	stdout, _, err := persistlab(t, "version")
	if err != nil || !strings.Contains(stdout, "\ngit ") || !strings.Contains(stdout, "commit unstamped") {
		t.Errorf("%v\n%s", err, stdout)
	}
}

// run --fio-json keeps fio's own JSON of every cell beside the results, each named in its
// cell's facts; it is refused where no fio runs, or over files without --force.
func TestRunKeepsFiosJSONOfEveryCell(t *testing.T) {
	work := t.TempDir()
	out, dir := filepath.Join(work, "r.json"), filepath.Join(work, "fio")
	if _, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--out", out, "--fio-json", dir); err == nil || !strings.Contains(stderr, "--fio-json") || !strings.Contains(stderr, "counter") {
		t.Errorf("a counter scenario: %v %s", err, stderr)
	}
	short := []string{"run", "gcsfuse-fio", "--backend", "local", "--sweep", "rw+file_size+bs+fsync=read/1MiB/1MiB/0,write/1MiB/1MiB/10",
		"--set", "runtime=1s", "--set", "ramp_time=0s", "--set", "numjobs=1", "--repeat", "1", "--out", out, "--fio-json", dir}
	if _, stderr, err := persistlab(t, short...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 2 {
		t.Fatalf("%v %+v", err, r)
	}
	for _, c := range r.Cells {
		path := c.Facts["fio_json"]
		data, err := os.ReadFile(path)
		var fio struct {
			Version string `json:"fio version"`
			Jobs    []any  `json:"jobs"`
		}
		if filepath.Dir(path) != dir || err != nil || json.Unmarshal(data, &fio) != nil || fio.Version == "" || len(fio.Jobs) == 0 {
			t.Errorf("cell %d: fio_json %q: %v", c.Index, path, err)
		}
	}
	withoutFioJSON := append(append([]string{}, short[:len(short)-2]...), "--force")
	if _, stderr, err := persistlab(t, withoutFioJSON...); err != nil {
		t.Errorf("without --fio-json: %v %s", err, stderr)
	}
	if _, stderr, err := persistlab(t, append(append([]string{}, short...), "--force")...); err != nil {
		t.Errorf("--force over the earlier files: %v %s", err, stderr)
	}
	another := append(append([]string{}, short[:len(short)-4]...), "--out", filepath.Join(work, "r2.json"), "--fio-json", dir)
	_, stderr, err := persistlab(t, another...)
	if err == nil || !strings.Contains(stderr, "holds 2 file(s)") {
		t.Errorf("over earlier files without --force: %v %s", err, stderr)
	}
}
