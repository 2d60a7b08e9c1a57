package httpapp

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/internal/proc"
	"persistlab/internal/tools"
	"persistlab/scenario"
	"persistlab/workload"
)

// A preparation that outlives prepare_timeout fails the start soon after, naming itself, the
// timeout and the end of its log, and nothing it started is left running.
func TestPrepareTimeoutKillsWhatItStarted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	prepare := []any{"sh", "-c", "echo preparing; sleep 120 & echo $! > " + pidFile + "; wait"}
	began := time.Now()
	_, err := start(t, map[string]any{"command": []any{"sh", "-c", "exec sleep 600 {port}"}, "prepare": prepare},
		map[string]string{"prepare_timeout": "1s"})
	if err == nil {
		t.Fatal("started")
	}
	for _, want := range []string{"prepare (sh -c echo preparing;", "within 1s (prepare_timeout)", "prepare.log", "preparing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if took := time.Since(began); took > 60*time.Second { // its sleep would run 120 s
		t.Errorf("the start failed after %v", took)
	}
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid <= 0 {
		t.Fatalf("pid file %q", data)
	}
	started, _ := proc.StartTime(pid)
	defer func() { // the test's own sleep, by pid and start time, if the check below fails
		if s, err := proc.StartTime(pid); err == nil && s == started {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if s, _ := proc.StartTime(pid); err != nil || s != started || strings.Contains(string(status), "State:\tZ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the preparation's sleep (pid %d) outlived its timeout", pid)
		}
	}
}

// A preparation's output, however much, goes to its log in the cell's directory, not to memory;
// a failed one's error has the end of it.
func TestPrepareOutputGoesToItsLog(t *testing.T) {
	const size = 32 << 20
	prepare := []any{"sh", "-c", "head -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' p; echo; echo schema failed; exit 3"}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := start(t, map[string]any{"command": []any{"sh", "-c", "exec sleep 600 {port}"}, "prepare": prepare}, nil)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("started")
	}
	if !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "schema failed") || strings.Contains(err.Error(), "ppppp") {
		t.Errorf("error %.300q; want the exit status and the last line", err)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 8<<20 {
		t.Errorf("a preparation printing %d bytes allocated %d bytes", size, used)
	}
	log := regexp.MustCompile(`the end of (\S+prepare\.log):\n`).FindStringSubmatch(err.Error())
	if log == nil {
		t.Fatalf("error %q names no log", err)
	}
	if st, err := os.Stat(log[1]); err != nil || st.Size() != int64(size+1+len("schema failed\n")) {
		t.Errorf("log %s: %v, %v; want all %d bytes", log[1], st.Size(), err, size+1+len("schema failed\n"))
	}
}

// k6 reading a script whose init code logs without end is read to its end in bounded memory:
// only the end of what it printed is kept.
func TestK6InspectOutputIsNotHeld(t *testing.T) {
	if _, err := tools.Find("k6"); err != nil {
		t.Skip(err)
	}
	script := filepath.Join(t.TempDir(), "loud.js")
	code := "const line = 'x'.repeat(1 << 20);\nfor (let i = 0; i < 48; i++) { console.log(line); }\nexport default function () {}\n"
	if err := os.WriteFile(script, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"command": []any{"sh", "-c", "exec sleep 600 {port}"}}})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = w.Check(context.Background(), workload.Resolve(Params, map[string]string{"k6_script": script, "mode": "open", "rate": "1"}, nil))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("%.300v", err)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 16<<20 {
		t.Errorf("k6 printing over 48 MiB twice allocated %d bytes", used)
	}
}
