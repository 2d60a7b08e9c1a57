package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/profile"
	"persistlab/report"
	"persistlab/workload/fio"
)

// needVolumeProbe skips a test that mounts a lab volume and runs fio on it where it cannot.
func needVolumeProbe(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a lab volume attaches a loop device and mounts a file system: root only")
	}
	if _, err := fio.Find(); err != nil {
		t.Skipf("the volume probe runs fio: %v", err)
	}
}

// names lists a directory's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Calibrating a lab gp3 whose figures are not the defaults (4,000 IOPS, 200 MiB/s, 2 ms per
// I/O) gives figures its model allows: a latency no shorter than its service time, an IOPS and a
// throughput no more than 10% above its limits (the lab's token buckets let a millisecond's worth
// through at once, no more). The held-out depth-8 point is printed and stored. An interrupted
// probe, and a finished one, leave nothing in the directory but what was there, untouched.
// How close the figures come to the model is this machine's and is logged, not asserted.
func TestCalibrateVolumeOnALabVolume(t *testing.T) {
	needVolumeProbe(t)
	dir := t.TempDir()
	lab, labOut := startLabVolume(t, dir, "--type", "gp3", "--size", "20GiB", "--iops", "4000", "--throughput", "200", "--latency", "2ms")
	t.Cleanup(func() {
		lab.Process.Signal(syscall.SIGINT)
		if err := lab.Wait(); err != nil {
			t.Errorf("lab volume: %v\n%s", err, labOut.String())
		}
	})
	keep := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(keep, []byte("the user's own file"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(keep, past, past); err != nil {
		t.Fatal(err)
	}
	before := names(t, dir)
	untouched := func(when string) {
		t.Helper()
		if got := names(t, dir); !slices.Equal(got, before) {
			t.Errorf("%s: the directory holds %v, before %v", when, got, before)
		}
		st, err := os.Stat(keep)
		data, _ := os.ReadFile(keep)
		if err != nil || !st.ModTime().Equal(past) || string(data) != "the user's own file" {
			t.Errorf("%s: keep.txt changed: %v %v %q", when, err, st.ModTime(), data)
		}
	}
	work := t.TempDir()
	args := func(out string) []string {
		return []string{"calibrate", "volume", "--dir", dir, "--type", "gp3", "--runtime", "2s", "--size", "64MiB", "--out", out}
	}

	// A type the volume cannot be is refused before any I/O.
	if _, stderr, err := persistlab(t, "calibrate", "volume", "--dir", dir, "--type", "st1"); err == nil || !strings.Contains(stderr, "--type st1") || !strings.Contains(stderr, "20.0 GiB") {
		t.Errorf("st1 of 20 GiB: %v %s", err, stderr)
	}
	untouched("refused --type")

	// Interrupted: the probe file goes, no profile is written.
	cmd := exec.Command(binary, args(filepath.Join(work, "interrupted.yaml"))...)
	var iout, ierr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &iout, &ierr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(names(t, dir)) == len(before) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(names(t, dir)) == len(before) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no probe file appeared:\n%s\n%s", iout.String(), ierr.String())
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(ierr.String(), "removed") {
		t.Errorf("interrupted: %v\n%s\n%s", err, iout.String(), ierr.String())
	}
	if _, err := os.Stat(filepath.Join(work, "interrupted.yaml")); err == nil {
		t.Error("an interrupted probe wrote a profile")
	}
	untouched("interrupted")

	out := filepath.Join(work, "gp3.yaml")
	start := time.Now()
	stdout, stderr, err := persistlab(t, args(out)...)
	wall := time.Since(start)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	untouched("calibrated")
	plan, answer, ok := strings.Cut(stdout, "ANSWER")
	if !ok || !strings.HasPrefix(plan, "persistlab calibrate volume: "+dir) || !strings.Contains(plan, "at most") || !strings.Contains(plan, "persistlab-probe-") {
		t.Errorf("the plan is not printed before the answer:\n%s", stdout)
	}
	if !strings.Contains(answer, "held out: 4 KiB random reads at depth 8") || !strings.Contains(answer, "removed; nothing else in "+dir+" was written") {
		t.Errorf("answer:\n%s", answer)
	}
	p, err := profile.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != "volume" || p.AppliesTo["type"] != "gp3" || !strings.HasSuffix(p.Measured.Target, ":"+dir) || len(p.HeldOut) != 1 {
		t.Errorf("profile %+v", p)
	}
	got := p.Options()
	ratio := map[string]float64{}
	latency, err := time.ParseDuration(got["latency"])
	if err != nil || latency < 2*time.Millisecond {
		t.Errorf("latency %q: want at least the model's 2ms service time (%v)", got["latency"], err)
	}
	ratio["latency"] = latency.Seconds() / 0.002
	for option, limit := range map[string]float64{"iops": 4000, "throughput": 200} {
		v, ok := got[option]
		if !ok {
			if why := whyNotFitted(p, option); !strings.Contains(why, "measured") {
				t.Errorf("%s neither fitted nor said why: %q", option, why)
			}
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x > 1.1*limit {
			t.Errorf("%s %s: more than 10%% above the model's limit %g", option, v, limit)
		}
		ratio[option] = x / limit
	}
	t.Logf("probe wall time %s; measured / model: %v; held out %+v\n%s", wall.Round(100*time.Millisecond), ratio, p.HeldOut[0], stdout)
}

func whyNotFitted(p *profile.Profile, option string) string {
	for _, n := range p.NotFitted {
		if n.Option == option {
			return n.Why
		}
	}
	return ""
}

// A directory the probe cannot write is refused before anything is written or printed as a
// plan; so are one that is not there, a file, and flags out of bounds, each naming its flag.
func TestCalibrateVolumeRefusesWhatItCannotProbe(t *testing.T) {
	work := t.TempDir()
	ro := filepath.Join(work, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 { // root writes any directory: a read-only file system refuses even root
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro).CombinedOutput(); err != nil {
			t.Fatalf("mount: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", ro).Run() })
	} else if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "p.yaml")
	stdout, stderr, err := persistlab(t, "calibrate", "volume", "--dir", ro, "--out", out)
	if err == nil || !strings.Contains(stderr, "--dir "+ro) || !strings.Contains(stderr, "cannot write") || stdout != "" {
		t.Errorf("an unwritable dir: %v\n%s\n%s", err, stdout, stderr)
	}
	if got := names(t, ro); len(got) != 0 {
		t.Errorf("the unwritable dir holds %v", got)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a profile was written")
	}
	file := filepath.Join(work, "f")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{}, "--dir"},
		{[]string{"--dir", filepath.Join(work, "none")}, "--dir"},
		{[]string{"--dir", file}, "--dir"},
		{[]string{"--dir", work, "--size", "1MiB"}, "--size"},
		{[]string{"--dir", work, "--size", "lots"}, "--size"},
		{[]string{"--dir", work, "--runtime", "0s"}, "--runtime"},
		{[]string{"--dir", work, "--long", "--drain-max", "1s"}, "--drain-max"},
		{[]string{"--dir", work, "--type", "gp9"}, "--type"},
	} {
		args := append([]string{"calibrate", "volume", "--out", out}, c.args...)
		if stdout, stderr, err := persistlab(t, args...); err == nil || !strings.Contains(stderr, c.flag) || !strings.Contains(stderr, "want") || stdout != "" {
			t.Errorf("%v: %v\n%s%s", c.args, err, stdout, stderr)
		}
	}
	if got := names(t, work); !slices.Equal(got, []string{"f", "ro"}) {
		t.Errorf("the refused probes left %v", got)
	}
}

// writeVolumeProfile writes a volume profile of a gp3 with the figures given.
func writeVolumeProfile(t *testing.T, path string, figures [][2]string) {
	t.Helper()
	p := &profile.Profile{Schema: profile.Schema, Kind: "volume", AppliesTo: map[string]string{"type": "gp3"},
		Measured: profile.Measured{Target: "probe-vm:/mnt/data", When: "2026-11-28T04:00:00Z", Commit: "abc1234",
			Machine: profile.Machine{Hostname: "probe-vm", CPU: "Intel Xeon", Kernel: "Linux 6.1 x86_64"}},
		HeldOut: []profile.HeldOut{{Point: "4 KiB random reads at depth 8", Unit: "IOPS", Predicted: 3000, Measured: 2900, Error: 100.0 / 2900}}}
	for _, f := range figures {
		p.Figures = append(p.Figures, profile.Figure{Option: f[0], Value: f[1], Provenance: "measured", How: "a test's figure"})
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A volume profile reaches the entries of its type: a gp3 takes the latency and declines an IOPS
// below gp3's minimum (saying so), an entry's own latency wins, a pd-ssd takes nothing. lab model
// and the scenario's provenance show the figure as measured.
func TestVolumeProfileReachesItsTypesEntries(t *testing.T) {
	work := t.TempDir()
	prof := filepath.Join(work, "gp3.yaml")
	writeVolumeProfile(t, prof, [][2]string{{"latency", "5ms"}, {"iops", "2990"}})
	scen := filepath.Join(work, "s.yaml")
	os.WriteFile(scen, []byte(`name: volprof
workload: {type: fio, rw: randread, iodepth: 1, direct: true, engine: libaio, file_size: 16MiB, runtime: 1s, time_based: true}
backends:
  - {name: volume, options: {type: gp3, size: 20GiB}}
  - {name: volume, label: own, options: {type: gp3, size: 20GiB, latency: 3ms}}
  - {name: volume, label: pd, options: {type: pd-ssd, size: 20GiB}}
repeat: 1
`), 0o644)
	stdout, stderr, err := persistlab(t, "run", scen, "--profile", prof, "--dry-run")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	for _, want := range []string{"they replace the volume model's defaults for volume\n", "own sets latency itself",
		"own cannot take iops 2990",
		"volume cannot take iops 2990, so it keeps its model's own: volume gp3: iops 2990: want 3000",
		"not for pd (its type is pd-ssd; the profile measured type gp3", "held-out 4 KiB random reads at depth 8 within 3.4%"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the run does not say %q:\n%s", want, stderr)
		}
	}
	var b bytes.Buffer
	if err := cmdScenariosShow([]string{scen, "--provenance", "--profile", prof}, &b); err != nil {
		t.Fatal(err)
	}
	section := func(text, from, to string) string {
		_, after, _ := strings.Cut(text, from)
		before, _, _ := strings.Cut(after, to)
		return before
	}
	gp3, pd := section(b.String(), "backend volume:", "backend own"), section(b.String(), "backend pd", "(every figure")
	if !strings.Contains(gp3, "5ms") || !strings.Contains(gp3, "measured on probe-vm:/mnt/data") || strings.Contains(pd, "measured") {
		t.Errorf("provenance:\n%s", b.String())
	}
	b.Reset()
	if err := cmdLabModel([]string{"volume", "--profile", prof}, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2 volume figures as profile") || !strings.Contains(b.String(), "2990 IOPS") {
		t.Errorf("lab model:\n%s", b.String())
	}
}

// run --profile changes the emulated volume: with a measured 20 ms, every depth-1 read of the
// gp3 entry waits at least 20 ms (the model's default is 1 ms), and the results record what the
// entry took.
func TestRunWithAVolumeProfileChangesTheVolume(t *testing.T) {
	needVolumeProbe(t)
	work := t.TempDir()
	prof := filepath.Join(work, "gp3.yaml")
	writeVolumeProfile(t, prof, [][2]string{{"latency", "20ms"}})
	scen := filepath.Join(work, "s.yaml")
	os.WriteFile(scen, []byte(`name: volrun
workload: {type: fio, rw: randread, iodepth: 1, direct: true, engine: libaio, file_size: 16MiB, runtime: 2s, time_based: true, prefill: true}
backends: [{name: volume, options: {type: gp3, size: 20GiB, ceiling_probe: "0"}}]
repeat: 1
`), 0o644)
	out := filepath.Join(work, "r.json")
	if stdout, stderr, err := persistlab(t, "run", scen, "--profile", prof, "--out", out, "--workdir", filepath.Join(work, "w")); err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil || len(r.Cells) != 1 {
		t.Fatalf("%v %+v", err, r)
	}
	if u := r.Scenario.ProfileUsed; u == nil || !u.Took("volume", "latency") || r.Scenario.Backends[0].Options["latency"] != "20ms" {
		t.Errorf("profile used %+v, options %v", u, r.Scenario.Backends[0].Options)
	}
	if p50 := r.Cells[0].M("read_lat_p50_ms"); p50 < 20 {
		t.Errorf("depth-1 reads took %.2f ms at the median: the profile's 20 ms service time did not reach the volume", p50)
	}
}

// With --long on a lab gp2 whose bucket is scaled to drain in seconds (1% of 5.4 million
// credits), the drain finds the rate falling from the burst to the baseline, and credit_scale
// recovers the scale: the credits counted do not depend on how fast this machine reaches them.
func TestCalibrateVolumeLongFindsTheBurstBucket(t *testing.T) {
	needVolumeProbe(t)
	dir := t.TempDir()
	lab, labOut := startLabVolume(t, dir, "--type", "gp2", "--size", "100GiB", "--credit-scale", "0.01")
	t.Cleanup(func() {
		lab.Process.Signal(syscall.SIGINT)
		if err := lab.Wait(); err != nil {
			t.Errorf("lab volume: %v\n%s", err, labOut.String())
		}
	})
	out := filepath.Join(t.TempDir(), "gp2.yaml")
	stdout, stderr, err := persistlab(t, "calibrate", "volume", "--dir", dir, "--type", "gp2", "--runtime", "2s", "--size", "64MiB", "--long", "--drain-max", "90s", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	p, err := profile.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	scale, err := strconv.ParseFloat(p.Options()["credit_scale"], 64)
	if err != nil || scale < 0.0085 || scale > 0.0115 {
		t.Errorf("credit_scale %q (%s): want 0.01 within 15%%\n%s", p.Options()["credit_scale"], whyNotFitted(p, "credit_scale"), stdout)
	}
	for _, option := range []string{"iops", "throughput"} { // gp2 provisions neither: said, not dropped
		if why := whyNotFitted(p, option); !strings.Contains(why, "gp2") || p.Options()[option] != "" {
			t.Errorf("%s: %q", option, why)
		}
	}
	if !strings.Contains(stdout, "burst drain: 4 KiB random reads at depth 32 ran at") {
		t.Errorf("no drain in the answer:\n%s", stdout)
	}
	t.Logf("credit_scale %g against 0.01\n%s", scale, stdout)
}
