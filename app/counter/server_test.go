package counter

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func post(t *testing.T, url string) (int, int64) {
	resp, err := http.Post(url, "", nil)
	if err != nil {
		t.Error(err)
		return 0, 0
	}
	defer resp.Body.Close()
	var v struct{ Count int64 }
	if resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Error(err)
		}
	}
	return resp.StatusCode, v.Count
}

// Under any concurrency the final count equals the number of 200 answers, and every 200 answer
// carries a distinct value: no update is lost or reported twice.
func TestExactCountUnderConcurrency(t *testing.T) {
	for _, pragmas := range [][]Pragma{
		RailsPragmas,
		WithOverrides(RailsPragmas, []Pragma{{"journal_mode", "DELETE"}, {"synchronous", "FULL"}}),
	} {
		a, err := Open(Options{DBPath: filepath.Join(t.TempDir(), "c.db"), Pragmas: pragmas})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(a.Handler())
		const workers, each = 16, 60
		var mu sync.Mutex
		seen := map[int64]bool{}
		oks := 0
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					status, n := post(t, srv.URL+"/count_up")
					if status != 200 {
						continue
					}
					mu.Lock()
					if seen[n] {
						t.Errorf("count %d answered twice", n)
					}
					seen[n] = true
					oks++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		resp, err := http.Get(srv.URL + "/count")
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Count int64 }
		json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if oks == 0 || v.Count != int64(oks) {
			t.Errorf("pragmas %v: final count %d, 200 answers %d", pragmas, v.Count, oks)
		}
		for n := int64(1); n <= v.Count; n++ {
			if !seen[n] {
				t.Errorf("count %d was never answered", n)
				break
			}
		}
		srv.Close()
		a.Close()
	}
}

func TestCountSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	for round := 1; round <= 2; round++ {
		a, err := Open(Options{DBPath: path})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(a.Handler())
		for i := 0; i < 5; i++ {
			post(t, srv.URL+"/count_up")
		}
		_, n := post(t, srv.URL+"/count_up")
		if want := int64(6 * round); n != want {
			t.Errorf("round %d: count %d, want %d", round, n, want)
		}
		srv.Close()
		a.Close()
	}
}

func TestRailsPragmasTakeEffect(t *testing.T) {
	a, err := Open(Options{DBPath: filepath.Join(t.TempDir(), "c.db"), Pragmas: WithOverrides(RailsPragmas, []Pragma{{"cache_size", "-4000"}})})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	eff, err := a.EffectivePragmas()
	if err != nil {
		t.Fatal(err)
	}
	// SQLite reports synchronous as a number: NORMAL is 1.
	want := map[string]string{"journal_mode": "wal", "synchronous": "1", "busy_timeout": "5000", "foreign_keys": "1", "cache_size": "-4000"}
	for k, v := range want {
		if eff[k] != v {
			t.Errorf("PRAGMA %s = %q, want %q", k, eff[k], v)
		}
	}
}

func TestRoutesAndPragmaParsing(t *testing.T) {
	a, err := Open(Options{DBPath: filepath.Join(t.TempDir(), "c.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	resp, _ := http.Get(srv.URL + "/count_up")
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /count_up: %d", resp.StatusCode)
	}
	for _, bad := range []string{"journal_mode", "x=1;DROP TABLE counters", "=WAL", "Journal Mode=WAL"} {
		if _, err := ParsePragma(bad); err == nil || !strings.Contains(err.Error(), "name=value") {
			t.Errorf("ParsePragma(%q): %v", bad, err)
		}
	}
	if p, err := ParsePragma("journal_mode=DELETE"); err != nil || p != (Pragma{"journal_mode", "DELETE"}) {
		t.Errorf("ParsePragma: %v %v", p, err)
	}
	if _, err := Open(Options{}); err == nil || !strings.Contains(err.Error(), "--db") {
		t.Errorf("no db path: %v", err)
	}
}

func TestWorkBurnsCalibratedCPU(t *testing.T) {
	w := CalibrateWork(2 * time.Millisecond)
	if w.iterations <= 0 {
		t.Fatal("no work calibrated")
	}
	// Ten times the work burns clearly more CPU than one: a ratio of this thread's CPU time, which
	// preemption does not inflate, not of wall time. The least of five single runs is the baseline.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	one := time.Duration(1 << 62)
	for i := 0; i < 5; i++ {
		c0 := threadCPU()
		w.Do()
		one = min(one, threadCPU()-c0)
	}
	c0 := threadCPU()
	for i := 0; i < 10; i++ {
		w.Do()
	}
	if ten := threadCPU() - c0; one <= 0 || ten < 3*one {
		t.Errorf("10 units burnt %v of CPU, 1 unit %v", ten, one)
	}
	if (Work{}).iterations != 0 || CalibrateWork(0).iterations != 0 {
		t.Error("zero work should do nothing")
	}
}

func TestInspectReadsCountAndIntegrity(t *testing.T) {
	dir := t.TempDir()
	if in := Inspect(filepath.Join(dir, "missing.db")); in.Exists || in.Count != 0 || in.Integrity != "ok" {
		t.Errorf("missing file: %+v", in)
	}
	path := filepath.Join(dir, "c.db")
	a, err := Open(Options{DBPath: path})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	for i := 0; i < 7; i++ {
		post(t, srv.URL+"/count_up")
	}
	// Read while the app still holds the database, its writes still in the WAL.
	if in := Inspect(path); !in.Exists || in.Count != 7 || in.Integrity != "ok" {
		t.Errorf("live database: %+v", in)
	}
	srv.Close()
	a.Close()
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("not a database "), 500), 0o644)
	if in := Inspect(garbage); in.Integrity == "ok" {
		t.Errorf("garbage passed integrity_check: %+v", in)
	}
}

// Puma's threads bound the requests served at once, and the GVL lets one of them run its work
// and statement at a time; without either, all the clients' requests run together.
//
// Each request waits inside the locked part until the test lets one go, so none can finish
// before the others arrive however slow the machine: the number inside must reach the bound
// exactly (all 8 without a limit) and never pass it, and as each is let go the next queued one
// takes its place.
func TestThreadsAndGVLBoundConcurrency(t *testing.T) {
	const clients = 8
	const wait = time.Minute // for a slow machine; a correct app reaches each step far sooner
	for _, c := range []struct {
		name  string
		opts  Options
		bound int
	}{
		{"no limit", Options{}, clients},
		{"Puma's 3 threads", Options{Threads: RailsThreads}, RailsThreads},
		{"3 threads and the GVL", Options{Threads: RailsThreads, GVL: true}, 1},
	} {
		c.opts.DBPath = filepath.Join(t.TempDir(), "c.db")
		a, err := Open(c.opts)
		if err != nil {
			t.Fatal(err)
		}
		var now, peak, entered, left atomic.Int32
		gate, abort := make(chan struct{}), make(chan struct{})
		a.serving = func() {
			n := now.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			entered.Add(1)
			select {
			case <-gate:
			case <-abort:
			}
			now.Add(-1)
			left.Add(1)
		}
		srv := httptest.NewServer(a.Handler())
		var wg sync.WaitGroup
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := http.Post(srv.URL+"/count_up", "", nil)
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("%s: %v %v", c.name, resp, err)
					return
				}
				resp.Body.Close()
			}()
		}
		// After k requests are let go, k have left and min(clients, bound+k) have entered.
		failed := false
		for k := 0; k < clients && !failed; k++ {
			want := int32(min(clients, c.bound+k))
			deadline := time.Now().Add(wait)
			for entered.Load() < want || left.Load() < int32(k) {
				if time.Now().After(deadline) {
					t.Errorf("%s: after %d let go, %d entered and %d left in %v (want %d entered)", c.name, k, entered.Load(), left.Load(), wait, want)
					failed = true
					break
				}
				time.Sleep(time.Millisecond)
			}
			if e := entered.Load(); e > want {
				t.Errorf("%s: after %d let go, %d requests entered (at most %d may)", c.name, k, e, want)
				failed = true
			}
			if !failed {
				gate <- struct{}{}
			}
		}
		close(abort) // on failure, lets every waiting request go
		wg.Wait()
		srv.Close()
		var count int64
		a.db.QueryRow("SELECT count FROM counters").Scan(&count)
		a.Close()
		if p := int(peak.Load()); p != c.bound || entered.Load() != clients || count != clients {
			t.Errorf("%s: %d requests served at once (want exactly %d), %d entered, count %d of %d", c.name, p, c.bound, entered.Load(), count, clients)
		}
	}
}

// SQLite checkpoints a WAL database automatically once its log holds 1,000 pages, but only from a
// statement stepped to its end: thousands of single-page commits keep the log near 1,000 pages
// (the file is reused from its start after each checkpoint) instead of one page per commit.
func TestWritesCheckpointTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	a, err := Open(Options{DBPath: path})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	const commits = 5000
	for i := 0; i < commits; i++ {
		if code, _ := post(t, srv.URL+"/count_up"); code != 200 {
			t.Fatalf("HTTP %d", code)
		}
	}
	info, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	pages := info.Size() / (4096 + 24) // a WAL frame: a page and its header
	if pages > 2*1000 {
		t.Errorf("WAL of %d pages after %d commits: never checkpointed", pages, commits)
	}
}

// With the GVL no two statements overlap, so no reader ever holds back a checkpoint: many
// concurrent clients still leave the WAL near 1,000 pages (without it, overlapping transactions
// can keep every checkpoint short of the log's end, and the log is never restarted).
func TestGVLKeepsCheckpointsCompleteUnderConcurrency(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	a, err := Open(Options{DBPath: path, Threads: 3, GVL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 600; i++ {
				if code, _ := post(t, srv.URL+"/count_up"); code != 200 {
					t.Errorf("HTTP %d", code)
					return
				}
			}
		}()
	}
	wg.Wait()
	info, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if pages := info.Size() / (4096 + 24); pages > 2*1000 {
		t.Errorf("WAL of %d pages after 4,800 concurrent commits under the GVL", pages)
	}
}
