package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"persistlab/advise"
	"persistlab/profile"
)

// TestAdviseRanksMeasuredCandidatesAndReusesThem runs a short advise (cells of 200 requests at
// 40/s) on a GCE VM: the instance's
// disk and Litestream at 60 s lose acknowledged writes in a crash, SQLite fsyncing every commit on
// a Persistent Disk loses none, so "lost_acked == 0" leaves the disk alone; run again in the same
// directory, nothing is run again; a budget below the disk's price meets nothing and exits 4.
func TestAdviseRanksMeasuredCandidatesAndReusesThem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "advise")
	disk := "pd-ssd-10g-sync-full"
	args := []string{"advise", "--platform", "n1-standard-2", "--rate", "40", "--candidates", "local,litestream-60s," + disk,
		"--require", "lost_acked == 0", "--time", "3m", "--crashes", "1", "--dir", dir, "--format", "json"}
	stdout, stderr, err := persistlab(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(a.Ranked) != 3 || a.Ranked[0].Candidate.Name != disk || !a.Ranked[0].Meets {
		t.Fatalf("ranked %+v: want %s first, meeting lost_acked == 0", a.Ranked, disk)
	}
	for _, v := range a.Ranked[1:] {
		lost := v.Figures.Crash[advise.MetricLostAcked]
		if v.Meets || v.Figures.Crashes != 1 || lost < 1 {
			t.Errorf("%s: meets %v after %d crashes losing %g: want it to lose acknowledged writes", v.Candidate.Name, v.Meets, v.Figures.Crashes, lost)
		}
	}
	if !strings.HasPrefix(a.Answer, disk+" meets every requirement") {
		t.Errorf("answer %q: want it to open with %s", a.Answer, disk)
	}
	// Every figure names its evidence, a results file in the advise directory.
	for _, v := range a.Ranked {
		if len(v.Figures.Evidence) != 3 {
			t.Errorf("%s: evidence %v, want the two steady rows and the crash row", v.Candidate.Name, v.Figures.Evidence)
		}
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 6 {
		t.Fatalf("results files %v: want a steady and a crash file per candidate", files)
	}
	modified := map[string]time.Time{}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		modified[f] = st.ModTime()
	}
	page := filepath.Join(filepath.Dir(dir), "advice.html")
	budget := append(args[:len(args)-2:len(args)-2], "--require", "usd_per_month < 0.01", "--format", "text", "--html", page)
	stdout, stderr, err = persistlab(t, budget...)
	if code := exitCode(err); code != advise.ExitNoneMeets {
		t.Fatalf("a budget of a cent: exit %d (%v), want %d\n%s\n%s", code, err, advise.ExitNoneMeets, stdout, stderr)
	}
	if got := strings.Count(stderr, "not run again"); got != 6 {
		t.Errorf("%d of 6 scenarios reused:\n%s", got, stderr)
	}
	for f, was := range modified {
		if st, err := os.Stat(f); err != nil || !st.ModTime().Equal(was) {
			t.Errorf("%s was written again", f)
		}
	}
	if !strings.Contains(stdout, "answer: no candidate meets every requirement") {
		t.Errorf("the answer does not say none meets:\n%s", stdout)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), "<svg") || !strings.Contains(string(html), "no candidate meets every requirement") {
		t.Errorf("--html: %v; the page holds no chart or no answer", err)
	}
}

// TestAdviseRefusesBadInputBeforeAnythingRuns: an unknown requirement metric, a rate the platform
// cannot serve, a budget too small for one cell per candidate.
func TestAdviseRefusesBadInputBeforeAnythingRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "advise")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--rate", "20", "--require", "p42 < 1ms"}, []string{"--require", "p42 < 1ms", "p95", "lost_acked"}},
		{[]string{"--rate", "500", "--require", "p95 < 1s"}, []string{"--rate", "500", "at most 213 requests/s"}},
		{[]string{"--rate", "20", "--require", "p95 < 1s", "--time", "1m"}, []string{"--time", "1m0s", "at least"}},
		{[]string{"--rate", "20", "--require", "p95 < 1s", "--platform", "m5.large"}, []string{"--platform", "m5.large", "cloudrun", "n1-standard-2"}},
		{[]string{"--rate", "20"}, []string{"--require", "at least one requirement"}},
		{[]string{"--rate", "20", "--require", "p95 < 1s", "--cpus", "0.5"}, []string{"--cpus", "0.5", "whole vCPUs"}},
	}
	if runtime.NumCPU() < advise.CloudRunMaxCPUs { // more vCPUs than this machine has, which Cloud Run offers
		cases = append(cases, struct {
			args []string
			want []string
		}{[]string{"--rate", "20", "--require", "p95 < 1s", "--cpus", strconv.Itoa(runtime.NumCPU() + 1)}, []string{"--cpus", "vCPUs here"}})
	}
	for _, c := range cases {
		stdout, stderr, err := persistlab(t, append([]string{"advise", "--dir", dir}, c.args...)...)
		if exitCode(err) != 1 {
			t.Errorf("%v: exit %d, want 1\n%s%s", c.args, exitCode(err), stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: the error does not name %q:\n%s", c.args, w, stderr)
			}
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("%v: the advise directory was made before the input was checked", c.args)
		}
	}
}

// TestAdviseGitPrunesByCrashRunsAndJudgesTheSustainedPace: seed 004's crawler on a c4.large, a
// dry sc1 against gp3. The crash run on gp3 with git's defaults loses commits acknowledged seconds
// before it, so that setting runs no steady cells; with fsync, sc1 (which borrows gp3's crash run)
// sustains less than gp3, whose bill alone is within a dollar.
func TestAdviseGitPrunesByCrashRunsAndJudgesTheSustainedPace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "advise")
	args := []string{"advise", "--app", "git", "--files", "50", "--rate", "5", "--candidates", "gp3-10g-git,gp3-10g-fsync,sc1-125g-fsync",
		"--require", "lost_acked <= 1s", "--time", "5m", "--crashes", "1", "--dir", dir, "--format", "json"}
	stdout, stderr, err := persistlab(t, args...)
	if code := exitCode(err); code != 0 && code != advise.ExitNoneMeets {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	fig := map[string]advise.Figures{}
	for _, v := range a.Ranked {
		fig[v.Candidate.Name] = v.Figures
	}
	if len(fig) != 3 {
		t.Fatalf("ranked %+v: want the 3 named candidates", a.Ranked)
	}
	for _, name := range []string{"gp3-10g-git"} {
		f := fig[name]
		if f.Crashes != 1 || f.Crash[advise.MetricLostAcked] < 1 || len(f.AtRate) != 0 {
			t.Errorf("%s: %d crashes losing %g, steady figures %v: want git's defaults to lose acknowledged commits and run no steady cell", name, f.Crashes, f.Crash[advise.MetricLostAcked], f.AtRate)
		}
	}
	gp3, sc1 := fig["gp3-10g-fsync"], fig["sc1-125g-fsync"]
	// With core.fsync git syncs a ref's lock file but not the directory after the rename: a crash
	// may lose the last commit, acknowledged milliseconds before it, but nothing older.
	if gp3.Crashes != 1 || gp3.Crash[advise.MetricLostWindow] > 1000 || sc1.Crash[advise.MetricLostWindow] != gp3.Crash[advise.MetricLostWindow] {
		t.Errorf("fsync: gp3 lost a commit acknowledged %g ms before the crash (of %d crashes), sc1 (borrowed) %g ms: want none older than 1 s, and the same",
			gp3.Crash[advise.MetricLostWindow], gp3.Crashes, sc1.Crash[advise.MetricLostWindow])
	}
	if !(sc1.AtRate[advise.PaceMetric] < gp3.AtRate[advise.PaceMetric]) || sc1.AtRate["writeback_s"] <= gp3.AtRate["writeback_s"] {
		t.Errorf("sc1 sustains %g changes/s (write-back %g s), gp3 %g (%g s): want the dry HDD behind", sc1.AtRate[advise.PaceMetric], sc1.AtRate["writeback_s"],
			gp3.AtRate[advise.PaceMetric], gp3.AtRate["writeback_s"])
	}
	if a.Ranked[0].Candidate.Name != "gp3-10g-fsync" {
		t.Errorf("first %s: want gp3-10g-fsync, the one keeping up without losing a commit", a.Ranked[0].Candidate.Name)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 4 {
		t.Errorf("results files %v: want two crash files (one per fsync setting, on gp3) and two steady files (the fsync candidates)", files)
	}
	// A budget below every candidate exits 4, and nothing runs again.
	budget := append(args[:len(args)-2:len(args)-2], "--require", "usd_per_month < 0.5", "--format", "text")
	stdout, stderr, err = persistlab(t, budget...)
	if code := exitCode(err); code != advise.ExitNoneMeets {
		t.Fatalf("a budget of 50 cents: exit %d (%v), want %d\n%s\n%s", code, err, advise.ExitNoneMeets, stdout, stderr)
	}
	if got := strings.Count(stderr, "not run again"); got != 4 {
		t.Errorf("%d of 4 scenarios reused:\n%s", got, stderr)
	}
}

// A run is reused only under the profile it ran with: none for none, the same figures for a
// profile (wherever its file now lies), never another's.
func TestAdviseReusesARunOnlyUnderItsOwnProfile(t *testing.T) {
	dir := t.TempDir()
	mine, moved, other := filepath.Join(dir, "mine.yaml"), filepath.Join(dir, "moved.yaml"), filepath.Join(dir, "other.yaml")
	writeProfile(t, mine, map[string]string{"read_median": "50ms"})
	writeProfile(t, moved, map[string]string{"read_median": "50ms"})
	writeProfile(t, other, map[string]string{"read_median": "20ms"})
	p, err := profile.Load(mine)
	if err != nil {
		t.Fatal(err)
	}
	// As a results file keeps it: the profile's figures through JSON.
	data, err := json.Marshal(&profile.Use{Path: mine, Profile: *p})
	if err != nil {
		t.Fatal(err)
	}
	used := &profile.Use{}
	if err := json.Unmarshal(data, used); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		used *profile.Use
		path string
		want bool
	}{
		{nil, "", true},
		{nil, mine, false},
		{used, "", false},
		{used, mine, true},
		{used, moved, true},
		{used, other, false},
		{used, filepath.Join(dir, "gone.yaml"), false},
	} {
		if got := sameProfile(c.used, c.path); got != c.want {
			t.Errorf("run with %v, asked with %q: reused %v, want %v", c.used != nil, filepath.Base(c.path), got, c.want)
		}
	}
}

// With an instance profile the trust statement says the app's CPU ran at the target's measured
// speed, naming the profile; without one, that the latencies are this machine's and how to
// measure the target's.
func TestAdviseTrustSaysWhatAnInstanceProfileDoes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "instance.yaml")
	writeInstanceProfile(t, path, "3.7", "1")
	p := &advise.Plan{App: advise.App{Name: "counter"}, Platform: advise.Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20},
		Rate: 20, Connections: 4, Crashes: 3, DBBytes: 100 << 20}
	without, with := adviseTrust(p, ""), adviseTrust(p, path)
	if !strings.Contains(without[0], "this machine's") || !strings.Contains(without[0], "calibrate instance") {
		t.Errorf("without a profile: %q", without[0])
	}
	if !strings.Contains(with[0], "slowed to the target's measured speed") || !strings.Contains(with[0], path) || !strings.Contains(with[0], "probe-vm") {
		t.Errorf("with the instance profile %s: %q", path, with[0])
	}
	if strings.Contains(strings.Join(with, " "), "measured replace the model's") {
		t.Errorf("an instance profile is said to replace the bucket's and volumes' figures: %q", with)
	}
}
