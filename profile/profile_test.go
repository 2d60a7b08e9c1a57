package profile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "persistlab/lab/bucket"   // registers the bucket kind and model
	_ "persistlab/lab/instance" // registers the instance kind and model
	_ "persistlab/lab/volume"   // registers the volume kind and model
	"persistlab/profile"
	"persistlab/provenance"
)

func sample() *profile.Profile {
	return &profile.Profile{
		Schema: profile.Schema, Kind: "bucket",
		Measured: profile.Measured{Target: "storage.googleapis.com/my-bucket", When: "2026-11-25T10:00:00Z", Commit: "abc1234",
			Machine: profile.Machine{Hostname: "vm-1", CPU: "Intel Xeon", Kernel: "Linux 6.1 x86_64"}},
		Figures: []profile.Figure{
			{Option: "read_median", Value: "21ms", Provenance: "measured", How: "median first-byte latency of 300 GETs of 4 KiB objects"},
			{Option: "read_p99", Value: "88ms", Provenance: "measured", How: "99th percentile of the same"},
			{Option: "stream_mib_s", Value: "31.5", Provenance: "measured", How: "63 MiB over the time between 1 and 64 MiB reads"},
		},
		NotFitted: []profile.NotFitted{{Option: "object_update_interval", Why: "no 429 in 200 writes"}},
		HeldOut:   []profile.HeldOut{{Point: "8 MiB read", Unit: "s", Predicted: 0.275, Measured: 0.25, Error: 0.1}},
	}
}

func TestProfileRoundTrips(t *testing.T) {
	var b bytes.Buffer
	if err := sample().Write(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := profile.Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !reflect.DeepEqual(got, sample()) {
		t.Errorf("read back %+v\nwant %+v", got, sample())
	}
	for _, want := range []string{"schema: " + profile.Schema, "kind: bucket", "persistlab_commit: abc1234", "held_out:", "provenance: measured"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("file lacks %q:\n%s", want, b.String())
		}
	}
}

// Each wrong field is refused with an error naming the field and its value.
func TestProfileRefusesBadFields(t *testing.T) {
	cases := []struct {
		field, value string
		change       func(p *profile.Profile)
	}{
		{"schema", "persistlab.profile/9", func(p *profile.Profile) { p.Schema = "persistlab.profile/9" }},
		{"kind", "disk", func(p *profile.Profile) { p.Kind = "disk" }},
		{"measured.target", "user:secret@host/b", func(p *profile.Profile) { p.Measured.Target = "user:secret@host/b" }},
		{"measured.target", "host-only", func(p *profile.Profile) { p.Measured.Target = "host-only" }},
		{"measured.when", "yesterday", func(p *profile.Profile) { p.Measured.When = "yesterday" }},
		{"measured.machine.cpu", "", func(p *profile.Profile) { p.Measured.Machine.CPU = "" }},
		{"measured.persistlab_commit", "", func(p *profile.Profile) { p.Measured.Commit = "" }},
		{"figures", "", func(p *profile.Profile) { p.Figures = nil }},
		{"figures[1].option", "model", func(p *profile.Profile) { p.Figures[1].Option = "model" }},
		{"figures[1].option", "read_median", func(p *profile.Profile) { p.Figures[1].Option = "read_median" }},
		{"figures[0].value", "fast", func(p *profile.Profile) { p.Figures[0].Value = "fast" }},
		{"figures[2].value", "-3", func(p *profile.Profile) { p.Figures[2].Value = "-3" }},
		{"figures[0].provenance", "assumed", func(p *profile.Profile) { p.Figures[0].Provenance = "assumed" }},
		{"figures[0].how", "", func(p *profile.Profile) { p.Figures[0].How = "" }},
		{"not_fitted[0].option", "read_median", func(p *profile.Profile) { p.NotFitted[0].Option = "read_median" }},
		{"held_out[0].measured", "0", func(p *profile.Profile) { p.HeldOut[0].Measured = 0 }},
		{"held_out[0].error", "0.5", func(p *profile.Profile) { p.HeldOut[0].Error = 0.5 }},
		{"reference", "vm-2 (AMD EPYC; Linux 6.1 x86_64)", func(p *profile.Profile) {
			p.Reference = &profile.Machine{Hostname: "vm-2", CPU: "AMD EPYC", Kernel: "Linux 6.1 x86_64"}
		}},
	}
	for _, c := range cases {
		p := sample()
		c.change(p)
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatal(err)
		}
		_, err := profile.Parse(b.Bytes(), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), c.field+": ") || !strings.Contains(err.Error(), "\""+c.value+"\"") || !strings.Contains(err.Error(), "want") {
			t.Errorf("%s = %q: %v", c.field, c.value, err)
		}
	}
	p := sample()
	p.Figures[1].Value = "5ms" // read_p99 below read_median
	var b bytes.Buffer
	p.Write(&b)
	if _, err := profile.Parse(b.Bytes(), "p.yaml"); err == nil || !strings.Contains(err.Error(), "read_p99") {
		t.Errorf("a p99 below its median: %v", err)
	}
	if _, err := profile.Parse(append(b.Bytes(), "extra: 1\n"...), "p.yaml"); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("an unknown field: %v", err)
	}
}

func TestProfileLoadIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	var b bytes.Buffer
	sample().Write(&b)
	b.WriteString("# " + strings.Repeat("x", profile.MaxBytes) + "\n")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := profile.Load(path); err == nil {
		t.Error("a profile over the size limit was read")
	}
}

// The figures become the bucket model's figures for their options, measured, with where and when.
func TestProfileProvenanceIsMeasured(t *testing.T) {
	figs, err := sample().Provenance("p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 3 {
		t.Fatalf("%d figures", len(figs))
	}
	s := figs["stream_mib_s"]
	if s.Kind != provenance.Measured || s.FittedFrom != "" || s.Value != "31.5 MiB/s" || s.Go != "DefaultModel().StreamBytesPerSecond" || s.Measurement.Profile != "p.yaml" {
		t.Errorf("stream: %+v", s)
	}
	for _, f := range figs {
		if err := f.Check(); err != nil {
			t.Error(err)
		}
	}
	u := &profile.Use{Path: "p.yaml", Profile: *sample()}
	if got := u.Summary(); !strings.Contains(got, "held-out 8 MiB read predicted within 10.0%") || !strings.Contains(got, "storage.googleapis.com/my-bucket") {
		t.Errorf("summary %q", got)
	}
}

// volumeSample is a volume profile of a gp3.
func volumeSample() *profile.Profile {
	return &profile.Profile{
		Schema: profile.Schema, Kind: "volume",
		Measured: profile.Measured{Target: "vm-1:/mnt/data", When: "2026-11-28T04:00:00Z", Commit: "abc1234",
			Machine: profile.Machine{Hostname: "vm-1", CPU: "Intel Xeon", Kernel: "Linux 6.1 x86_64"}},
		Figures: []profile.Figure{
			{Option: "latency", Value: "650µs", Provenance: "measured", How: "mean of the depth-1 medians"},
			{Option: "iops", Value: "3950", Provenance: "measured", How: "4 KiB random reads at depth 32"},
		},
		NotFitted: []profile.NotFitted{{Option: "throughput", Why: "measured 120 MiB/s, below gp3's 125"}},
		HeldOut:   []profile.HeldOut{{Point: "4 KiB random reads at depth 8", Unit: "IOPS", Predicted: 3950, Measured: 3800, Error: 150.0 / 3800}},
		AppliesTo: map[string]string{"type": "gp3"},
	}
}

// A volume profile names a machine and a directory as its target, and applies_to only a volume
// type; an entry of another type is not one it applies to.
func TestVolumeProfileTargetAndAppliesTo(t *testing.T) {
	var b bytes.Buffer
	if err := volumeSample().Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := profile.Parse(b.Bytes(), "v.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !reflect.DeepEqual(got, volumeSample()) || !strings.Contains(b.String(), "applies_to:\n  type: gp3") {
		t.Errorf("read back %+v\n%s", got, b.String())
	}
	cases := []struct {
		field, value string
		change       func(p *profile.Profile)
	}{
		{"measured.target", "storage.googleapis.com/b", func(p *profile.Profile) { p.Measured.Target = "storage.googleapis.com/b" }},
		{"measured.target", "user@vm:/mnt", func(p *profile.Profile) { p.Measured.Target = "user@vm:/mnt" }},
		{"measured.target", "vm:relative/dir", func(p *profile.Profile) { p.Measured.Target = "vm:relative/dir" }},
		{"applies_to.size", "size", func(p *profile.Profile) { p.AppliesTo = map[string]string{"size": "100GiB"} }},
		{"applies_to.type", "gp9", func(p *profile.Profile) { p.AppliesTo = map[string]string{"type": "gp9"} }},
		{"figures[0].option", "type", func(p *profile.Profile) { p.Figures[0].Option = "type" }},
	}
	for _, c := range cases {
		p := volumeSample()
		c.change(p)
		b.Reset()
		p.Write(&b)
		if _, err := profile.Parse(b.Bytes(), "v.yaml"); err == nil || !strings.Contains(err.Error(), c.field+": ") || !strings.Contains(err.Error(), "\""+c.value+"\"") {
			t.Errorf("%s = %q: %v", c.field, c.value, err)
		}
	}
	p := sample() // a bucket profile takes no applies_to
	p.AppliesTo = map[string]string{"type": "gp3"}
	b.Reset()
	p.Write(&b)
	if _, err := profile.Parse(b.Bytes(), "p.yaml"); err == nil || !strings.Contains(err.Error(), "applies_to.type") {
		t.Errorf("a bucket profile with applies_to: %v", err)
	}
	v := volumeSample()
	if why := v.Mismatch(map[string]string{"type": "pd-ssd", "size": "100GiB"}); !strings.Contains(why, "pd-ssd") || !strings.Contains(why, "gp3") {
		t.Errorf("pd-ssd entry: %q", why)
	}
	if why := v.Mismatch(map[string]string{"type": "gp3"}); why != "" {
		t.Errorf("gp3 entry: %q", why)
	}
	// The measured figures stand for the gp3's own: the SSD service time, gp3's IOPS.
	figs, err := v.Provenance("v.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l, i := figs["latency"], figs["iops"]; l.Go != "SSDServiceTime" || l.Value != "650µs" || i.Go != "GP3BaseIOPS" || i.Value != "3950 IOPS" || l.Kind != provenance.Measured {
		t.Errorf("latency %+v\niops %+v", l, i)
	}
	v.AppliesTo = map[string]string{"type": "pd-ssd"}
	if figs, _ := v.Provenance("v.yaml"); figs["latency"].Go != "PDServiceTime" {
		t.Errorf("a pd-ssd profile's latency stands for %s", figs["latency"].Go)
	}
}

// An instance profile's figures are ratios to the machine calibrate ran on: it must name that
// machine (reference), and each of its fields is checked; it round-trips with it.
func TestInstanceProfileNamesItsReference(t *testing.T) {
	p := &profile.Profile{Schema: profile.Schema, Kind: "instance",
		Measured: profile.Measured{Target: "probe-vm", When: "2026-11-25T10:00:00Z", Commit: "abc1234",
			Machine: profile.Machine{Hostname: "probe-vm", CPU: "Intel Xeon", Kernel: "Linux 6.1 x86_64"}},
		Figures: []profile.Figure{
			{Option: "cpu_factor", Value: "3.7", Provenance: "measured", How: "the target's ms per unit over this machine's"},
			{Option: "effective_cpus", Value: "1", Provenance: "measured", How: "2 threads against one on the target"},
		},
		HeldOut:   []profile.HeldOut{{Point: "8-row unit of CPU work", Unit: "ms", Predicted: 0.22, Measured: 0.2, Error: 0.1}},
		Reference: &profile.Machine{Hostname: "lab", CPU: "AMD EPYC", Kernel: "Linux 6.18 x86_64"},
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := profile.Parse(b.Bytes(), "i.yaml")
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("%v: read back %+v\nwant %+v", err, got, p)
	}
	for name, change := range map[string]func(q *profile.Profile){
		"reference":                  func(q *profile.Profile) { q.Reference = nil },
		"reference.cpu":              func(q *profile.Profile) { q.Reference = &profile.Machine{Hostname: "lab", Kernel: "Linux"} },
		"measured.target":            func(q *profile.Profile) { q.Measured.Target = "vm/../x" },
		"figures[1].value":           func(q *profile.Profile) { q.Figures[1].Value = "NaN" },
		"figures: no effective_cpus": func(q *profile.Profile) { q.Figures = q.Figures[:1] },
	} {
		q := *p
		q.Figures = append([]profile.Figure(nil), p.Figures...)
		change(&q)
		var b bytes.Buffer
		q.Write(&b)
		field, _, _ := strings.Cut(name, ": ")
		if _, err := profile.Parse(b.Bytes(), "i.yaml"); err == nil || !strings.Contains(err.Error(), field+": ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
