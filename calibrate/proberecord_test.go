package calibrate

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"persistlab/lab/bucket"
)

// Every object a probe writes is one its plan names before the first request, and so one a
// record holds: the lab's own log of writes is the check.
func TestThePlanNamesEveryObjectTheProbeWrites(t *testing.T) {
	srv, err := bucket.Start(bucket.Config{Buckets: []string{"persistlab"}, Model: bucket.NoDelayModel(), StorageRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client, err := NewClient(&http.Client{}, srv.JSONEndpoint(), "persistlab")
	if err != nil {
		t.Fatal(err)
	}
	plan := DefaultBucketPlan()
	plan.Samples, plan.Burst = MinSamples, MinBurst
	prefix := ProbePrefix(NewProbeID())
	named := plan.Objects(prefix)
	start := time.Now()
	p := &BucketProbe{Client: client, Plan: plan, Prefix: prefix}
	if _, err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	writes := srv.WritesSince(start)
	if len(writes) < plan.Samples {
		t.Fatalf("the lab saw %d writes", len(writes))
	}
	for _, w := range writes {
		if name := strings.TrimPrefix(w.Object, "persistlab/"); !slices.Contains(named, name) {
			t.Errorf("wrote %s, which the plan does not name", name)
		}
	}
	if _, left := p.Cleanup(context.Background()); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// A record is found only once no probe holds it, and only if this user alone could have written
// it and every name in it lies under its own prefix.
func TestFindDeadProbesTrustsOnlyItsOwnRecords(t *testing.T) {
	dir := t.TempDir()
	rec := func(id string) ProbeRecord {
		return ProbeRecord{PID: 1, Endpoint: "http://localhost:1/storage/v1/", Bucket: "persistlab", Prefix: ProbePrefix(id), Objects: []string{ProbePrefix(id) + "small/0000"}}
	}
	live, err := HoldProbeRecord(ProbeRecordPath(dir, "aaaaaaaaaaaa"), rec("aaaaaaaaaaaa"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(id string, r ProbeRecord, mode os.FileMode) {
		data, _ := json.Marshal(r)
		path := ProbeRecordPath(dir, id)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("bbbbbbbbbbbb", rec("bbbbbbbbbbbb"), 0o600) // a killed probe's
	other := rec("bbbbbbbbbbbb")
	other.Bucket = "another-bucket"
	if _, err := HoldProbeRecord(ProbeRecordPath(dir, "bbbbbbbbbbbb"), other); err == nil {
		t.Error("a record was written over another probe's")
	}
	write("cccccccccccc", rec("cccccccccccc"), 0o666) // anyone could have written it
	outside := rec("dddddddddddd")
	outside.Objects = append(outside.Objects, "important/data")
	write("dddddddddddd", outside, 0o600)
	otherPrefix := rec("eeeeeeeeeeee")
	otherPrefix.Prefix, otherPrefix.Objects = "", []string{"important/data"}
	write("eeeeeeeeeeee", otherPrefix, 0o600)

	dead, skipped := FindDeadProbes(dir)
	if len(dead) != 1 || dead[0].Record.Prefix != ProbePrefix("bbbbbbbbbbbb") || dead[0].Record.Bucket != "persistlab" {
		t.Errorf("dead: %+v", dead)
	}
	for _, d := range dead {
		d.Close()
	}
	if len(skipped) != 3 {
		t.Errorf("skipped %d, want the three untrusted: %v", len(skipped), skipped)
	}
	for _, want := range []string{"cccccccccccc.json: not a regular file", "dddddddddddd.json: object \"important/data\"", "eeeeeeeeeeee.json: prefix"} {
		if !slices.ContainsFunc(skipped, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("no %q in %v", want, skipped)
		}
	}
	live.Release(true)
	if left, _ := filepath.Glob(filepath.Join(dir, "persistlab-probe-aaaaaaaaaaaa.json*")); len(left) > 0 {
		t.Errorf("a released record with nothing left stays: %v", left)
	}
}
