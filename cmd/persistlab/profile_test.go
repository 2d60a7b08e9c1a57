package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/profile"
	"persistlab/report"
)

// writeProfile writes a bucket profile measured "on" a named target, with the options given.
func writeProfile(t *testing.T, path string, figures map[string]string) {
	t.Helper()
	p := &profile.Profile{Schema: profile.Schema, Kind: "bucket",
		Measured: profile.Measured{Target: "storage.googleapis.com/their-bucket", When: "2026-11-25T10:00:00Z", Commit: "abc1234",
			Machine: profile.Machine{Hostname: "probe-vm", CPU: "Intel Xeon", Kernel: "Linux 6.1 x86_64"}},
		HeldOut: []profile.HeldOut{{Point: "8 MiB read", Unit: "s", Predicted: 0.29, Measured: 0.3, Error: -1.0 / 30}}}
	for _, o := range []string{"read_median", "read_p99", "write_median", "stream_mib_s"} {
		if v, ok := figures[o]; ok {
			p.Figures = append(p.Figures, profile.Figure{Option: o, Value: v, Provenance: "measured", How: "a test's figure"})
		}
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A scenario's profile: (relative to its file) reaches every bucket entry that does not set the
// option itself, the run records it, and its answer says where the model was measured. The
// entry that sets read_median keeps its own; local takes nothing. --profile replaces it.
func TestRunTakesTheScenariosProfile(t *testing.T) {
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "cal"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeProfile(t, filepath.Join(work, "cal", "p.yaml"), map[string]string{"read_median": "50ms", "read_p99": "120ms", "stream_mib_s": "25"})
	scen := filepath.Join(work, "s.yaml")
	body := `name: profiled
workload: {type: counter, cpu_per_request: 0s}
profile: cal/p.yaml
backends:
  - name: litestream
  - name: litestream
    label: litestream-own
    options: {read_median: 7ms}
  - name: local
duration: 1s
repeat: 1
sweep: {vus: [2]}
`
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", scen, "--out", out, "--workdir", filepath.Join(work, "scratch"))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 3 {
		t.Fatalf("%d cells", len(r.Cells))
	}
	opts := map[string]map[string]string{}
	for _, b := range r.Scenario.Backends {
		opts[b.ID()] = b.Options
	}
	if o := opts["litestream"]; o["read_median"] != "50ms" || o["read_p99"] != "120ms" || o["stream_mib_s"] != "25" {
		t.Errorf("litestream ran with %v", o)
	}
	if o := opts["litestream-own"]; o["read_median"] != "7ms" || o["stream_mib_s"] != "25" {
		t.Errorf("litestream-own ran with %v", o)
	}
	if len(opts["local"]) != 0 {
		t.Errorf("local ran with %v", opts["local"])
	}
	u := r.Scenario.ProfileUsed
	if u == nil || u.Path != filepath.Join(work, "cal", "p.yaml") || u.Profile.Measured.Target != "storage.googleapis.com/their-bucket" || len(u.Profile.Figures) != 3 ||
		!u.Took("litestream", "read_median") || u.Took("litestream-own", "read_median") {
		t.Fatalf("profile recorded %+v", u)
	}
	for _, want := range []string{"litestream-own sets read_median itself: its own value wins", "they replace the bucket model's defaults for litestream, litestream-own"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if flat := strings.Join(strings.Fields(stdout), " "); !strings.Contains(flat, "bucket model from profile") || !strings.Contains(flat, "held-out 8 MiB read predicted within 3.3%") {
		t.Errorf("the answer does not name the profile:\n%s", stdout)
	}
	// --profile replaces the scenario's, here one with a worse fit and no stream figure.
	other := filepath.Join(work, "other.yaml")
	writeProfile(t, other, map[string]string{"read_median": "60ms"})
	stdout, stderr, err = persistlab(t, "run", scen, "--profile", other, "--dry-run")
	if err != nil || !strings.Contains(stderr+stdout, "--profile "+other+" replaces the scenario's profile: cal/p.yaml") {
		t.Errorf("%v\n%s\n%s", err, stdout, stderr)
	}
	bad := filepath.Join(work, "bad.yaml")
	os.WriteFile(bad, []byte("schema: persistlab.profile/1\nkind: bucket\n"), 0o644)
	if _, stderr, err := persistlab(t, "run", scen, "--profile", bad, "--dry-run"); err == nil || !strings.Contains(stderr, "measured.target") {
		t.Errorf("a bad profile: %v %s", err, stderr)
	}
}

// The profile's figures show as measured, with where and when, in lab model and in a scenario's
// provenance; a bandwidth measured on the target leaves seed 003's tables predictions.
func TestProvenanceShowsAProfilesFiguresAsMeasured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	writeProfile(t, path, map[string]string{"read_median": "50ms", "stream_mib_s": "25"})
	var out bytes.Buffer
	if err := cmdLabModel([]string{"bucket", "--profile", path}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 bucket figures as profile", "25 MiB/s", "measured on storage.googleapis.com/their-bucket from probe-vm", "2026-11-25T10:00:00Z"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lab model lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "60 MiB/s") {
		t.Errorf("lab model still shows the fitted bandwidth:\n%s", out.String())
	}
	out.Reset()
	if err := cmdScenariosShow([]string{"gcsfuse-fio", "--provenance", "--profile", path}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"measured on storage.googleapis.com/their-bucket at 2026-11-25T10:00:00Z", "[profile " + path + "]", "prediction: no figure fitted from seed 003 is in effect"} {
		if !strings.Contains(text, want) {
			t.Errorf("scenarios show lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "calibration: bucket") {
		t.Errorf("a measured bandwidth is still calibration:\n%s", text)
	}
	if err := cmdScenariosShow([]string{"gcsfuse-fio", "--profile", path}, &out); err == nil || !strings.Contains(err.Error(), "--provenance") {
		t.Errorf("--profile without --provenance: %v", err)
	}
}
