// Package conformance is the one test every backend passes: start, write, read back, stop clean,
// leaving no mount and no process behind.
package conformance

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/internal/loopdev"
	"persistlab/internal/mounts"
)

// Feature is a promise a backend makes beyond the suite's baseline, tested when given to Run.
type Feature int

const (
	// KeepsFilesAcrossCrash: a file written and closed before Crash is there after Recover (a
	// bucket keeps objects; Litestream keeps only its database, so it does not promise this).
	KeepsFilesAcrossCrash Feature = iota + 1
)

// Run checks the backend made by newBackend, which is given a fresh work directory. Crash and
// recovery, and a second instance, are tested when the backend implements them.
func Run(t *testing.T, newBackend func(workDir string) (backend.Backend, error), features ...Feature) {
	t.Helper()
	promised := map[Feature]bool{}
	for _, f := range features {
		promised[f] = true
	}
	t.Run("StartWriteReadStop", func(t *testing.T) {
		work := t.TempDir()
		before := Snapshot(t, work)
		b, err := newBackend(work)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		target, err := b.Start(ctx)
		if err != nil {
			b.Stop(ctx)
			t.Fatal(err)
		}
		payload := bytes.Repeat([]byte("persistlab "), 1000)
		file := filepath.Join(target.Dir, "conformance.bin")
		if err := os.WriteFile(file, payload, 0o644); err != nil {
			b.Stop(ctx)
			t.Fatal(err)
		}
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, payload) {
			b.Stop(ctx)
			t.Fatalf("read back %d bytes (err %v), wrote %d", len(got), err, len(payload))
		}
		_ = b.Stats()
		if err := b.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Stop(ctx); err != nil {
			t.Fatalf("second Stop: %v", err)
		}
		Snapshot(t, work).MustEqual(t, before)
	})
	t.Run("StopAfterCancelledStart", func(t *testing.T) {
		work := t.TempDir()
		before := Snapshot(t, work)
		b, err := newBackend(work)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _ = b.Start(ctx) // may fail or succeed; either way Stop must leave nothing behind
		if err := b.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		Snapshot(t, work).MustEqual(t, before)
	})
	t.Run("CrashRecover", func(t *testing.T) {
		b, ctx := stoppedAtEnd(t, newBackend)
		crasher, ok := b.(backend.Crasher)
		if !ok {
			t.Skipf("backend %s cannot lose its instance", b.Name())
		}
		target, err := b.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		payload := bytes.Repeat([]byte("before the crash "), 4096)
		if err := writeSynced(filepath.Join(target.Dir, "crash.bin"), payload); err != nil {
			t.Fatal(err)
		}
		if err := crasher.Crash(); err != nil {
			t.Fatal(err)
		}
		again, err := crasher.Recover(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A crash may lose a file (a backend that keeps one database), never corrupt one.
		got, err := os.ReadFile(filepath.Join(again.Dir, "crash.bin"))
		switch {
		case err == nil && !bytes.Equal(got, payload):
			t.Errorf("after recovery crash.bin holds %d bytes that differ from the %d written", len(got), len(payload))
		case err != nil && promised[KeepsFilesAcrossCrash]:
			t.Errorf("a file closed before the crash is gone after recovery: %v", err)
		}
		// The new instance works.
		if err := writeSynced(filepath.Join(again.Dir, "after.bin"), payload); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(again.Dir, "after.bin")); err != nil || !bytes.Equal(got, payload) {
			t.Errorf("the recovered instance read back %d bytes (%v)", len(got), err)
		}
	})
	t.Run("SecondInstance", func(t *testing.T) {
		b, ctx := stoppedAtEnd(t, newBackend)
		multi, ok := b.(backend.MultiInstance)
		if !ok {
			t.Skipf("backend %s serves one instance", b.Name())
		}
		first, err := b.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		payload := bytes.Repeat([]byte("shared "), 4096)
		if err := writeSynced(filepath.Join(first.Dir, "one.bin"), payload); err != nil {
			t.Fatal(err)
		}
		second, err := multi.AddInstance(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if second.Dir == first.Dir {
			t.Fatalf("the second instance shares the first's directory %s: it should have its own view", first.Dir)
		}
		if first.DSN != "" { // the instances share a server, each with a disk of its own
			if second.DSN != first.DSN {
				t.Errorf("the second instance's server %q, the first's %q: want one server for both", second.DSN, first.DSN)
			}
			if _, err := os.Stat(filepath.Join(second.Dir, "one.bin")); !os.IsNotExist(err) {
				t.Errorf("the second instance's own disk holds the first's file (%v): want a disk of its own", err)
			}
			return
		}
		if got, err := os.ReadFile(filepath.Join(second.Dir, "one.bin")); err != nil || !bytes.Equal(got, payload) {
			t.Errorf("the second instance reads %d bytes of the first's file (%v), want %d", len(got), err, len(payload))
		}
		if err := writeSynced(filepath.Join(second.Dir, "two.bin"), payload); err != nil {
			t.Fatal(err)
		}
	})
}

// stoppedAtEnd makes a backend in a fresh work directory and, when the test ends, stops it and
// checks that it left nothing behind.
func stoppedAtEnd(t *testing.T, newBackend func(workDir string) (backend.Backend, error)) (backend.Backend, context.Context) {
	t.Helper()
	work := t.TempDir()
	before := Snapshot(t, work)
	b, err := newBackend(work)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(func() {
		defer cancel()
		if err := b.Stop(ctx); err != nil {
			t.Error(err)
		}
		Snapshot(t, work).MustEqual(t, before)
	})
	return b, ctx
}

// writeSynced writes a file, fsyncs and closes it: what a careful application does.
func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// State is what a backend could leave behind: mounts and loop devices under its work directory
// and this process's children. (Other tests may mount elsewhere at the same time.)
type State struct {
	Mounts   []string
	Children []string
	Loops    []string // loop devices whose backing file is under the directory
}

// Snapshot reads the mounts under dir and this test process's child processes.
func Snapshot(t *testing.T, dir string) State {
	t.Helper()
	var s State
	for _, m := range mounts.Under(dir) {
		s.Mounts = append(s.Mounts, m.Point+" "+m.Type)
	}
	s.Loops = loopdev.Under(dir)
	self := os.Getpid()
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		str := string(data)
		fields := strings.Fields(str[strings.LastIndexByte(str, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(self) && fields[0] != "Z" {
			s.Children = append(s.Children, filepath.Base(filepath.Dir(p))+" "+str[strings.IndexByte(str, '(')+1:strings.LastIndexByte(str, ')')])
		}
	}
	return s
}

// MustEqual fails the test if s holds a mount or child that before did not.
func (s State) MustEqual(t *testing.T, before State) {
	t.Helper()
	if extra := minus(s.Mounts, before.Mounts); len(extra) > 0 {
		t.Errorf("left mounted: %v", extra)
	}
	if extra := minus(s.Children, before.Children); len(extra) > 0 {
		t.Errorf("left running: %v", extra)
	}
	if extra := minus(s.Loops, before.Loops); len(extra) > 0 {
		t.Errorf("loop devices left attached: %v", extra)
	}
}

func minus(a, b []string) []string {
	seen := map[string]int{}
	for _, x := range b {
		seen[x]++
	}
	var out []string
	for _, x := range a {
		if seen[x] > 0 {
			seen[x]--
			continue
		}
		out = append(out, x)
	}
	return out
}
