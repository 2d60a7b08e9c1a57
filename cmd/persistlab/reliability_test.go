package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/internal/tools"
	"persistlab/report"
	"persistlab/results"
)

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// --out refuses what it must not replace, before any cell runs; a symlink is followed.
func TestOutPathIsCheckedBeforeAnyCell(t *testing.T) {
	work := t.TempDir()
	fifo := filepath.Join(work, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(work, "old.json")
	os.WriteFile(existing, []byte("complete earlier results"), 0o644)
	for _, tc := range []struct {
		out, want string
	}{
		{fifo, "not a regular file"},
		{work, "not a regular file"},
		{"/dev/null", "not a regular file"},
		{existing, "--force"},
	} {
		_, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "1s", "--out", tc.out)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("--out %s: %v %s", tc.out, err, stderr)
		}
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v", st.Mode())
	}
	if data, _ := os.ReadFile(existing); string(data) != "complete earlier results" {
		t.Errorf("an existing results file was touched: %q", data)
	}
	// A symlink is followed: the results land in its target, the link stays a link.
	target := filepath.Join(work, "real.json")
	link := filepath.Join(work, "link.json")
	os.Symlink(target, link)
	if _, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "300ms", "--warmup", "0s",
		"--repeat", "1", "--out", link); err != nil {
		t.Fatalf("%v %s", err, stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	if r, err := report.Load(target); err != nil || r.Status != results.StatusComplete {
		t.Errorf("results not in the link's target: %v", err)
	}
	if _, _, err := persistlab(t, "report", target, "--html", target); err == nil {
		t.Error("report --html over its own input was accepted")
	}
}

// Exit statuses: 3 when cells failed, 4 when a row's errors pass max_error_rate, 143 on SIGTERM.
func TestExitStatuses(t *testing.T) {
	work := t.TempDir()
	// Every request gets 404: the cells run, the threshold is crossed.
	stdout, _, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "300ms", "--warmup", "0s",
		"--repeat", "1", "--set", "path=/nowhere", "--out", filepath.Join(work, "404.json"))
	if exitCode(err) != exitThreshold || !strings.Contains(stdout, "over the error threshold") || !strings.Contains(stdout, "! 100.0% errors") {
		t.Errorf("all 404: exit %d\n%s", exitCode(err), stdout)
	}
	// The same with the threshold at 1 passes.
	if _, _, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "300ms", "--warmup", "0s",
		"--repeat", "1", "--set", "path=/nowhere", "--max-error-rate", "1", "--out", filepath.Join(work, "404-ok.json")); err != nil {
		t.Errorf("threshold 1: %v", err)
	}
	// A cell that fails (its backend cannot start) exits 3, says
	// why, and keeps the logs the message points at.
	stdout, stderr, err := persistlab(t, "run", "testdata/cell-fails.yaml", "--out", filepath.Join(work, "fail.json"))
	if exitCode(err) != exitCellsFailed || !strings.Contains(stdout, "1 cell(s) failed") || !strings.Contains(stderr, "logs are in") {
		t.Errorf("failed cell: exit %d\n%s\n%s", exitCode(err), stdout, stderr)
	}
	if dir := stderr[strings.Index(stderr, "logs are in ")+len("logs are in "):]; dir != "" {
		dir = strings.TrimSpace(dir)
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("the logs of the failed cell were deleted: %v", err)
		}
		os.RemoveAll(dir)
	}
	// SIGTERM exits 143 and marks the results interrupted.
	out := filepath.Join(work, "term.json")
	run := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "30s", "--warmup", "0s", "--out", out)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := report.Load(out); err == nil && r.Status == results.StatusRunning {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	run.Process.Signal(syscall.SIGTERM)
	err = run.Wait()
	if r, lerr := report.Load(out); exitCode(err) != 143 || lerr != nil || r.Status != results.StatusInterrupted {
		t.Errorf("SIGTERM: exit %d, results %v", exitCode(err), lerr)
	}
}

// Two runs cannot share one work directory or one results file.
func TestRunsLockTheirWorkDirAndResults(t *testing.T) {
	work := t.TempDir()
	scratch := filepath.Join(work, "scratch")
	first := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "20s", "--warmup", "0s",
		"--out", filepath.Join(work, "a.json"), "--workdir", scratch)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { first.Process.Signal(syscall.SIGINT); first.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(scratch, "persistlab.lock")); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "1s",
		"--out", filepath.Join(work, "b.json"), "--workdir", scratch)
	if err == nil || !strings.Contains(stderr, "in use by another persistlab run") {
		t.Errorf("a second run in the same work dir: %v %s", err, stderr)
	}
	// Into the same results file, even with --force and a work dir of its own.
	_, stderr, err = persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "1s", "--force",
		"--out", filepath.Join(work, "a.json"), "--workdir", filepath.Join(work, "other"))
	if err == nil || !strings.Contains(stderr, "a.json is in use by another persistlab run") {
		t.Errorf("a second run into the same results file: %v %s", err, stderr)
	}
}

// A run killed with SIGKILL leaves a dead gcsfuse mount and its work directory; clean removes them
// and marks its results interrupted, and never touches a live run's.
func TestCleanRemovesWhatAKilledRunLeft(t *testing.T) {
	work := t.TempDir()
	scratch, out := filepath.Join(work, "scratch"), filepath.Join(work, "r.json")
	// A relative --out: clean runs from elsewhere and must still find the file.
	run := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "gcsfuse", "--vus", "1", "--duration", "60s", "--warmup", "0s",
		"--cpu-per-request", "0s", "--out", "r.json", "--workdir", scratch)
	run.Dir = work
	gcsfuse, err := tools.Find("gcsfuse") // from the checkout, which the run's directory is not in
	if err != nil {
		t.Fatal(err)
	}
	run.Env = append(os.Environ(), "PERSISTLAB_GCSFUSE="+gcsfuse)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(mountsUnder(scratch)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	run.Process.Kill()
	run.Wait()
	if len(mountsUnder(scratch)) == 0 {
		t.Fatal("the killed run left no mount: nothing to clean (the test needs one)")
	}
	// A live run is never a leftover.
	live := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "30s", "--warmup", "0s",
		"--out", filepath.Join(work, "live.json"), "--workdir", filepath.Join(work, "live"))
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Signal(syscall.SIGINT); live.Wait() }()
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(work, "live", "persistlab.lock")); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stdout, stderr, err := persistlab(t, "clean", scratch, filepath.Join(work, "live"))
	if err != nil || !strings.Contains(stdout, scratch+": killed run") || strings.Contains(stdout, "live:") {
		t.Fatalf("clean: %v\n%s\n%s", err, stdout, stderr)
	}
	if left := mountsUnder(scratch); len(left) > 0 {
		t.Errorf("still mounted: %v", left)
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Error("the work directory is still there")
	}
	if _, err := os.Stat(filepath.Join(work, "live", "persistlab.lock")); err != nil {
		t.Errorf("the live run's work directory was touched: %v", err)
	}
	if r, err := report.Load(out); err != nil || r.Status != results.StatusInterrupted {
		t.Errorf("the killed run's results: %v %+v", err, r)
	}
	if _, err := os.Stat(out + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the killed run's results lock is still there: %v", err)
	}
	if stdout, _, _ := persistlab(t, "clean", scratch); !strings.Contains(stdout, "no leftovers") {
		t.Errorf("a second clean found more: %s", stdout)
	}
}

// A results file that cannot be written (its disk full) stops the run with exit 1 and an error
// that says where the measured cells were saved instead; no .tmp file and no stale "running"
// file stay behind, and the terminal does not claim the results are at --out.
func TestFullDiskKeepsWhatWasMeasured(t *testing.T) {
	work := t.TempDir()
	full := filepath.Join(work, "full")
	os.Mkdir(full, 0o755)
	// Room for the first save (no cell yet), not for a results file with a few cells.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", full).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", full).Run()
	tmp := filepath.Join(work, "tmp")
	os.Mkdir(tmp, 0o755)
	cmd := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1,2", "--duration", "300ms", "--warmup", "0s",
		"--repeat", "3", "--out", filepath.Join(full, "r.json"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exitCode(err) != 1 || !strings.Contains(stderr.String(), "no space left on device") || strings.Contains(stdout.String(), "\nresults: "+full) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", exitCode(err), stdout.String(), stderr.String())
	}
	saved, _ := filepath.Glob(filepath.Join(tmp, "persistlab-results-*.json"))
	if len(saved) != 1 || !strings.Contains(stderr.String(), saved[0]) {
		t.Fatalf("fallback files %v; stderr %s", saved, stderr.String())
	}
	r, err := report.Load(saved[0])
	if err != nil || r.Status != results.StatusFailed || len(r.Cells) == 0 || !strings.Contains(r.Error, "no space left") {
		t.Fatalf("fallback results: %v %+v", err, r)
	}
	for _, c := range r.Cells {
		if c.Failure != "" || c.M("ok") == 0 {
			t.Errorf("a measured cell was not kept whole: %+v", c)
		}
	}
	if left, _ := os.ReadDir(full); len(left) != 0 {
		t.Errorf("left on the full disk: %v", left)
	}
}

// A killed run in a directory of the user's: neither clean nor the next run's auto-clean removes
// the user's files, and neither stops a process that merely names the run's files (a user's
// tail -f on a log).
func TestCleanNeverTouchesTheUsersDirectoryOrProcesses(t *testing.T) {
	user := filepath.Join(t.TempDir(), "userwd")
	os.MkdirAll(filepath.Join(user, "project"), 0o755)
	os.WriteFile(filepath.Join(user, "notes.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(user, "project", "main.go"), []byte("package main"), 0o644)
	userFilesThere := func(when string) {
		t.Helper()
		for _, f := range []string{"notes.txt", "project/main.go"} {
			if _, err := os.Stat(filepath.Join(user, f)); err != nil {
				t.Fatalf("%s: the user's %s: %v", when, f, err)
			}
		}
	}
	killRunIn := func() string {
		t.Helper()
		run := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "60s", "--warmup", "0s",
			"--cpu-per-request", "0s", "--out", filepath.Join(t.TempDir(), "r.json"), "--workdir", user)
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		var locks []string
		for deadline := time.Now().Add(30 * time.Second); len(locks) == 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			locks, _ = filepath.Glob(filepath.Join(user, "persistlab-*", "persistlab.lock"))
		}
		time.Sleep(500 * time.Millisecond)
		run.Process.Kill()
		run.Wait()
		if len(locks) != 1 {
			t.Fatalf("the run's own directory in %s: %v", user, locks)
		}
		return filepath.Dir(locks[0])
	}
	runDir := killRunIn()
	tail := exec.Command("tail", "-f", filepath.Join(user, "notes.txt"), filepath.Join(runDir, "persistlab.lock"))
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { tail.Process.Kill(); tail.Wait() }()
	if stdout, stderr, err := persistlab(t, "clean", user); err != nil || !strings.Contains(stdout, runDir+": killed run") {
		t.Fatalf("clean: %v\n%s\n%s", err, stdout, stderr)
	}
	userFilesThere("after clean")
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("the killed run's own directory: %v", err)
	}
	if err := tail.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the user's tail -f was stopped: %v", err)
	}
	// The next run in the same --workdir cleans what the killed one made, and only that.
	runDir = killRunIn()
	_, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "300ms", "--warmup", "0s",
		"--cpu-per-request", "0s", "--out", filepath.Join(t.TempDir(), "r.json"), "--workdir", user)
	if err != nil || !strings.Contains(stderr, "killed run") {
		t.Fatalf("a run after a killed one: %v\n%s", err, stderr)
	}
	userFilesThere("after the next run")
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("the killed run's own directory after the next run: %v", err)
	}
}

// A run whose reader went away (run ... | head) still ends as a run does: it stops what it
// started and removes its work directory, instead of dying of SIGPIPE.
func TestRunSurvivesAClosedPipe(t *testing.T) {
	tmp := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "1", "--duration", "300ms", "--warmup", "0s",
		"--repeat", "1", "--cpu-per-request", "0s", "--out", filepath.Join(tmp, "r.json"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	w.Close()
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		t.Fatalf("died of %v: %s", status.Signal(), stderr.String())
	}
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "persistlab-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if res, err := report.Load(filepath.Join(tmp, "r.json")); err != nil || res.Status != results.StatusComplete {
		t.Errorf("results: %v", err)
	}
}

// report's outputs follow run's rule (an existing file only with --force), are written whole or
// not at all, and nothing from a results file reaches the terminal as a control character or a
// spreadsheet as a formula; compare of two workloads says so in a line.
func TestReportOutputsAreSafe(t *testing.T) {
	work := t.TempDir()
	var r map[string]any
	data, err := os.ReadFile("../../report/testdata/cloudrun-sqlite-quick.json")
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(data, &r)
	r["scenario"].(map[string]any)["name"] = "evil\x1b]0;pwned\x07"
	cell := r["cells"].([]any)[0].(map[string]any)
	cell["backend_stats"].(map[string]any)["=HYPERLINK(1)"] = 1
	evil := filepath.Join(work, "evil.json")
	data, _ = json.Marshal(r)
	os.WriteFile(evil, data, 0o644)

	stdout, stderr, err := persistlab(t, "report", evil)
	if err != nil || strings.ContainsAny(stdout, "\x1b\x07") || !strings.Contains(stdout, `evil\x1b]0;pwned\x07`) {
		t.Errorf("report printed control characters raw: %v %q %s", err, stdout[:min(len(stdout), 80)], stderr)
	}
	csvPath := filepath.Join(work, "r.csv")
	os.WriteFile(csvPath, []byte("mine"), 0o644)
	if _, stderr, err := persistlab(t, "report", evil, "--csv", csvPath); err == nil || !strings.Contains(stderr, "--csv") || !strings.Contains(stderr, "--force") {
		t.Errorf("an existing --csv file: %v %s", err, stderr)
	}
	if got, _ := os.ReadFile(csvPath); string(got) != "mine" {
		t.Errorf("the existing file was changed: %q", got)
	}
	if _, stderr, err := persistlab(t, "report", evil, "--csv", csvPath, "--force"); err != nil {
		t.Fatalf("--force: %v %s", err, stderr)
	}
	got, _ := os.ReadFile(csvPath)
	header, _, _ := strings.Cut(string(got), "\n")
	for _, col := range strings.Split(header, ",") {
		if strings.HasPrefix(col, "=") {
			t.Errorf("a CSV header begins a formula: %s", col)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(work, ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	r["scenario"].(map[string]any)["workload"].(map[string]any)["type"] = "fio"
	other := filepath.Join(work, "fio.json")
	data, _ = json.Marshal(r)
	os.WriteFile(other, data, 0o644)
	stdout, _, err = persistlab(t, "compare", evil, other)
	if err != nil || !strings.Contains(stdout, "nothing to compare") || strings.Count(stdout, "\n") > 4 {
		t.Errorf("compare of two workloads: %v\n%s", err, stdout)
	}
}

// A failed write leaves no file behind, and the file it would replace as it was.
func TestWriteWholeLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.html")
	os.WriteFile(path, []byte("before"), 0o644)
	err := writeWhole(path, func(w io.Writer) error {
		w.Write([]byte("half"))
		return errors.New("a corrupt histogram")
	})
	entries, _ := os.ReadDir(dir)
	if got, _ := os.ReadFile(path); err == nil || string(got) != "before" || len(entries) != 1 {
		t.Errorf("after a failed write: %v, %q, %d entries", err, got, len(entries))
	}
	if err := writeWhole(filepath.Join(dir, "new.html"), func(w io.Writer) error { return errors.New("x") }); err == nil {
		t.Error("no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "new.html")); !os.IsNotExist(err) {
		t.Errorf("a failed write made a file: %v", err)
	}
}

// A job that cannot fit on its file system is refused with the need and what is free, and the
// run keeps the cell as failed instead of filling the disk.
func TestFioJobLargerThanTheDiskIsRefused(t *testing.T) {
	small := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", small).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", small).Run()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, err := persistlab(t, "run", "gcsfuse-cache", "--backend", "local", "--quick", "--set", "file_size=64MiB", "--set", "rw=read",
		"--out", out, "--workdir", filepath.Join(small, "w"))
	if err == nil || !strings.Contains(stdout+stderr, "needs about 64.0 MiB") {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(small, "w", "*", "data", "*")); len(left) > 0 {
		t.Errorf("files laid out anyway: %v", left)
	}
}

// bucketDirs lists the lab buckets' body directories anywhere under root.
func bucketDirs(root string) []string {
	var found []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "persistlab-bucket-") {
			found = append(found, path)
		}
		return nil
	})
	return found
}

// Every bucket a run starts keeps its bodies in the run's work directory: a killed litestream run
// leaves none in the temporary directory, and clean removes its bucket with the rest.
func TestCleanRemovesAKilledRunsBucket(t *testing.T) {
	work := t.TempDir()
	tmp, scratch := filepath.Join(work, "tmp"), filepath.Join(work, "scratch")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+tmp)
	run := exec.Command(binary, "run", "cloudrun-sqlite", "--backend", "litestream", "--vus", "1", "--duration", "60s", "--warmup", "0s",
		"--cpu-per-request", "0s", "--out", filepath.Join(work, "r.json"), "--workdir", scratch)
	run.Env = env
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); len(bucketDirs(scratch))+len(bucketDirs(tmp)) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	run.Process.Kill()
	run.Wait()
	if in := bucketDirs(tmp); len(in) > 0 {
		t.Errorf("the killed run's bucket kept its bodies in the temporary directory, where clean does not look: %v", in)
	}
	if len(bucketDirs(scratch)) == 0 {
		t.Fatal("no bucket in the run's work directory")
	}
	clean := exec.Command(binary, "clean", scratch)
	clean.Env = env
	if out, err := clean.CombinedOutput(); err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	if _, err := os.Stat(scratch); !os.IsNotExist(err) {
		t.Errorf("the killed run's work directory after clean: %v", err)
	}
}

// lab serve keeps its bucket's bodies in a directory of its own, recorded: Ctrl-C removes it, and
// after a kill clean does; nothing stays in the temporary directory either way.
func TestLabServeLeavesNothingInTheTemporaryDirectory(t *testing.T) {
	tmp := t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp)
	serve := func(stop func(*os.Process)) {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(binary, "lab", "serve", "--listen", "127.0.0.1:"+strconv.Itoa(port), "--no-delay")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		url := "http://localhost:" + strconv.Itoa(port) + "/upload/storage/v1/b/persistlab/o?uploadType=media&name=kept"
		var resp *http.Response
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if resp, err = http.Post(url, "text/plain", strings.NewReader("a body on disk")); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("upload: HTTP %d", resp.StatusCode)
		}
		stop(cmd.Process)
		cmd.Wait()
	}
	serve(func(p *os.Process) { p.Kill() })
	clean := exec.Command(binary, "clean")
	clean.Env = env
	if out, err := clean.CombinedOutput(); err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("after a killed lab serve and clean, the temporary directory holds %s", left[0].Name())
	}
	serve(func(p *os.Process) { p.Signal(syscall.SIGINT) })
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("after lab serve's Ctrl-C, the temporary directory holds %s", left[0].Name())
	}
}
