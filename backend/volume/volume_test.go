package volume

import (
	"context"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/backend/conformance"
)

func TestConformance(t *testing.T) {
	for _, opts := range []map[string]string{
		{"type": "gp3", "size": "20GiB"},
		{"type": "st1", "size": "500GiB", "fs": "xfs"},
	} {
		conformance.Run(t, func(work string) (backend.Backend, error) {
			return backend.New(Name, backend.Env{WorkDir: work, Options: opts})
		}, conformance.KeepsFilesAcrossCrash)
	}
}

func TestBadOptionsNameTheOption(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"type": "gp2"}, "size"},
		{map[string]string{"type": "st1", "size": "100GiB"}, "125 GiB"},
		{map[string]string{"type": "io1", "size": "100GiB", "iops": "9000"}, "50 per GiB"},
		{map[string]string{"type": "gp2", "size": "100GiB", "throughput": "500"}, "throughput"},
		{map[string]string{"type": "gp2", "size": "100GiB", "colour": "red"}, `option "colour"`},
		{map[string]string{"type": "gp2", "size": "100GiB", "ceiling_probe": "some"}, "ceiling_probe"},
	} {
		if _, err := New(backend.Env{WorkDir: t.TempDir(), Options: tc.opts}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want it to say %q", tc.opts, err, tc.want)
		}
	}
}

// The ceiling probe measures the stack with the model off and leaves nothing behind.
func TestCeilingProbe(t *testing.T) {
	work := t.TempDir()
	before := conformance.Snapshot(t, work)
	b, err := New(backend.Env{WorkDir: work, Options: map[string]string{"type": "sc1", "size": "500GiB", "ceiling_probe": "64MiB"}})
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := b.(backend.CeilingProber).ProbeCeiling(context.Background())
	// sc1 allows 250 MiB/s at most: the emulator with the model off must be well above it.
	if err != nil || !ok || c.ReadMiBs <= 250 || c.WriteMiBs <= 0 || c.ReadIOPS <= 0 || c.WriteIOPS <= 0 {
		t.Errorf("probe: %+v %v %v", c, ok, err)
	}
	t.Logf("ceiling: %+v", c)
	conformance.Snapshot(t, work).MustEqual(t, before)
}
