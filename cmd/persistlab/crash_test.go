package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

func TestCrashRuns(t *testing.T) {
	work := t.TempDir()
	spec := filepath.Join(work, "crash.yaml")
	os.WriteFile(spec, []byte(`name: crash-test
workload:
  type: counter
backends: [{name: local}, {name: litestream, options: {sync_interval: 300ms, model: no-delay}}, {name: gcsfuse, options: {model: no-delay}}]
sweep: {vus: 4}
duration: 2s
crash: {count: 3, after: 3s..4500ms, seed: 9}
`), 0o644)
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", spec, "--out", out, "--workdir", filepath.Join(work, "scratch"))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusComplete || len(r.Crashes) != 9 || len(r.CrashSummaries) != 3 {
		t.Fatalf("status %s, %d crashes, %d summaries", r.Status, len(r.Crashes), len(r.CrashSummaries))
	}
	// Every crash's invariants hold wherever the kill landed, even before anything was acknowledged
	// (a busy machine may be that slow); the loss and position bounds are only tested by crashes that
	// acknowledged (and replicated) something, which at least one crash of each backend must have.
	replicated := 0           // litestream crashes whose replica held something at the kill
	acked := map[string]int{} // crashes per backend that acknowledged something
	localAckedEvery := true   // whether every local crash acknowledged something
	for _, c := range r.Crashes {
		var pos any = c.Position
		if c.Position != nil {
			pos = *c.Position
		}
		t.Logf("%s crash %d: killed at %.2f s, acknowledged %d, recovered %d, lost %d, unacked kept %d, position %v",
			c.Backend, c.Repeat, c.KillAfterS, c.MaxAcked, c.Recovered, c.Lost, c.UnackedKept, pos)
		if c.Failure != "" {
			t.Errorf("%s crash %d failed: %s", c.Backend, c.Repeat, c.Failure)
			continue
		}
		if c.MaxAcked > 0 {
			acked[c.Backend]++
		} else if c.Backend == "local" {
			localAckedEvery = false
		}
		// Counts are exact: lost plus recovered accounts for every acknowledged write, and what
		// survived unacknowledged is at most one in-flight request per VU.
		if c.Recovered+c.Lost-c.UnackedKept != c.MaxAcked || c.UnackedKept > int64(vusOf(c.Cell)) {
			t.Errorf("%s crash %d: acked %d, recovered %d, lost %d, unacked kept %d", c.Backend, c.Repeat, c.MaxAcked, c.Recovered, c.Lost, c.UnackedKept)
		}
		if c.Integrity != "ok" {
			t.Errorf("%s crash %d: integrity %q", c.Backend, c.Repeat, c.Integrity)
		}
		switch c.Backend {
		case "local": // the disk was thrown away: everything is lost, and said so
			if c.Recovered != 0 || c.Lost != c.MaxAcked || c.DBExisted {
				t.Errorf("local crash %d: recovered %d of %d", c.Repeat, c.Recovered, c.MaxAcked)
			}
		case "litestream": // loss bounded by the replica position recorded at the kill
			if c.Position == nil {
				t.Errorf("litestream crash %d recorded no replica position", c.Repeat)
				break
			}
			if c.Recovered < *c.Position || c.Lost > c.MaxAcked-*c.Position {
				t.Errorf("litestream crash %d: recovered %d, lost %d, position %v", c.Repeat, c.Recovered, c.Lost, c.Position)
			}
			if *c.Position > 0 {
				replicated++
			}
		}
	}
	for _, b := range []string{"local", "litestream", "gcsfuse"} {
		if acked[b] == 0 {
			t.Errorf("no %s crash acknowledged anything before its kill: its loss bound was never tested", b)
		}
	}
	if replicated == 0 {
		t.Error("no litestream crash had replicated anything by its kill: the position bound was never tested")
	}
	// The report says local lost everything when every local crash had something to lose (a crash
	// that acknowledged nothing lost nothing), and only then.
	if says := strings.Contains(stdout, "local lost every acknowledged write in every crash"); says != localAckedEvery {
		t.Errorf("the report says local lost everything: %v; every local crash acknowledged something: %v\n%s", says, localAckedEvery, stdout)
	}
	for _, s := range r.CrashSummaries {
		if s.BelowPosition != 0 {
			t.Errorf("%s recovered below its replica position %d times", s.Backend, s.BelowPosition)
		}
	}
	if left := append(mountsUnder(work), processesUsing(work)...); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestTwoInstancesOnOneGCSFuseDatabase(t *testing.T) {
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite-two-instances", "--vus", "4", "--duration", "2s", "--repeat", "1",
		"--cpu-per-request", "0s", "--out", out, "--workdir", filepath.Join(work, "scratch"))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 1 || r.Cells[0].Failure != "" {
		t.Fatalf("cells %+v", r.Cells)
	}
	c := r.Cells[0]
	// Whatever the two instances did to each other, the count read afterwards is accounted for: it
	// never exceeds the writes the instances answered, plus one in flight per VU, and the run says
	// how many updates were lost and whether the file is intact.
	if c.M("instances") != 2 || c.M("ok") == 0 || c.M("count_delta") < 0 || c.M("count_delta") > c.M("ok")+float64(vusOf(c.Cell)) || c.Facts["integrity"] == "" {
		t.Errorf("instances %v, ok %v, count grew %v, integrity %q", c.M("instances"), c.M("ok"), c.M("count_delta"), c.Facts["integrity"])
	}
	if _, ok := c.Metrics["app_cpu_util"]; !ok || c.M("app_cpu_util") <= 0 || c.M("app_cpu_s") <= 0 {
		t.Errorf("the instances' CPU: app_cpu_util %v, app_cpu_s %v", c.Metrics["app_cpu_util"], c.M("app_cpu_s"))
	}
	if !strings.Contains(stdout, "gcsfuse shared by 2 instances at once") {
		t.Errorf("no verdict on sharing:\n%s", stdout)
	}
	if left := append(mountsUnder(work), processesUsing(work)...); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	// Open loop: the instances' service-time histograms (from the actual send) merge like their
	// latency ones, so the cell reports both over every request of both instances.
	open := filepath.Join(work, "open.json")
	if stdout, stderr, err := persistlab(t, "run", "cloudrun-sqlite-two-instances", "--rate", "40", "--vus", "4", "--duration", "2s", "--repeat", "1",
		"--cpu-per-request", "0s", "--out", open, "--workdir", filepath.Join(work, "scratch-open")); err != nil {
		t.Fatalf("open loop: %v\n%s\n%s", err, stdout, stderr)
	}
	if r, err = report.Load(open); err != nil || len(r.Cells) != 1 {
		t.Fatalf("open loop results: %v", err)
	}
	c = r.Cells[0]
	if c.Histograms["service"] == "" || c.M("service_count") != c.M("count") || c.M("count") == 0 || c.M("service_avg_ms") > c.M("avg_ms")+1e-9 {
		t.Errorf("open loop over two instances: count %v service_count %v avg %v service_avg %v histograms %d",
			c.M("count"), c.M("service_count"), c.M("avg_ms"), c.M("service_avg_ms"), len(c.Histograms))
	}
	// Refused before any cell runs: no results file is written.
	_, stderr, err = persistlab(t, "run", "cloudrun-sqlite-two-instances", "--backend", "local", "--duration", "1s", "--out", filepath.Join(work, "l.json"))
	if _, statErr := os.Stat(filepath.Join(work, "l.json")); err == nil || !strings.Contains(stderr, "several instances can share") || statErr == nil {
		t.Errorf("local shared by two instances should be refused before any cell: %v %s", err, stderr)
	}
}

func vusOf(c scenario.Cell) int {
	n, _ := strconv.Atoi(c.Params["vus"])
	return n
}
