package runner

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/lab"
	"persistlab/param"
	"persistlab/scenario"
)

// fakeModelled is a fakeprobed with a volume model: its published write IOPS are its option
// iops, against a lab that moves 1,000 4 KiB writes per second here.
type fakeModelled struct{ fakeProbed }

func (b *fakeModelled) ProbeCeiling(ctx context.Context) (lab.Ceiling, bool, error) {
	c, ok, err := b.fakeProbed.ProbeCeiling(ctx)
	c.WriteIOPS = 1000
	return c, ok, err
}

func init() {
	backend.RegisterInfo(backend.Info{Name: "fakemodelled", Options: []param.Param{{Name: "iops", Kind: param.KindFloat, Default: "100", Min: 1, Max: 1e6, Help: "published write IOPS"}},
		New: func(env backend.Env) (backend.Backend, error) {
			return &fakeModelled{fakeProbed{fakeBackend{env: env}}}, nil
		},
		VolumeModel: func(opts map[string]string) (lab.VolumeModel, bool) {
			iops, err := strconv.ParseFloat(opts["iops"], 64)
			if err != nil {
				iops = 100
			}
			return lab.VolumeModel{Type: "fake", WriteIOPS: iops, WriteMiBps: 1}, true
		}})
}

// An entry with a volume model has its lab's ceiling measured whatever the workload, and a
// published limit the lab cannot reach is flagged before the first cell, in the notes and on the
// terminal; an entry the lab can emulate is not flagged, and a shard probes its own entries only.
func TestVolumesTheLabCannotEmulateAreFlaggedBeforeTheFirstCell(t *testing.T) {
	spec := fakeSpec("1", scenario.BackendSpec{Name: "fakemodelled", Label: "fast", Options: map[string]string{"iops": "900"}},
		scenario.BackendSpec{Name: "fakemodelled", Label: "slow", Options: map[string]string{"iops": "100"}})
	plan, err := scenario.NewPlan(spec, Known())
	if err != nil {
		t.Fatal(err)
	}
	takeLedger()
	var progress bytes.Buffer
	work := t.TempDir()
	res, err := RunPlan(context.Background(), plan, Options{Out: filepath.Join(work, "r.json"), WorkDir: filepath.Join(work, "w"), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if log := takeLedger(); count(log, "probe") != 2 || len(res.Ceilings) != 2 {
		t.Errorf("probes %v, ceilings %v", log, res.Ceilings)
	}
	var flagged []string
	for _, n := range res.Notes {
		if strings.Contains(n, "lab-bound") {
			flagged = append(flagged, n)
		}
	}
	if len(flagged) != 1 || !strings.Contains(flagged[0], "backend fast") || !strings.Contains(flagged[0], "900 write IOPS against the emulator's 1000") {
		t.Errorf("notes %q", res.Notes)
	}
	if !strings.Contains(progress.String(), "warning: backend fast is lab-bound") || strings.Index(progress.String(), "lab-bound") > strings.Index(progress.String(), "cell 1") {
		t.Errorf("the terminal was not warned before the first cell:\n%s", progress.String())
	}
	share, err := plan.Share(scenario.Shard{Index: 1, Of: 2, By: scenario.ShardByBackend})
	if err != nil {
		t.Fatal(err)
	}
	res, err = RunPlan(context.Background(), share, Options{Out: filepath.Join(work, "s.json"), WorkDir: filepath.Join(work, "w2")})
	if err != nil {
		t.Fatal(err)
	}
	if log := takeLedger(); count(log, "probe") != 1 || len(res.Ceilings) != 1 {
		t.Errorf("a shard of one entry probed %v, ceilings %v", log, res.Ceilings)
	}
}

// A machine that pages out idle memory is named with the volumes it distorts; without such a
// policy, or without a volume, there is nothing to say.
func TestPageOutNoteNamesThePolicyAndTheVolumes(t *testing.T) {
	policy := "kdamond 0 (DAMON, paddr): pages out page cache idle for 60 s or more"
	note := PageOutNote([]string{policy}, []string{"st1", "sc1"})
	for _, want := range []string{policy, "on st1, sc1", "read again from the volume"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if n := PageOutNote(nil, []string{"st1"}); n != "" {
		t.Errorf("no policy: %q", n)
	}
	if n := PageOutNote([]string{policy}, nil); n != "" {
		t.Errorf("no volume: %q", n)
	}
}
