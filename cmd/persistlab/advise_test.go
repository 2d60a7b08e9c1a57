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
	"persistlab/report"
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
		{[]string{"--rate", "20", "--require", "p95 < 1s", "--k6-script", "../../examples/k6/seed-000.js"}, []string{"--k6-script", "seed-000.js", "http app", "counter"}},
		{[]string{"--app", "python", "--rate", "20", "--require", "p95 < 1s", "--k6-script", "no-such.js"}, []string{"--k6-script", "no-such.js", "k6 can read"}},
		{[]string{"--rate", "20", "--require", "p95 < 1s", "--cloudsql-rtt", "2s"}, []string{"--cloudsql-rtt", "2s", "0 to 1s"}},
		{[]string{"--rate", "20", "--require", "p95 < 1s", "--instances", "9"}, []string{"--instances", "9", "1 to 8"}},
		{[]string{"--rate", "20", "--require", "p95 < 1s", "--instances", "2", "--platform", "n1-standard-2"}, []string{"--instances", "2", "cloudrun"}},
		{[]string{"--rate", "20", "--require", "p95 < 1s", "--instances", "2", "--candidates", "litestream-1s"}, []string{"no candidate", "2 Cloud Run instances"}},
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

// TestAdviseDrivesTheSteadyRunsWithTheUsersK6Script: the user's k6 script (two requests an
// iteration, each checked) is the steady runs' load, where every 200 answer k6 counted passed
// its check; the crash runs keep persistlab's driver, which counts what was acknowledged and
// lost, and run no k6.
func TestAdviseDrivesTheSteadyRunsWithTheUsersK6Script(t *testing.T) {
	work := t.TempDir()
	app, script, dir := filepath.Join(work, "own.yaml"), filepath.Join(work, "mix.js"), filepath.Join(work, "advise")
	os.WriteFile(app, []byte(ownAckingApp("own", "backends: [{name: local}]\nsweep: {vus: 2}\nduration: 2s\n")), 0o644)
	os.WriteFile(script, []byte(`import http from 'k6/http';
import { check } from 'k6';
export default function() {
  check(http.post(__ENV.BASE_URL + '/count_up'), { 'counted': (r) => r.status === 200 });
  check(http.get(__ENV.BASE_URL + '/count'), { 'read': (r) => r.status === 200 });
}
`), 0o644)
	stdout, stderr, err := persistlab(t, "advise", "--app", app, "--k6-script", script, "--platform", "n1-standard-2", "--candidates", "local",
		"--rate", "40", "--require", "p95 < 1s", "--time", "1m", "--crashes", "1", "--dir", dir, "--format", "json")
	if err != nil && exitCode(err) != advise.ExitNoneMeets {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !strings.Contains(a.Question, "iterations/s of its k6 script mix.js") || len(a.Ranked) != 1 {
		t.Fatalf("question %q, ranked %+v", a.Question, a.Ranked)
	}
	if notes := strings.Join(a.Ranked[0].Figures.Notes, "\n"); !strings.Contains(notes, "an iteration): the bill is at those") {
		t.Errorf("notes %q: want the requests an iteration made", notes)
	}
	steady, err := report.Load(filepath.Join(dir, "local.steady.json"))
	if err != nil || len(steady.Cells) != 2 {
		t.Fatalf("steady results: %v, %+v", err, steady)
	}
	for _, c := range steady.Cells {
		if c.Failure != "" || c.M("ok") < 1 || c.M("checks_passed") != c.M("ok") || c.M("checks_failed") != 0 || c.Resolved["k6_script"] != script {
			t.Errorf("steady cell %d: failure %q, ok %v, checks passed %v failed %v, script %q: want k6 to have checked every answer",
				c.Index, c.Failure, c.M("ok"), c.M("checks_passed"), c.M("checks_failed"), c.Resolved["k6_script"])
		}
	}
	crash, err := report.Load(filepath.Join(dir, "local.crash.json"))
	if err != nil || len(crash.Crashes) != 1 {
		t.Fatalf("crash results: %v, %+v", err, crash)
	}
	if cr := crash.Crashes[0]; cr.Failure != "" || cr.MaxAcked < 1 || cr.Resolved["k6_script"] != "" {
		t.Errorf("the crash run: failure %q, %d acknowledged, script %q: want persistlab's driver to have counted what it acknowledged",
			cr.Failure, cr.MaxAcked, cr.Resolved["k6_script"])
	}
}

// TestAdviseTakesItsQuestionFromTheAppFilesAdviseSection: an app file's advise: section gives
// every input a flag would (its k6 script relative to the file), a flag replaces the section's
// value, and a bad value there is named by its field in the file, before anything runs.
func TestAdviseTakesItsQuestionFromTheAppFilesAdviseSection(t *testing.T) {
	work := t.TempDir()
	app := filepath.Join(work, "own.yaml")
	os.WriteFile(filepath.Join(work, "mix.js"), []byte("import http from 'k6/http';\nexport default function() { http.post(__ENV.BASE_URL + '/count_up'); }\n"), 0o644)
	text := ownAckingApp("own", `backends: [{name: local}]
sweep: {vus: 2}
duration: 2s
advise:
  platform: n1-standard-2
  rate: 25
  require: ["p95 < 200ms", "lost_acked == 0"]
  time: 10m
  crashes: 2
  candidates: [local, pd-ssd-10g]
  k6_script: mix.js
`)
	os.WriteFile(app, []byte(text), 0o644)
	dir := filepath.Join(work, "advise")
	_, stderr, err := persistlab(t, "advise", "--app", app, "--dir", dir, "--dry-run")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"from " + app + "'s advise section: candidates, crashes, k6_script, platform, rate, require, time",
		"at 25 iterations/s of mix.js on a n1-standard-2 VM", "p95 < 200ms; lost_acked == 0", "candidates: local, pd-ssd-10g",
		filepath.Join(work, "mix.js"), "then 2 crash runs", "(budget 10m0s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the plan does not say %q:\n%s", want, stderr)
		}
	}
	_, stderr, err = persistlab(t, "advise", "--app", app, "--dir", dir, "--dry-run", "--rate", "30", "--require", "p99 < 1s")
	if err != nil || !strings.Contains(stderr, "at 30 iterations") || !strings.Contains(stderr, "requirements: p99 < 1s\n") || strings.Contains(stderr, "rate,") {
		t.Errorf("flags over the section: %v\n%s", err, stderr)
	}
	os.WriteFile(app, []byte(strings.Replace(text, "rate: 25", "rate: -3", 1)), 0o644)
	_, stderr, err = persistlab(t, "advise", "--app", app, "--dir", dir, "--dry-run")
	if exitCode(err) != 1 || !strings.Contains(stderr, "advise.rate ("+app+")") || !strings.Contains(stderr, "-3") {
		t.Errorf("a bad rate in the section: exit %d\n%s", exitCode(err), stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("a dry run made the advise directory")
	}
}
