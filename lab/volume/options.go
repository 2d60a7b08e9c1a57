package volume

import (
	"math"
	"strings"
	"time"

	"persistlab/param"
)

// Options are the options that describe a volume: the volume backend's, and the flags of
// `persistlab lab volume`. ConfigFromOptions reads them through their declarations (param.Decode:
// kinds and bounds) and checks what depends on the type (its sizes, what it provisions).
var Options = []param.Param{
	{Name: "type", Kind: param.KindEnum, Allowed: TypeNames(), Help: "the volume type (required): EBS gp2, gp3, io1, io2, st1, sc1; Persistent Disk pd-standard, pd-balanced, pd-ssd; Cloud SQL's SSD storage cloudsql-ssd"},
	{Name: "size", Kind: param.KindSize, Min: 1, Max: math.Inf(1), Unit: "bytes", Help: "the volume's size (required), like 100GiB, within the type's range; it sets the type's IOPS and throughput where they grow with size"},
	{Name: "iops", Kind: param.KindFloat, Min: 1, Max: IOMaxIOPS, Unit: "IOPS", Help: "provisioned I/O operations per second, where the type takes them (gp3, io1, io2; each type's own range; unset: the type's)"},
	{Name: "throughput", Kind: param.KindFloat, Min: 1, Max: IOMaxMiBps, Unit: "MiB/s", Help: "provisioned throughput, where the type takes it (gp3; unset: the type's)"},
	{Name: "fs", Kind: param.KindEnum, Default: FileSystems[0], Allowed: FileSystems, Help: "the file system the volume is formatted with"},
	{Name: "instance", Kind: param.KindEnum, Default: Instances[0].Name, Allowed: instanceNames(), Help: "the machine the volume is attached to: its own limit on storage I/O (c4.large: 4,000 IOPS and 62.5 MB/s; N1: writes capped by network egress) and its memory"},
	{Name: "memory", Kind: param.KindSize, Unit: "bytes", Help: "the instance's memory, page cache included, bounding what the programs on the volume cache (at least 16MiB; 0: unbounded; unset: the instance's)"},
	{Name: "era", Kind: param.KindEnum, Default: Eras[0], Allowed: Eras, Help: "the providers' figures of today or of 2018, the seeds' era (gp3, io2 and pd-balanced did not exist then)"},
	{Name: "model", Kind: param.KindBool, Default: "on", Help: "on: the provider's published limits; off: this machine's own speed, the emulator's ceiling"},
	{Name: "latency", Kind: param.KindDuration, Min: 1e-9, Max: MaxServiceTime.Seconds(), Help: "a service time every I/O waits, replacing the type's assumed one (0.5 to 6 ms); a stop waits for those in flight"},
	{Name: "credit_scale", Kind: param.KindFloat, Default: "1", Min: MinCreditScale, Max: MaxCreditScale, Help: "a factor on the burst credit bucket's size (1: the published one), so a test can drain it in seconds"},
	{Name: "merge_window", Kind: param.KindDuration, Default: "0s", Min: 0, Max: MaxMergeWindow.Seconds(), Help: "contiguous I/Os bill as one only when they arrive within this of each other (an assumption; 0: no bound)"},
}

func instanceNames() []string {
	var names []string
	for _, in := range Instances {
		names = append(names, in.Name)
	}
	return names
}

// settings are a volume's options, read.
type settings struct {
	Type        string        `param:"type"`
	Size        int64         `param:"size"`
	IOPS        float64       `param:"iops"`
	Throughput  float64       `param:"throughput"`
	FS          string        `param:"fs"`
	Instance    string        `param:"instance"`
	Memory      *int64        `param:"memory"`
	Era         string        `param:"era"`
	Model       bool          `param:"model"`
	Latency     time.Duration `param:"latency"`
	CreditScale float64       `param:"credit_scale"`
	MergeWindow time.Duration `param:"merge_window"`
}

// ConfigFromOptions reads a volume's options (all text, as a scenario gives them) and checks them
// against the provider's rules. A value an option's declaration refuses, a required option left
// out and a memory too small are a *param.FieldError for the option's name; the type's own rules
// (its sizes, what it provisions) name the volume.
func ConfigFromOptions(o map[string]string) (Config, error) {
	var s settings
	if err := param.Decode(Options, o, &s); err != nil {
		return Config{}, err
	}
	if s.Type == "" {
		return Config{}, &param.FieldError{Field: "type", Allowed: "a volume type: " + strings.Join(TypeNames(), ", ")}
	}
	if s.Size == 0 {
		return Config{}, &param.FieldError{Field: "size", Allowed: "the volume's size, like 100GiB"}
	}
	spec := Spec{Type: s.Type, SizeBytes: s.Size, ProvisionedIOPS: s.IOPS, ProvisionedMiBps: s.Throughput, Instance: s.Instance, Era: s.Era,
		ServiceTime: s.Latency, MergeWindow: s.MergeWindow, CreditScale: s.CreditScale}
	if err := spec.Validate(); err != nil {
		return Config{}, err
	}
	cfg := Config{Spec: spec, FS: s.FS, Off: !s.Model, MemoryBytes: spec.Limits().Instance.MemoryBytes}
	if s.Memory != nil {
		if cfg.MemoryBytes = *s.Memory; cfg.MemoryBytes != 0 && cfg.MemoryBytes < 16<<20 {
			return Config{}, &param.FieldError{Field: "memory", Value: o["memory"], Allowed: "the instance's memory, page cache included, like 3840MiB (at least 16MiB; 0: unbounded); unset: the instance's"}
		}
	}
	return cfg, nil
}

// TypeNames lists the volume types' names, for help and errors.
func TypeNames() []string {
	var names []string
	for _, t := range Types() {
		names = append(names, t.Name)
	}
	return names
}
