package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/profile"
	"persistlab/scenario"
)

// writeInstanceProfile writes an instance profile of a target factor times slower than this
// machine, with cpus CPUs' worth.
func writeInstanceProfile(t *testing.T, path, factor, cpus string) {
	t.Helper()
	host, _ := os.Hostname()
	p := &profile.Profile{Schema: profile.Schema, Kind: "instance",
		Measured: profile.Measured{Target: "probe-vm", When: "2026-11-25T10:00:00Z", Commit: "abc1234",
			Machine: profile.Machine{Hostname: "probe-vm", CPU: "Intel Xeon", Kernel: "Linux 6.1 x86_64"}},
		Figures: []profile.Figure{
			{Option: "cpu_factor", Value: factor, Provenance: "measured", How: "a test's figure"},
			{Option: "effective_cpus", Value: cpus, Provenance: "measured", How: "a test's figure"},
			{Option: "fs_fsync_factor", Value: "3", Provenance: "measured", How: "a test's figure"},
		},
		HeldOut:   []profile.HeldOut{{Point: "8-row unit of CPU work", Unit: "ms", Predicted: 0.4, Measured: 0.5, Error: -0.2}},
		Reference: &profile.Machine{Hostname: host, CPU: "any", Kernel: "Linux"},
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordLimit is a shell script that writes the CFS limit of the cpu cgroup it runs in (quota
// and period, in µs) to $1, then runs the rest of its arguments.
const recordLimit = `out="$1"; shift
while IFS=: read -r id ctrl path; do
  case ",$ctrl," in
    *,cpu,*) d=/sys/fs/cgroup/cpu$path; echo "$(cat $d/cpu.cfs_quota_us) $(cat $d/cpu.cfs_period_us)" > "$out" ;;
  esac
  if [ "$id" = 0 ] && [ -z "$ctrl" ] && [ -f "/sys/fs/cgroup$path/cpu.max" ]; then cat "/sys/fs/cgroup$path/cpu.max" > "$out"; fi
done < /proc/self/cgroup
exec "$@"
`

// A run with an instance profile of a target 4 times slower with one CPU runs its instance
// under a quota of 1/4 CPU per 5 ms (the CFS limit the app finds itself under), records the
// profile as measured and what it did, and says so; --set cpu_period=100ms picks the containers'
// period for the profile's quota; --set cpu_quota keeps the scenario's whole limit; a period the
// profile's quota cannot hold is refused first. A profile of a faster target sets nothing.
func TestRunTakesAnInstanceProfile(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	if err := cgroup.CheckCPU(); err != nil {
		t.Skip(err)
	}
	work := t.TempDir()
	script, limitFile := filepath.Join(work, "record.sh"), filepath.Join(work, "limit.txt")
	if err := os.WriteFile(script, []byte(recordLimit), 0o755); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(work, "s.yaml")
	os.WriteFile(scen, []byte(`name: instance-profiled
workload:
  type: http
  command: [/bin/sh, `+script+`, `+limitFile+`, python3, -m, http.server, --bind, "{host}", "{port}", --directory, "{dir}"]
  cpus: 0
backends: [{name: local}]
sweep: {vus: 1}
duration: 1s
warmup: 0s
`), 0o644)
	slow, fast := filepath.Join(work, "slow.yaml"), filepath.Join(work, "fast.yaml")
	writeInstanceProfile(t, slow, "4", "1")
	writeInstanceProfile(t, fast, "0.5", "2")
	run := func(args ...string) (stdout, stderr string, spec map[string]any) {
		t.Helper()
		os.Remove(limitFile)
		out := filepath.Join(work, "r.json")
		stdout, stderr, err := persistlab(t, append([]string{"run", scen, "--out", out, "--force"}, args...)...)
		if err != nil {
			t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Scenario map[string]any `json:"scenario"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		return stdout, stderr, r.Scenario
	}
	limit := func() string {
		data, _ := os.ReadFile(limitFile)
		return strings.TrimSpace(string(data))
	}

	stdout, stderr, spec := run("--profile", slow)
	if got := limit(); got != "1250 5000" {
		t.Errorf("the app ran under CFS limit %q, want 1250 µs per 5000 (1 CPU / 4 per 5 ms)", got)
	}
	entry := func(spec map[string]any) map[string]any {
		backends, _ := spec["backends"].([]any)
		if len(backends) != 1 {
			return nil
		}
		b, _ := backends[0].(map[string]any)
		params, _ := b["params"].(map[string]any)
		return params
	}
	used, _ := spec["profile_used"].(map[string]any)
	prof, _ := used["profile"].(map[string]any)
	figures, _ := prof["figures"].([]any)
	if params := entry(spec); params["cpu_quota"] != "0.25" || params["cpu_period"] != "5ms" || len(figures) != 3 || !strings.Contains(used["effect"].(string), "0.25 CPUs per 5ms") {
		t.Errorf("results: the entry's params %v, profile_used %v", params, used)
	}
	for _, f := range figures {
		if f.(map[string]any)["provenance"] != "measured" {
			t.Errorf("figure %v is not recorded as measured", f)
		}
	}
	for _, want := range []string{"cpu_quota 0.25 CPUs per cpu_period 5ms", "recorded, not emulated", "held-out 8-row unit of CPU work within 20.0%"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the run does not say %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "CPU limited to 0.25 CPUs per 5ms period") {
		t.Errorf("the answer does not say what the profile did:\n%s", stdout)
	}

	_, stderr, _ = run("--profile", slow, "--set", "cpu_period=100ms")
	if got := limit(); got != "25000 100000" || !strings.Contains(stderr, "sets cpu_period itself") {
		t.Errorf("with cpu_period 100ms: CFS limit %q, want 25000 per 100000\n%s", got, stderr)
	}

	// The scenario's own cpu_quota is its whole limit: its period too (the default 100 ms), not
	// the profile's 5 ms.
	_, stderr, _ = run("--profile", slow, "--set", "cpu_quota=0.5")
	if got := limit(); got != "50000 100000" || !strings.Contains(stderr, "sets cpu_quota itself") {
		t.Errorf("with cpu_quota 0.5: CFS limit %q, want 50000 per 100000\n%s", got, stderr)
	}

	// A period of its own under which the profile's quota is less than the kernel's least is
	// refused before anything runs, naming the option and the profile; without a profile the
	// runner refuses the same limit before the first cell.
	os.Remove(limitFile)
	for _, args := range [][]string{{"--profile", slow, "--set", "cpu_period=1ms"}, {"--set", "cpu_quota=0.25", "--set", "cpu_period=1ms"}} {
		_, stderr, err := persistlab(t, append([]string{"run", scen, "--out", filepath.Join(work, "refused.json")}, args...)...)
		if err == nil || !strings.Contains(stderr, "workload.cpu_period") || !strings.Contains(stderr, "1ms") || !strings.Contains(stderr, "at least 4ms") || limit() != "" {
			t.Errorf("%v: %v, the app ran under %q\n%s", args, err, limit(), stderr)
		}
		if args[0] == "--profile" && !strings.Contains(stderr, slow) {
			t.Errorf("%v: the refusal does not name the profile:\n%s", args, stderr)
		}
	}

	_, stderr, spec = run("--profile", fast)
	if got := limit(); (got != "" && !strings.HasPrefix(got, "-1 ") && !strings.HasPrefix(got, "max ")) || entry(spec)["cpu_quota"] != nil || !strings.Contains(stderr, "this machine is slower than the target") || !strings.Contains(stderr, "pessimistic") {
		t.Errorf("a faster target: CFS limit %q, the entry's params %v\n%s", got, entry(spec), stderr)
	}
}

// On cgroup v2 an entry that runs its instance in a cgroup of its own (a volume with the
// instance's memory bounded) cannot also be in the profile's CPU limit: it takes none, and says
// why naming the profile, while the other entries take it; on v1 every entry takes it.
func TestInstanceProfileSkipsAnEntryThatCannotTakeALimit(t *testing.T) {
	if _, err := backend.New("volume", backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"type": "gp3", "size": "10GiB", "memory": "256MiB"}}); err != nil {
		t.Skipf("no volume backend here: %v", err)
	}
	path := filepath.Join(t.TempDir(), "slow.yaml")
	writeInstanceProfile(t, path, "4", "1")
	p, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func(f func() (bool, error)) { cpuIsV2 = f }(cpuIsV2)
	for _, v2 := range []bool{true, false} {
		cpuIsV2 = func() (bool, error) { return v2, nil }
		spec := &scenario.Spec{Name: "s", Workload: scenario.Workload{Type: "http"}, Backends: []scenario.BackendSpec{
			{Name: "local"}, {Name: "volume", Label: "bounded", Options: map[string]string{"type": "gp3", "size": "10GiB", "memory": "256MiB"}},
			{Name: "volume", Label: "unbounded", Options: map[string]string{"type": "gp3", "size": "10GiB", "memory": "0"}}}}
		use, _, err := applyInstanceProfile(spec, p, path)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range use.Entries {
			skip := v2 && e.Entry == "bounded"
			quota := spec.Backends[i].Params["cpu_quota"]
			if skip != (e.Skipped != "") || skip != (quota == "") || (skip && (!strings.Contains(e.Skipped, path) || !strings.Contains(e.Skipped, "cgroup v2"))) {
				t.Errorf("v2 %v: %s took %v, cpu_quota %q, skipped %q", v2, e.Entry, e.Took, quota, e.Skipped)
			}
		}
		if v2 && !strings.Contains(use.Effect, "bounded takes none") {
			t.Errorf("the effect does not say which entry runs without the limit: %s", use.Effect)
		}
	}
}
