package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// allocated is how many bytes f allocates, all goroutines counted (this test's own are idle).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The ring holds exactly the last bytes written, whatever the sizes of the writes.
func TestTailWriterKeepsTheLastBytes(t *testing.T) {
	var all bytes.Buffer
	tw := NewTailWriter(100)
	for i := 0; i < 500; i++ {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, i%250) // some shorter than the ring, some longer
		all.Write(chunk)
		tw.Write(chunk)
		want := all.Bytes()[max(all.Len()-100, 0):]
		if got := tw.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("after %d writes: holds %q; want %q", i+1, got, want)
		}
	}
	if tw.Written() != int64(all.Len()) || tw.Size() != 100 || cap(tw.ring) != 100 {
		t.Errorf("written %d of %d, size %d, ring capacity %d", tw.Written(), all.Len(), tw.Size(), cap(tw.ring))
	}
}

// A tail whose start the ring cut leaves the cut line out, or marks it if it is the only one.
func TestTailWriterTail(t *testing.T) {
	tw := NewTailWriter(12)
	tw.Write([]byte("first line\nsecond\nthird\n"))
	if got := tw.Tail(5); got != "...\nthird" { // held: "cond\nthird\n"
		t.Errorf("cut line: %q", got)
	}
	tw = NewTailWriter(7)
	tw.Write([]byte("a\nbcdef\nxyz\n"))
	if got := tw.Tail(5); got != "...\nxyz" { // held: "ef\nxyz\n"
		t.Errorf("cut line: %q", got)
	}
	tw = NewTailWriter(5)
	tw.Write([]byte("abc\ndef\n"))
	if got := tw.Tail(5); got != "...\ndef" { // held: "\ndef\n": the cut fell between lines
		t.Errorf("cut between lines: %q", got)
	}
	tw = NewTailWriter(5)
	tw.Write([]byte(strings.Repeat("x", 50)))
	if got := tw.Tail(5); got != "...xxxxx" {
		t.Errorf("one long line: %q", got)
	}
	tw = NewTailWriter(5)
	tw.Write([]byte("a\nb\n"))
	if got := tw.Tail(5); got != "a\nb" {
		t.Errorf("nothing cut: %q", got)
	}
}

// A limited buffer holds what fits, counts the rest and says so; it never fails a write.
func TestLimitedBuffer(t *testing.T) {
	b := NewLimitedBuffer("fio", 10)
	for _, s := range []string{"0123", "4567", "89ab", "cdef"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("write %q: %d, %v", s, n, err)
		}
	}
	var tl *TooLongError
	if b.String() != "0123456789" || !errors.As(b.Err(), &tl) || tl.Size != 16 || tl.Limit != 10 || cap(b.buf) != 10 {
		t.Errorf("holds %q, err %v", b.String(), b.Err())
	}
	if want := "the output of fio is 16 bytes, more than the 10 persistlab reads"; b.Err().Error() != want {
		t.Errorf("error %q; want %q", b.Err(), want)
	}
	b.Reset()
	b.Write([]byte("ok"))
	if b.String() != "ok" || b.Err() != nil {
		t.Errorf("after Reset: %q, %v", b.String(), b.Err())
	}
}

// A command printing far more than Run returns is read to its end in bounded memory: Run returns
// its first MaxRunOutput bytes and an error saying how much there was.
func TestRunHoldsABoundedOutput(t *testing.T) {
	const size = 32 << 20
	var out []byte
	var err error
	used := allocated(func() {
		out, err = Run(context.Background(), "head", "-c", strconv.Itoa(size), "/dev/zero")
	})
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Size != size || tl.Limit != MaxRunOutput {
		t.Errorf("error %v; want a *TooLongError of %d bytes", err, size)
	}
	if len(out) != MaxRunOutput {
		t.Errorf("returned %d bytes; want the first %d", len(out), MaxRunOutput)
	}
	if used > 8<<20 {
		t.Errorf("reading %d bytes of output allocated %d bytes", size, used)
	}
}

// RunLogged appends everything to the log, holds none of it in memory, and keeps the log's end in
// its error.
func TestRunLoggedKeepsAllInTheLogAndItsEndInTheError(t *testing.T) {
	log := filepath.Join(t.TempDir(), "prepare.log")
	if err := os.WriteFile(log, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const lines = 2_000_000
	var err error
	used := allocated(func() {
		err = RunLogged(exec.Command("sh", "-c", "seq 1 "+strconv.Itoa(lines)+"; exit 4"), log, 3)
	})
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Output != "...\n1999998\n1999999\n2000000" || !strings.Contains(err.Error(), "exit status 4") {
		t.Errorf("error %v", err)
	}
	size := int64(len("before\n"))
	for i := 1; i <= lines; i++ {
		size += int64(len(strconv.Itoa(i)) + 1)
	}
	if st, err := os.Stat(log); err != nil || st.Size() != size {
		t.Errorf("log: %v, %v; want %d bytes", st.Size(), err, size)
	}
	if used > 4<<20 {
		t.Errorf("a command printing %d bytes to its log allocated %d bytes", size, used)
	}

	// Only what this command printed is its tail, not what the log held before.
	if err := RunLogged(exec.Command("sh", "-c", "echo one; exit 1"), log, 3); err == nil || OutputOf(err) != "one" {
		t.Errorf("short output: %v", err)
	}
	if err := RunLogged(exec.Command("true"), log, 3); err != nil {
		t.Errorf("success: %v", err)
	}
	if err := RunLogged(exec.Command("true"), filepath.Join(t.TempDir(), "no", "dir", "log"), 3); err == nil || !strings.HasPrefix(err.Error(), "true: log: ") {
		t.Errorf("a log that cannot be made: %v", err)
	}
}

// RunDiscarded keeps only its ring of the output, whatever the command prints.
func TestRunDiscardedKeepsTheEnd(t *testing.T) {
	var err error
	used := allocated(func() {
		err = RunDiscarded(exec.Command("sh", "-c", "head -c 33554432 /dev/zero | tr '\\0' x; echo; echo the end; exit 2"), 2)
	})
	if OutputOf(err) != "...\nthe end" { // the line of x the ring cut is left out
		t.Errorf("error %.100q", err)
	}
	if used > 4<<20 {
		t.Errorf("32 MiB of output allocated %d bytes", used)
	}
}

// A command whose context ends is killed with everything it started, even what no longer holds
// its output.
func TestCommandContextKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // once the child has started its own
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if data, _ := os.ReadFile(pidFile); bytes.HasSuffix(data, []byte("\n")) {
				break
			}
		}
		cancel()
	}()
	_, err := Run(ctx, "sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $! > "+pidFile+"; wait")
	if err == nil {
		t.Fatal("no error")
	}
	data, rerr := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if rerr != nil || pid <= 0 {
		t.Fatalf("pid file: %q, %v", data, rerr)
	}
	start, _ := StartTime(pid)
	defer func() { // the test's own sleep, by pid and start time
		if s, err := StartTime(pid); err == nil && s == start {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s, err := StartTime(pid); err != nil || s != start {
			break
		}
		if st, _ := statFields(pid); len(st) > 0 && st[0] == "Z" {
			break // killed, not yet reaped by its parent's parent
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %d outlived its context", pid)
		}
	}
}

// The marker is found after a line longer than any buffer, and the child's stdout is read on
// after it: the child is never blocked writing.
func TestStartAndWaitForReadsPastLongLines(t *testing.T) {
	dir := t.TempDir()
	log, done := filepath.Join(dir, "log"), filepath.Join(dir, "done")
	script := "head -c 4194304 /dev/zero | tr '\\0' x; echo; echo 'listening on :1'; " +
		"head -c 8388608 /dev/zero | tr '\\0' y; echo; : > " + done + "; exec sleep 300"
	c, line, err := StartAndWaitFor("long lines", log, os.Environ(), "listening on", 30*time.Second, "sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if line != "listening on :1" {
		t.Errorf("line %q", line)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child is still writing its stdout: nothing reads it")
		}
	}
	if st, err := os.Stat(log); err != nil || st.Size() != 4194304+1+16+8388608+1 {
		t.Errorf("log: %v, %v; want all of the child's stdout", st.Size(), err)
	}
}

// A line holding the marker beyond MaxMarkerLine bytes is not the ready line; the search holds at
// most that much of a line.
func TestMarkerFinderHoldsABoundedLine(t *testing.T) {
	f := &markerFinder{marker: []byte("ready"), found: make(chan string, 1)}
	f.Write(bytes.Repeat([]byte("z"), MaxMarkerLine))
	f.Write([]byte("ready\nnot yet"))
	if len(f.found) != 0 || cap(f.line) > 2*MaxMarkerLine {
		t.Errorf("found %d, holding %d bytes", len(f.found), cap(f.line))
	}
	f.Write([]byte(", now ready\nafter\n"))
	if got := <-f.found; got != "not yet, now ready" {
		t.Errorf("found %q", got)
	}
}

// Output returns stdout within its limit and keeps stderr's end for its error.
func TestOutputBoundsStdout(t *testing.T) {
	out, err := Output(exec.Command("sh", "-c", "echo 10.11.6; echo warning >&2"), 100)
	if err != nil || string(out) != "10.11.6\n" {
		t.Errorf("success: %q, %v", out, err)
	}
	out, err = Output(exec.Command("sh", "-c", "head -c 1000 /dev/zero; echo why >&2"), 100)
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Size != 1000 || len(out) != 100 || OutputOf(err) != "why" {
		t.Errorf("too long: %d bytes, %v", len(out), err)
	}
	_, err = Output(exec.Command("sh", "-c", "echo out; echo no such table >&2; exit 1"), 100)
	if err == nil || err.Error() != "sh -c echo out; echo no such table >&2; exit 1: exit status 1: no such table" {
		t.Errorf("failure: %v", err)
	}
}
