package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/internal/cgroup"
	"persistlab/profile"
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
// under a quota of 1/4 CPU per 4 ms (the CFS limit the app finds itself under), records the
// profile as measured and what it did, and says so; --set cpu_period=100ms picks the containers'
// period instead, the scenario's own value winning. A profile of a faster target sets nothing.
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
	if got := limit(); got != "1000 4000" {
		t.Errorf("the app ran under CFS limit %q, want 1000 µs per 4000 (1 CPU / 4, the kernel's least quota)", got)
	}
	wl, _ := spec["workload"].(map[string]any)
	used, _ := spec["profile_used"].(map[string]any)
	prof, _ := used["profile"].(map[string]any)
	figures, _ := prof["figures"].([]any)
	if wl["cpu_quota"] != "0.25" || wl["cpu_period"] != "4ms" || len(figures) != 3 || !strings.Contains(used["effect"].(string), "0.25 CPUs per 4ms") {
		t.Errorf("results: workload %v, profile_used %v", wl, used)
	}
	for _, f := range figures {
		if f.(map[string]any)["provenance"] != "measured" {
			t.Errorf("figure %v is not recorded as measured", f)
		}
	}
	for _, want := range []string{"cpu_quota 0.25 CPUs per cpu_period 4ms", "recorded, not emulated", "held-out 8-row unit of CPU work within 20.0%"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the run does not say %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "CPU limited to 0.25 CPUs per 4ms period") {
		t.Errorf("the answer does not say what the profile did:\n%s", stdout)
	}

	_, stderr, _ = run("--profile", slow, "--set", "cpu_period=100ms")
	if got := limit(); got != "25000 100000" || !strings.Contains(stderr, "sets cpu_period itself") {
		t.Errorf("with cpu_period 100ms: CFS limit %q, want 25000 per 100000\n%s", got, stderr)
	}

	_, stderr, spec = run("--profile", fast)
	wl, _ = spec["workload"].(map[string]any)
	if got := limit(); (got != "" && !strings.HasPrefix(got, "-1 ") && !strings.HasPrefix(got, "max ")) || wl["cpu_quota"] != nil || !strings.Contains(stderr, "this machine is slower than the target") || !strings.Contains(stderr, "pessimistic") {
		t.Errorf("a faster target: CFS limit %q, workload %v\n%s", got, wl, stderr)
	}
}
