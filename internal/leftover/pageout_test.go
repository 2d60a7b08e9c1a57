package leftover

import (
	"os"
	"strings"
	"testing"
	"time"

	"persistlab/internal/damon"
	"persistlab/internal/damon/damontest"
)

// A run killed while it had a page-out policy paused leaves the record in its work directory:
// clean finds it, turns the kdamond on again, and removes the directory; a kdamond that was off
// before the run stays off.
func TestCleanRestoresThePageOutAKilledRunPaused(t *testing.T) {
	root := damontest.Tree(t, damontest.Kdamond{State: "on", Action: "pageout"}, damontest.Kdamond{State: "off", Action: "pageout"})
	l, err := CreateTemp(t.TempDir(), "persistlab-test-", Run{PID: os.Getpid(), Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := damon.Pause(root, l.Dir()); err != nil {
		t.Fatal(err)
	}
	abandon(l) // killed: nothing restored

	dead := Find(nil, []string{l.Dir()})
	if len(dead) != 1 || len(dead[0].PageOut) != 1 || !strings.HasPrefix(dead[0].PageOut[0], "kdamond 0 ") {
		t.Fatalf("found %+v, want the run's directory with kdamond 0 paused", dead)
	}
	err = dead[0].Clean()
	dead[0].Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := damontest.State(t, root, 0); got != "on" {
		t.Errorf("kdamond 0 after clean: %q, want on", got)
	}
	if got := damontest.State(t, root, 1); got != "off" {
		t.Errorf("kdamond 1, off before the run: %q after clean", got)
	}
	if _, err := os.Stat(l.Dir()); !os.IsNotExist(err) {
		t.Errorf("the directory stays: %v", err)
	}
}

// A run that ends with a policy it could not restore keeps its lock: clean must find it.
func TestReleaseKeepsTheLockWhilePageOutIsPaused(t *testing.T) {
	root := damontest.Tree(t, damontest.Kdamond{State: "on", Action: "pageout"})
	l, err := CreateTemp(t.TempDir(), "persistlab-test-", Run{PID: os.Getpid(), Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := damon.Pause(root, l.Dir()); err != nil {
		t.Fatal(err)
	}
	if !l.Release() {
		t.Error("Release let the lock go with the page-out still paused")
	}
	if dead := Find(nil, []string{l.Dir()}); len(dead) != 1 {
		t.Errorf("clean does not find the run: %+v", dead)
	} else {
		dead[0].Close()
	}
	if _, err := damon.Restore(l.Dir()); err != nil {
		t.Fatal(err)
	}
}
