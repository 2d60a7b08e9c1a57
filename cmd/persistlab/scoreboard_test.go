package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
)

// seed004Shards are the committed shards of seed 004's full run.
const seed004Shards = "docs/runs/ebs-git-def3e16/shard-*.json"

// repoFiles expands a glob relative to the repository's root into paths relative to it.
func repoFiles(t *testing.T, glob string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("../..", glob))
	if err != nil || len(matches) == 0 {
		t.Fatalf("%s matches no file: %v", glob, err)
	}
	for i, m := range matches {
		matches[i] = strings.TrimPrefix(m, "../../")
	}
	return matches
}

// persistlabAtRoot runs the binary in the repository's root, where the docs' commands run.
func persistlabAtRoot(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = "../.."
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), err
}

// docScoreboard finds the scoreboard commands docs/fidelity.md holds the output of.
var docScoreboard = regexp.MustCompile(`<!-- begin: (persistlab report --scoreboard [^>]*?) -->`)

// docs/fidelity.md holds, between its markers, what `persistlab report --scoreboard` prints
// from the committed results files, seed 004's among them.
func TestDocsHoldTheSeedScoreboards(t *testing.T) {
	data, err := os.ReadFile("../../docs/fidelity.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	found := docScoreboard.FindAllStringSubmatch(doc, -1)
	seed004 := false
	for _, m := range found {
		command := m[1]
		var args []string
		for _, a := range strings.Fields(command)[1:] {
			if strings.Contains(a, "*") {
				args = append(args, repoFiles(t, a)...)
				continue
			}
			args = append(args, a)
		}
		seed004 = seed004 || strings.Contains(command, seed004Shards)
		stdout, stderr, err := persistlabAtRoot(t, args...)
		if err != nil {
			t.Errorf("`%s`: %v\n%s", command, err, stderr)
			continue
		}
		if err := checkGenerated(doc, command, stdout); err != nil {
			t.Errorf("docs/fidelity.md: %v", err)
			continue
		}
		// The same check must catch a block one figure off the command's output: its first digit
		// (in its title or its table), changed.
		at := strings.Index(doc, m[0]) + len(m[0])
		digit := at + strings.IndexAny(doc[at:], "0123456789")
		changed := doc[:digit] + string('0'+(doc[digit]-'0'+1)%10) + doc[digit+1:]
		if checkGenerated(changed, command, stdout) == nil {
			t.Errorf("docs/fidelity.md with a changed figure passes the check of `%s`", command)
		}
	}
	if !seed004 {
		t.Errorf("docs/fidelity.md holds no scoreboard generated from %s (found %d)", seed004Shards, len(found))
	}
}

// report reads the shards of one run as the file persistlab merge writes of them, and
// --scoreboard prints the same scoreboard of both, in every format.
func TestReportScoreboardOfShardsIsTheMergedFiles(t *testing.T) {
	shards := repoFiles(t, seed004Shards)
	merged := filepath.Join(t.TempDir(), "all.json")
	if _, stderr, err := persistlabAtRoot(t, append(append([]string{"merge"}, shards...), "--out", merged)...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, format := range []string{"text", "markdown", "json"} {
		fromShards, stderr, err := persistlabAtRoot(t, append([]string{"report", "--scoreboard", "--format", format}, shards...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, stderr)
		}
		fromMerged, _, err := persistlabAtRoot(t, "report", "--scoreboard", "--format", format, merged)
		if err != nil || fromShards != fromMerged {
			t.Errorf("%s: the shards' scoreboard differs from the merged file's (%v):\n%s\n%s", format, err, fromShards, fromMerged)
		}
		if format != "json" {
			continue
		}
		var s report.ScoreboardSummary
		if err := json.Unmarshal([]byte(fromShards), &s); err != nil {
			t.Fatalf("%v\n%s", err, fromShards)
		}
		var tally report.TallySummary
		for _, sc := range s.Scores {
			switch sc.Judged {
			case "within":
				tally.Within++
				tally.Predictions++
			case "miss":
				tally.Predictions++
			}
			if (sc.Ours == nil) != (sc.Judged == "not measured") {
				t.Errorf("%+v", sc)
			}
		}
		if s.Seed != "004" || tally.Predictions == 0 || tally.Predictions != s.Tally.Predictions || tally.Within != s.Tally.Within {
			t.Errorf("seed %q, tally %+v against its scores' %+v", s.Seed, s.Tally, tally)
		}
	}
	whole, _, err := persistlabAtRoot(t, append([]string{"report"}, shards...)...)
	if err != nil || !strings.Contains(whole, "scoreboard, the lab's fidelity to seed 004") {
		t.Errorf("report of the shards: %v\n%s", err, whole)
	}
}

// --scoreboard says what it cannot do: beside another view, of a run that scores no seed, or of
// files that are not one run's shards; and no output of report replaces a shard it reads.
func TestReportScoreboardRefusals(t *testing.T) {
	shards := repoFiles(t, seed004Shards)
	if _, stderr, err := persistlabAtRoot(t, "report", "--scoreboard", "--detail", shards[0]); err == nil || !strings.Contains(stderr, "--scoreboard") || !strings.Contains(stderr, "--detail") {
		t.Errorf("--detail: %v %s", err, stderr)
	}
	if _, stderr, err := persistlabAtRoot(t, "report", "--scoreboard", shards[0], shards[0]); err == nil || !strings.Contains(stderr, "given twice") {
		t.Errorf("a shard twice: %v %s", err, stderr)
	}
	if _, stderr, err := persistlabAtRoot(t, append(append([]string{"report"}, shards...), "--csv", shards[1], "--force")...); err == nil || !strings.Contains(stderr, "the results file being read (2 of") {
		t.Errorf("--csv over a shard being read: %v %s", err, stderr)
	}
	r, err := results.Load(filepath.Join("../..", shards[0]))
	if err != nil {
		t.Fatal(err)
	}
	r.Scenario.Seed = ""
	unseeded := filepath.Join(t.TempDir(), "unseeded.json")
	if err := r.Save(unseeded, nil); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := persistlabAtRoot(t, "report", "--scoreboard", unseeded); err == nil || !strings.Contains(stderr, "no seed") || !strings.Contains(stderr, "004") {
		t.Errorf("a run of no seed: %v %s", err, stderr)
	}
}

// A results file records the commit its binary was built from, as the build stamped it: a binary
// run from inside another checkout, in its directory, records the stamp and never that checkout's
// HEAD, and an unstamped binary records no commit it could not know.
func TestRunRecordsTheBuildStampNotTheCheckoutsHead(t *testing.T) {
	checkout := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", checkout, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "another project")
	head := git("rev-parse", "--short", "HEAD")
	stamped := filepath.Join(checkout, "persistlab-stamped")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X persistlab/internal/sysinfo.buildCommit=abc1234", "-o", stamped, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	unstamped := filepath.Join(checkout, "persistlab-unstamped")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", unstamped, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for bin, want := range map[string]string{stamped: "abc1234", unstamped: ""} {
		out := filepath.Join(checkout, filepath.Base(bin)+".json")
		cmd := exec.Command(bin, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "2", "--duration", "1s", "--warmup", "0s",
			"--repeat", "1", "--out", out, "--workdir", filepath.Join(t.TempDir(), "scratch"))
		cmd.Dir = checkout
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, msg)
		}
		r, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		got, recorded := r.Versions["persistlab_commit"]
		if got != want || (want == "" && recorded) {
			t.Errorf("%s: persistlab_commit %q (recorded %v), want %q; the checkout's HEAD is %s", filepath.Base(bin), got, recorded, want, head)
		}
	}
}
