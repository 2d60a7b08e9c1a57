package damon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"persistlab/internal/damon/damontest"
	"persistlab/internal/proc"
)

// Pause turns off the running kdamond with a page-out scheme, records it first, and leaves alone a
// kdamond that was off already and one that does not page out; Restore turns on exactly the one
// it turned off, removes the record, and a second Restore does nothing.
func TestPauseAndRestoreTouchOnlyWhatWasRunning(t *testing.T) {
	root := damontest.Tree(t, damontest.Kdamond{State: "on", Action: "pageout"}, damontest.Kdamond{State: "off", Action: "pageout"},
		damontest.Kdamond{State: "on", Action: "stat"})
	dir := t.TempDir()
	rec, err := Pause(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Kdamonds) != 1 || rec.Kdamonds[0].Index != 0 || !strings.Contains(strings.Join(rec.Policies(), ""), "kdamond 0 (DAMON, paddr): pages out page cache idle for 60 s") {
		t.Fatalf("paused %+v, want kdamond 0 alone, described", rec)
	}
	for k, want := range []string{"off", "off", "on"} {
		if got := damontest.State(t, root, k); got != want {
			t.Errorf("after Pause kdamond %d is %q, want %q", k, got, want)
		}
	}
	saved, ok := Recorded(dir)
	if !ok || len(saved.Kdamonds) != 1 || saved.Kdamonds[0].Index != 0 || saved.Root != root || saved.Boot != proc.BootID() {
		t.Fatalf("record %+v (found %v), want kdamond 0 under %s in this boot", saved, ok, root)
	}
	if st, err := os.Stat(filepath.Join(dir, RecordName)); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("the record is readable by others or missing: %v %v", st, err)
	}

	done, err := Restore(dir)
	if err != nil || len(done) != 1 || !strings.Contains(done[0], "kdamond 0 turned on again") {
		t.Fatalf("Restore said %q, %v", done, err)
	}
	for k, want := range []string{"on", "off", "on"} {
		if got := damontest.State(t, root, k); got != want {
			t.Errorf("after Restore kdamond %d is %q, want %q", k, got, want)
		}
	}
	if _, ok := Recorded(dir); ok {
		t.Error("the record stays after everything was restored")
	}

	damontest.SetState(t, root, 0, "off") // the owner turns it off after the run: not ours any more
	if done, err := Restore(dir); err != nil || len(done) != 0 || damontest.State(t, root, 0) != "off" {
		t.Errorf("a second Restore did %q, %v; kdamond 0 is %q, want it left off", done, err, damontest.State(t, root, 0))
	}
}

// With no running page-out policy, Pause writes nothing, not even a record.
func TestPauseWithNothingRunningWritesNothing(t *testing.T) {
	root := damontest.Tree(t, damontest.Kdamond{State: "off", Action: "pageout"})
	dir := t.TempDir()
	rec, err := Pause(root, dir)
	if err != nil || len(rec.Kdamonds) != 0 {
		t.Fatalf("Pause %+v, %v: want nothing paused", rec, err)
	}
	if _, err := os.Stat(filepath.Join(dir, RecordName)); !os.IsNotExist(err) {
		t.Errorf("a record was written for nothing: %v", err)
	}
	if got := damontest.State(t, root, 0); got != "off" {
		t.Errorf("kdamond 0 is %q", got)
	}
}

// A kdamond someone turned on again meanwhile is left as it is; one whose schemes someone changed
// while it was off is not turned on, and the record stays for clean to try again.
func TestRestoreLeavesWhatSomeoneElseChanged(t *testing.T) {
	root := damontest.Tree(t, damontest.Kdamond{State: "on", Action: "pageout"}, damontest.Kdamond{State: "on", Action: "pageout"})
	dir := t.TempDir()
	if _, err := Pause(root, dir); err != nil {
		t.Fatal(err)
	}
	damontest.SetState(t, root, 0, "on")
	age := filepath.Join(root, "kdamonds/1/contexts/0/schemes/0/access_pattern/age/min")
	if err := os.WriteFile(age, []byte("24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done, err := Restore(dir)
	if err == nil || !strings.Contains(err.Error(), "kdamond 1: its page-out schemes changed") {
		t.Fatalf("Restore: %v, want kdamond 1's changed schemes refused", err)
	}
	if len(done) != 1 || !strings.Contains(done[0], "kdamond 0 runs already") {
		t.Errorf("Restore said %q", done)
	}
	if got := damontest.State(t, root, 1); got != "off" {
		t.Errorf("kdamond 1, changed by someone else, is %q: want it left off", got)
	}
	if _, ok := Recorded(dir); !ok {
		t.Error("the record is gone though kdamond 1 was not restored")
	}
}

// A record of another boot names kdamonds that are gone: it is dropped, nothing touched.
func TestRestoreDropsARecordOfAnotherBoot(t *testing.T) {
	root := damontest.Tree(t, damontest.Kdamond{State: "off", Action: "pageout"})
	dir := t.TempDir()
	data, _ := json.Marshal(Record{Root: root, Boot: "another-boot", Kdamonds: []Paused{{Index: 0, Policies: []string{"x"}}}})
	if err := os.WriteFile(filepath.Join(dir, RecordName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(dir); err != nil {
		t.Fatal(err)
	}
	if got := damontest.State(t, root, 0); got != "off" {
		t.Errorf("kdamond 0 of this boot was turned %q by a record of another", got)
	}
	if _, err := os.Stat(filepath.Join(dir, RecordName)); !os.IsNotExist(err) {
		t.Errorf("the record of another boot stays: %v", err)
	}
}

// A record others may write names nothing: Restore refuses it and writes nothing.
func TestRestoreRefusesARecordOthersMayWrite(t *testing.T) {
	root := damontest.Tree(t, damontest.Kdamond{State: "off", Action: "pageout"})
	dir := t.TempDir()
	data, _ := json.Marshal(Record{Root: root, Boot: proc.BootID(), Kdamonds: []Paused{{Index: 0}}})
	path := filepath.Join(dir, RecordName)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(dir); err == nil || damontest.State(t, root, 0) != "off" {
		t.Errorf("Restore of a world-writable record: %v, kdamond 0 %q", err, damontest.State(t, root, 0))
	}
}

// Check refuses a user other than root, a machine without DAMON's sysfs, and one where it cannot
// be written, each saying which.
func TestCheckSaysWhyItCannotPause(t *testing.T) {
	root := damontest.Tree(t, damontest.Kdamond{State: "on", Action: "pageout"})
	if err := Check(root, 0); err != nil {
		t.Fatalf("root on a writable tree: %v", err)
	}
	if err := Check(root, 1000); err == nil || !strings.Contains(err.Error(), "needs root") {
		t.Errorf("not root: %v", err)
	}
	if err := Check(filepath.Join(t.TempDir(), "absent"), 0); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("no DAMON: %v", err)
	}
	access = func(path string, mode uint32) error { return unix.EROFS }
	defer func() { access = unix.Access }()
	if err := Check(root, 0); err == nil || !strings.Contains(err.Error(), "cannot be written") || !strings.Contains(err.Error(), "read-only file system") {
		t.Errorf("read-only sysfs: %v", err)
	}
}
