package sysinfo

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A version probe holds the start of the output it reads, however much the program prints.
func TestProgramVersionHoldsABoundedOutput(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "chatty")
	script := "#!/bin/sh\necho chatty 1.2\nhead -c 33554432 /dev/zero\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v := ProgramVersion(prog, "--version")
	runtime.ReadMemStats(&after)
	if v != "chatty 1.2" {
		t.Errorf("version %q", v)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 4<<20 {
		t.Errorf("reading 32 MiB of output allocated %d bytes", used)
	}
	if v := ProgramVersion(filepath.Join(t.TempDir(), "missing")); v != "" {
		t.Errorf("a missing program: %q", v)
	}
}
