package fio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fioBin is Debian's fio, which scripts/setup installs; the tests run the real thing.
func fioBin(t *testing.T) string {
	t.Helper()
	bin, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// processes lists live processes that are children of this test or whose command line mentions
// mark (fio's forked job processes carry their parent's command line).
func processes(mark string) []string {
	var found []string
	self := strconv.Itoa(os.Getpid())
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		dir := filepath.Dir(p)
		stat, err := os.ReadFile(p)
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || filepath.Base(dir) == self {
			continue
		}
		// stat: pid (comm) state ppid ...; comm may hold spaces, so read after its last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 0 && fields[0] == "Z" {
			continue // ended, not yet reaped by its parent: nothing runs
		}
		if len(fields) > 1 && (fields[1] == self || (mark != "" && bytes.Contains(cmdline, []byte(mark)))) {
			found = append(found, filepath.Base(dir)+" "+fields[0]+" ppid "+fields[1]+" pgid "+fields[2]+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return found
}

func TestRunRealFioMatchesItsOwnJSON(t *testing.T) {
	bin, dir, work := fioBin(t), t.TempDir(), t.TempDir()
	write := Job{Name: "t", Directory: dir, RW: "randwrite", BS: 4096, Size: 4 << 20, NumJobs: 2, IODepth: 1, Fsync: 64}
	read := write
	read.RW, read.Fsync = "read", 0 // the same job name reads the files the writers left

	for _, job := range []Job{write, read} {
		out, raw, err := Run(context.Background(), bin, job, work)
		if err != nil {
			t.Fatalf("%s: %v", job.RW, err)
		}
		if file, _ := os.ReadFile(filepath.Join(work, JobFile)); string(file) != job.File() {
			t.Errorf("%s: %s holds\n%s\nwant\n%s", job.RW, JobFile, file, job.File())
		}
		sameAsFioOutput(t, job.RW, out, raw)
		if len(out.Jobs) != 2 {
			t.Fatalf("%s: %d jobs reported; want 2", job.RW, len(out.Jobs))
		}
		for _, j := range out.Jobs {
			moved, other := j.Write, j.Read
			if job.RW == "read" {
				moved, other = j.Read, j.Write
			}
			if moved.IOBytes != job.Size || moved.IOBytes != moved.IOs*job.BS || other.IOs != 0 {
				t.Errorf("%s: %d bytes in %d IOs (other direction %d IOs); want %d bytes of %d-byte IOs",
					job.RW, moved.IOBytes, moved.IOs, other.IOs, job.Size, job.BS)
			}
			if len(moved.Lat.Percentiles) == 0 || len(moved.Lat.Bins) == 0 {
				t.Errorf("%s: no total-latency percentiles or histogram: %+v", job.RW, moved.Lat)
			}
		}
		if job.Fsync > 0 {
			for _, j := range out.Jobs {
				if per := j.Write.IOs / int64(job.Fsync); j.Sync.Count < per-1 || j.Sync.Count > per {
					t.Errorf("%d syncs for %d writes at fsync=%d", j.Sync.Count, j.Write.IOs, job.Fsync)
				}
			}
		}
	}
}

func TestRunGroupReportingGivesOneJob(t *testing.T) {
	bin := fioBin(t)
	job := Job{Name: "g", Directory: t.TempDir(), RW: "write", BS: 65536, Size: 2 << 20, NumJobs: 2, IODepth: 1, GroupReporting: true}
	out, raw, err := Run(context.Background(), bin, job, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sameAsFioOutput(t, "group", out, raw)
	if len(out.Jobs) != 1 || out.Jobs[0].Write.IOBytes != 2*job.Size {
		t.Fatalf("group_reporting: %d jobs, %d bytes; want one of %d bytes", len(out.Jobs), out.Aggregate.Write.IOBytes, 2*job.Size)
	}
	if a, j := out.Aggregate.Write.Lat, out.Jobs[0].Write.Lat; a.Mean != j.Mean || a.UpperBound || len(a.Percentiles) != len(j.Percentiles) || a.Percentiles[len(a.Percentiles)-1] != j.Percentiles[len(j.Percentiles)-1] {
		t.Errorf("aggregate of one group %+v differs from the group %+v", a, j)
	}
}

func TestCheckRejectsWithFioWords(t *testing.T) {
	bin, dir := fioBin(t), t.TempDir()
	good := Job{Name: "c", Directory: dir, RW: "read", BS: 4096, Size: 1 << 20, NumJobs: 1, IODepth: 1}
	if err := Check(context.Background(), bin, good); err != nil {
		t.Fatalf("good job: %v", err)
	}
	sideways := good
	sideways.RW = "sideways"
	badValue := good
	badValue.Extra = [][2]string{{"rate_process", "wobbly"}}
	for _, c := range []struct {
		job  Job
		says []string
	}{
		{sideways, []string{"fio: failed parsing rw=sideways", `RW "sideways": want one of`}},
		{badValue, []string{"rate_process=wobbly"}},
	} {
		err := Check(context.Background(), bin, c.job)
		if err == nil {
			t.Errorf("%v: accepted", c.job.Extra)
			continue
		}
		for _, s := range append(c.says, `fio refuses job "c"`) {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err, s)
			}
		}
	}
	broken := good
	broken.Directory = dir + "\n[evil]"
	if err := Check(context.Background(), bin, broken); err == nil || !strings.Contains(err.Error(), "one line") {
		t.Errorf("line break in directory: %v", err)
	}
}

func TestRunFailureCarriesFioMessage(t *testing.T) {
	bin := fioBin(t)
	job := Job{Name: "f", Directory: filepath.Join(t.TempDir(), "missing"), RW: "read", BS: 4096, Size: 1 << 20, NumJobs: 1, IODepth: 1}
	_, _, err := Run(context.Background(), bin, job, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "is not a directory") || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("missing directory: %v; want fio's words and its exit status", err)
	}
	job.NumJobs = 0
	if _, _, err := Run(context.Background(), bin, job, t.TempDir()); err == nil || !strings.Contains(err.Error(), "NumJobs") {
		t.Errorf("invalid job: %v; want Validate's error before fio runs", err)
	}
}

func TestCancelStopsFioAndItsJobs(t *testing.T) {
	bin, work := fioBin(t), t.TempDir()
	// Time-based for fio's 2 s unless stopped; rate-limited so it costs next to nothing.
	job := Job{Name: "x", Directory: t.TempDir(), RW: "write", BS: 4096, Size: 1 << 20, NumJobs: 2, IODepth: 1,
		Runtime: time.Hour, TimeBased: true, Extra: [][2]string{{"rate_iops", "20"}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { _, _, err := Run(ctx, bin, job, work); errc <- err }()
	// Cancel once fio and its two job processes are up.
	for len(processes(work)) < 3 {
		select {
		case err := <-errc:
			t.Fatalf("fio ended before it was cancelled: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v; want context.Canceled", err)
	}
	if left := processes(work); len(left) > 0 {
		t.Errorf("processes left after cancel: %q", left)
	}
}

func TestFindAndVersion(t *testing.T) {
	bin := fioBin(t)
	if v := Version(bin); !strings.HasPrefix(v, "fio-3.") {
		t.Errorf("Version = %q; want fio-3.x (Debian's 3.33)", v)
	}
	if v := Version("/no/such/fio"); v != "" {
		t.Errorf("Version of a missing binary = %q; want empty", v)
	}
	t.Setenv(EnvBinary, bin)
	if got, err := Find(); err != nil || got != bin {
		t.Errorf("Find with %s=%s: %q, %v", EnvBinary, bin, got, err)
	}
	for _, c := range []struct{ env, says string }{{"/no/such/fio", "no such file"}, {t.TempDir(), "want an executable file"}} {
		t.Setenv(EnvBinary, c.env)
		if _, err := Find(); err == nil || !strings.Contains(err.Error(), EnvBinary) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Find with %s=%s: %v; want an error saying %q", EnvBinary, c.env, err, c.says)
		}
	}
	t.Setenv(EnvBinary, "")
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "fio not found (Debian package fio; run scripts/setup)") {
		t.Errorf("Find without fio on PATH: %v", err)
	}
}

// fio's stdout is read up to maxReport bytes, more is an error, and of its stderr only the end is
// kept: however much it prints, the memory held is bounded.
func TestFioOutputIsBounded(t *testing.T) {
	defer func(was int) { maxReport = was }(maxReport)
	maxReport = 1 << 20
	fake := filepath.Join(t.TempDir(), "fio")
	script := "#!/bin/sh\nhead -c 8388608 /dev/zero\nhead -c 1048576 /dev/zero | tr '\\0' e >&2\necho last complaint >&2\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runFio(context.Background(), fake, "")
	if err == nil || !strings.Contains(err.Error(), "is 8388608 bytes, more than the 1048576 persistlab reads") {
		t.Errorf("error %v; want the report's size and the limit", err)
	}
	if len(stdout) != maxReport || len(stderr) != stderrTail || !bytes.HasSuffix(stderr, []byte("eelast complaint\n")) {
		t.Errorf("held %d bytes of stdout, %d of stderr ending %q", len(stdout), len(stderr), stderr[max(len(stderr)-20, 0):])
	}
	_, _, err = Run(context.Background(), fake, Job{Name: "big", Directory: t.TempDir(), RW: "read", BS: 4096, Size: 1 << 20, NumJobs: 1, IODepth: 1}, t.TempDir())
	if err == nil || !strings.HasPrefix(err.Error(), `fio job "big": the output of `+fake+" is 8388608 bytes") || !strings.HasSuffix(err.Error(), "last complaint") {
		t.Errorf("run: %.300v", err)
	}
}
