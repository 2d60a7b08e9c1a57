package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/profile"
	"persistlab/report"
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

// Seed 000's app under an instance profile of a target f times slower with one CPU serves f
// times fewer requests than one CPU of this machine, by either method: the scenario pins its
// instance to one CPU, so the profile slows it with a spinner's weight (cpu_slowdown); --set
// cpu_period picks a CFS quota instead. Each holds the app to 1/f of a CPU, and each request does
// the same work as without it (its CPU time is unchanged: the app calibrates its per-request work
// before the limit could bias it). Both are measured as CPU time per request, so a busy core beside
// the test, which takes CPU from every run, moves neither: the unlimited run's own requests/s is
// this machine's contention, not its speed.
func TestAnInstanceProfileMovesSeed000sRequestsPerSecondByItsFactor(t *testing.T) {
	if err := cgroup.CheckCPU(); err != nil {
		t.Skip(err)
	}
	work := t.TempDir()
	const factor = 4.0
	slow := filepath.Join(work, "slow.yaml")
	writeInstanceProfile(t, slow, "4", "1")
	type measured struct{ perSecond, cpuPerRequest, cpuUtil float64 }
	run := func(args ...string) (measured, string) {
		t.Helper()
		out := filepath.Join(work, "r.json")
		stdout, stderr, err := persistlab(t, append([]string{"run", "cloudrun-sqlite", "--backend", "local", "--vus", "4", "--duration", "4s", "--warmup", "1s",
			"--repeat", "1", "--out", out, "--force", "--workdir", filepath.Join(work, "scratch")}, args...)...)
		if err != nil {
			t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
		}
		r, err := report.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Cells) != 1 || r.Cells[0].Failure != "" || r.Cells[0].M("ok") < 20 || r.Cells[0].M("app_cpu_s") <= 0 {
			t.Fatalf("cells %+v", r.Cells)
		}
		c := r.Cells[0]
		return measured{perSecond: c.M("ok") / c.ElapsedS, cpuPerRequest: c.M("app_cpu_s") / c.M("ok"), cpuUtil: c.M("app_cpu_s") / c.ElapsedS}, stderr
	}
	free, _ := run()
	// A quota is a ceiling; a weight is a share, and a thread that wakes (a request just come, an
	// fsync done) catches up on the CPU for a while: its bounds are wider (bench/instance measured
	// a request alone at 0.855f).
	for _, method := range []struct {
		name, says string
		args       []string
		slack      float64
	}{
		{"cpu_slowdown", "cpu_slowdown 4", []string{"--profile", slow}, 0.75},
		{"cpu_quota", "cpu_quota 0.25 CPUs per its own period", []string{"--profile", slow, "--set", "cpu_period=5ms"}, 0.85},
	} {
		limited, stderr := run(method.args...)
		t.Logf("unlimited: %.1f requests/s, %.2f ms of CPU each, %.2f CPUs; %s: %.1f/s, %.2f ms, %.2f CPUs", free.perSecond, free.cpuPerRequest*1e3, free.cpuUtil,
			method.name, limited.perSecond, limited.cpuPerRequest*1e3, limited.cpuUtil)
		if !strings.Contains(stderr, method.says) {
			t.Errorf("%s: the run does not say %q:\n%s", method.name, method.says, stderr)
		}
		if limited.cpuUtil > 1/factor/method.slack {
			t.Errorf("%s: the limited app used %.3f CPUs, above the profile's 1/%g", method.name, limited.cpuUtil, factor)
		}
		// The work per request is the same under the limit: less CPU a request (0.44 once, when the
		// counter calibrated its work by the wall's clock) means it changed. Throttling costs CPU of
		// its own, cold caches after each throttled gap of a 5 ms period (1.03 to 1.23 of the free
		// request's measured on one machine), so the upper bound is looser.
		if ratio := limited.cpuPerRequest / free.cpuPerRequest; ratio < 0.8 || ratio > 1.5 {
			t.Errorf("%s: a request's CPU time moved by %.2f under the limit: the work per request changed", method.name, ratio)
		}
		// One CPU of this machine serves 1/cpuPerRequest a second; the limited app f times fewer,
		// less what contention beside the test took from its share (it had at least 60% of it).
		oneCPU := 1 / free.cpuPerRequest
		if got := oneCPU / limited.perSecond; got < factor*method.slack || got > factor/0.6 {
			t.Errorf("%s: requests/s moved by %.2f against one CPU's %.1f/s, want about %g", method.name, got, oneCPU, factor)
		}
	}
}

// cpu_slowdown keeps a slower CPU's latency shape where a quota does not: a CPU-bound request
// alone (an open loop at a third of what the slowed CPU can serve) takes about f times its CPU
// time, because the spinner holds the rest of its CPU whenever the request runs. A thread that
// wakes catches up on the CPU for a while (bench/instance: 0.855f for a request alone), and
// contention from another process on the same CPU adds to it as a further spinner would: the
// bound is 0.75f to 1.15(f+1). The spinners and both cgroups are gone after the run; a slowdown the
// weight cannot honour is refused before anything runs, naming cpu_slowdown.
func TestCPUSlowdownSlowsARequestAloneByItsFactor(t *testing.T) {
	if err := cgroup.CheckCPU(); err != nil {
		t.Skip(err)
	}
	work := t.TempDir()
	scen := filepath.Join(work, "s.yaml")
	os.WriteFile(scen, []byte(`name: slowed
workload:
  type: counter
  mode: open
  rate: 5
  method: POST
  path: /count_up
  cpus: 1
  cpu_per_request: 20ms
backends: [{name: local}]
sweep: {vus: 2, cpu_slowdown: "0,3"}
duration: 5s
warmup: 1s
`), 0o644)
	const factor = 3.0
	out, scratch := filepath.Join(work, "r.json"), filepath.Join(work, "scratch")
	stdout, stderr, err := persistlab(t, "run", scen, "--out", out, "--workdir", scratch, "--keep")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 2 {
		t.Fatalf("%d cells", len(r.Cells))
	}
	alone := map[string]float64{}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("ok") < 20 || c.M("app_cpu_s") <= 0 {
			t.Fatalf("cell %+v", c)
		}
		cpuPerRequest := c.M("app_cpu_s") / c.M("ok") * 1e3
		alone[c.Params["cpu_slowdown"]] = c.M("service_med_ms") / cpuPerRequest
		t.Logf("cpu_slowdown %s: median service %.2f ms, %.2f ms of CPU per request", c.Params["cpu_slowdown"], c.M("service_med_ms"), cpuPerRequest)
	}
	if got := alone["3"]; got < 0.75*factor || got > 1.15*(factor+1) {
		t.Errorf("slowed %g times, a request alone took %.2f times its CPU time (unslowed: %.2f)", factor, got, alone["0"])
	}
	var records []string
	filepath.WalkDir(scratch, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "persistlab.cpu.cgroup.") {
			records = append(records, path)
		}
		return nil
	})
	var spinners int
	for _, rec := range records {
		data, _ := os.ReadFile(rec)
		group := strings.TrimSpace(string(data))
		if strings.HasSuffix(group, "-spinners") {
			spinners++
		}
		if _, err := os.Stat(group); err == nil {
			t.Errorf("cgroup %s left after the run", group)
		}
	}
	if len(records) != 2 || spinners != 1 {
		t.Errorf("cgroups recorded %v, want the slowed cell's instance's and its spinners'", records)
	}

	for _, bad := range []struct{ args []string }{
		{[]string{"--set", "cpu_slowdown=3", "--set", "cpus=0"}},
		{[]string{"--set", "cpu_slowdown=3", "--set", "cpus=2"}},
		{[]string{"--set", "cpu_slowdown=3", "--set", "cpu_quota=0.5"}},
		{[]string{"--set", "cpu_slowdown=1.005"}},
		{[]string{"--set", "cpu_slowdown=3", "--set", "instances=2"}},
	} {
		args := append([]string{"run", "cloudrun-sqlite", "--backend", "local", "--vus", "2", "--duration", "1s", "--out", filepath.Join(work, "refused.json")}, bad.args...)
		if _, stderr, err := persistlab(t, args...); err == nil || !strings.Contains(stderr, "workload.cpu_slowdown") || !strings.Contains(stderr, "want") {
			t.Errorf("%v: %v\n%s", bad.args, err, stderr)
		}
	}
}

// An instance profile's figures are shown as measured: by lab model instance, and by scenarios
// show --provenance under the instance the scenario's entries run on, with what the run does with
// them; the file system factors it records are said not to be emulated.
func TestProvenanceShowsAnInstanceProfilesFigures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "instance.yaml")
	writeInstanceProfile(t, path, "3.7", "1")
	var out bytes.Buffer
	if err := cmdLabModel([]string{"instance", "--profile", path}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3.7 x", "measured on probe-vm", "2026-11-25T10:00:00Z"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lab model instance --profile lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := cmdScenariosShow([]string{"cloudrun-sqlite-rails", "--provenance", "--profile", path}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	at := strings.Index(text, "\ninstance: the instance model, from profile "+path)
	if at < 0 {
		t.Fatalf("scenarios show --provenance names no instance section:\n%s", text)
	}
	section := text[at:]
	section = section[:strings.Index(section, "\n(every figure")]
	lines := map[string]string{}
	for _, l := range strings.Split(section, "\n") {
		for _, option := range []string{"CPU time per unit of work", "fsync call time in the probed directory"} {
			if strings.Contains(l, option) {
				lines[option] = l
			}
		}
	}
	if l := lines["CPU time per unit of work"]; !strings.Contains(l, "3.7 x") || !strings.Contains(l, "measured on probe-vm") || strings.Contains(l, "not emulated") {
		t.Errorf("the CPU factor's line: %q\n%s", l, section)
	}
	if l := lines["fsync call time in the probed directory"]; !strings.Contains(l, "3 x") || !strings.Contains(l, "recorded, not emulated") {
		t.Errorf("the fsync factor's line: %q\n%s", l, section)
	}
}
