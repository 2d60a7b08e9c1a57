package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/internal/mounts"
	"persistlab/lab"
	"persistlab/lab/volume"
)

// The table names every type once, and says "no" exactly where a type's published maximum
// reaches 80% of the ceiling; an unbounded emulator reaches every one.
func TestLabVolumesSaysWhereTheEmulatorEnds(t *testing.T) {
	rowOf := func(out, typ string) string {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == typ {
				return line
			}
		}
		return ""
	}
	for _, c := range []lab.Ceiling{{WriteIOPS: 20000, WriteMiBs: 300}, {WriteIOPS: math.Inf(1), WriteMiBs: math.Inf(1)}} {
		var b bytes.Buffer
		if err := writeReaches(&b, c); err != nil {
			t.Fatal(err)
		}
		f, err := fastestScenarioVolumes()
		if err != nil || f.iopsAt == "" || f.mibAt == "" {
			t.Fatalf("fastest scenario volumes %+v: %v", f, err)
		}
		for _, goal := range []struct {
			name string
			met  bool
		}{{"write IOPS", c.WriteIOPS >= 2*f.iops}, {"MiB/s", c.WriteMiBs >= 2*f.mib}} {
			verdict := map[bool]string{true: ": met;", false: ": missed;"}[goal.met]
			if row := goalRow(b.String(), goal.name); !strings.Contains(row, verdict) {
				t.Errorf("ceiling %+v, fastest scenario %+v: the %s goal row %q, want %q", c, f, goal.name, row, verdict)
			}
		}
		for _, ty := range volume.Types() {
			row := rowOf(b.String(), ty.Name)
			if row == "" {
				t.Errorf("no row for %s:\n%s", ty.Name, b.String())
				continue
			}
			reached := !strings.Contains(row, "  no  ")
			for _, r := range volume.Reaches(c.WriteIOPS, c.WriteMiBs, 0.8) {
				if r.Type == ty.Name && r.AtMax != reached {
					t.Errorf("ceiling %+v: %s reached %v, row says %v: %s", c, ty.Name, r.AtMax, reached, row)
				}
			}
		}
	}
}

func goalRow(out, figure string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "goal: volume emulator: "+figure) {
			return line
		}
	}
	return ""
}

// The real probe: the emulator is started with the model off, measured, stopped; the command
// leaves no mount and no work directory behind.
func TestLabVolumesProbesAndLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stdout, stderr, err := persistlab(t, "lab", "volumes", "--probe", "64MiB") // its work directory in TMPDIR
	if err != nil || !strings.Contains(stdout, "write IOPS at 4 KiB") || !strings.Contains(stdout, "io1") {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	if m := mounts.Under(tmp); len(m) > 0 {
		t.Errorf("left mounted: %v", m)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "persistlab-volumes-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatal(err)
	}
}
