package volume

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"persistlab/param"
)

// Options are the options that describe a volume: the volume backend's, and the flags of
// `persistlab lab volume`. Param.Check holds each value to its kind and bounds; ConfigFromOptions
// checks them again with what depends on the type (its sizes, what it provisions).
var Options = []param.Param{
	{Name: "type", Kind: param.KindEnum, Allowed: TypeNames(), Help: "the volume type (required): EBS gp2, gp3, io1, io2, st1, sc1; Persistent Disk pd-standard, pd-balanced, pd-ssd; Cloud SQL's SSD storage cloudsql-ssd"},
	{Name: "size", Kind: param.KindSize, Min: 1, Max: math.Inf(1), Unit: "bytes", Help: "the volume's size (required), like 100GiB, within the type's range; it sets the type's IOPS and throughput where they grow with size"},
	{Name: "iops", Kind: param.KindFloat, Min: 1, Max: IOMaxIOPS, Unit: "IOPS", Help: "provisioned I/O operations per second, where the type takes them (gp3, io1, io2; each type's own range; unset: the type's)"},
	{Name: "throughput", Kind: param.KindFloat, Min: 1, Max: IOMaxMiBps, Unit: "MiB/s", Help: "provisioned throughput, where the type takes it (gp3; unset: the type's)"},
	{Name: "fs", Kind: param.KindEnum, Default: FileSystems[0], Allowed: FileSystems, Help: "the file system the volume is formatted with"},
	{Name: "instance", Kind: param.KindEnum, Default: Instances[0].Name, Allowed: instanceNames(), Help: "the machine the volume is attached to: its own limit on storage I/O (c4.large: 4,000 IOPS and 62.5 MB/s; N1: writes capped by network egress) and its memory"},
	{Name: "memory", Kind: param.KindSize, Unit: "bytes", Help: "the instance's memory, page cache included, bounding what the programs on the volume cache (at least 16MiB; 0: unbounded; unset: the instance's)"},
	{Name: "era", Kind: param.KindEnum, Default: Eras[0], Allowed: Eras, Help: "the providers' figures of today or of 2018, the seeds' era (gp3, io2 and pd-balanced did not exist then)"},
	{Name: "model", Kind: param.KindEnum, Default: "on", Allowed: []string{"on", "off"}, Help: "on: the provider's published limits; off: this machine's own speed, the emulator's ceiling"},
	{Name: "latency", Kind: param.KindDuration, Min: 1e-9, Max: MaxServiceTime.Seconds(), Help: "a service time every I/O waits, replacing the type's assumed one (0.5 to 6 ms); a stop waits for those in flight"},
	{Name: "credit_scale", Kind: param.KindFloat, Default: "1", Min: MinCreditScale, Max: MaxCreditScale, Help: "a factor on the burst credit bucket's size (1: the published one), so a test can drain it in seconds"},
	{Name: "merge_window", Kind: param.KindDuration, Default: "0s", Min: 0, Max: MaxMergeWindow.Seconds(), Help: "contiguous I/Os bill as one only when they arrive within this of each other (an assumption; 0: no bound)"},
}

// OptionNames are the names of Options, in their order.
var OptionNames = param.Names(Options)

func instanceNames() []string {
	var names []string
	for _, in := range Instances {
		names = append(names, in.Name)
	}
	return names
}

// ConfigFromOptions reads a volume's options (all text, as a scenario gives them) and checks them
// against the provider's rules; errors name the option, its value and what is allowed.
func ConfigFromOptions(o map[string]string) (Config, error) {
	var cfg Config
	fail := func(option, value, allowed string) error {
		return fmt.Errorf("option %s %q: want %s", option, value, allowed)
	}
	spec := Spec{Type: o["type"], Instance: o["instance"], Era: o["era"]}
	if spec.Type == "" {
		return cfg, fail("type", "", "a volume type: "+strings.Join(TypeNames(), ", "))
	}
	size := o["size"]
	if size == "" {
		return cfg, fail("size", "", "the volume's size, like 100GiB")
	}
	n, err := param.ParseSize(size)
	if err != nil || n <= 0 {
		return cfg, fail("size", size, "a size like 100GiB or 1TiB")
	}
	spec.SizeBytes = n
	// A number option: finite (ParseFloat takes "Inf", "NaN" and 1e308) and within [lo, hi].
	number := func(option string, lo, hi float64, what string) (float64, error) {
		v := o[option]
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || x < lo || x > hi {
			return 0, fail(option, v, fmt.Sprintf("%g to %g, %s", lo, hi, what))
		}
		return x, nil
	}
	// Up to the most any type provisions; each type's own range is Validate's.
	if _, ok := o["iops"]; ok {
		if spec.ProvisionedIOPS, err = number("iops", 1, IOMaxIOPS, "the provisioned I/O operations per second"); err != nil {
			return cfg, err
		}
	}
	if _, ok := o["throughput"]; ok {
		if spec.ProvisionedMiBps, err = number("throughput", 1, IOMaxMiBps, "the provisioned MiB/s"); err != nil {
			return cfg, err
		}
	}
	if _, ok := o["credit_scale"]; ok {
		if spec.CreditScale, err = number("credit_scale", MinCreditScale, MaxCreditScale, "a factor on the burst bucket's size (1: the published one)"); err != nil {
			return cfg, err
		}
	}
	duration := func(option string, lo, hi time.Duration, what string) (time.Duration, error) {
		v := o[option]
		d, err := time.ParseDuration(v)
		if err != nil || d < lo || d > hi {
			return 0, fail(option, v, fmt.Sprintf("%v to %v, %s", lo, hi, what))
		}
		return d, nil
	}
	if _, ok := o["latency"]; ok {
		// Above 0: a service time of 0 would mean the type's own.
		if spec.ServiceTime, err = duration("latency", time.Nanosecond, MaxServiceTime,
			"a service time per I/O like 1ms, replacing the type's assumed one (0.5 to 6 ms): every I/O waits it, and a stop waits for those in flight"); err != nil {
			return cfg, err
		}
	}
	if _, ok := o["merge_window"]; ok {
		if spec.MergeWindow, err = duration("merge_window", 0, MaxMergeWindow,
			"a duration like 10ms: contiguous I/Os arriving within it of each other bill as one (0: no bound)"); err != nil {
			return cfg, err
		}
	}
	if err := spec.Validate(); err != nil {
		return cfg, err
	}
	cfg.Spec = spec
	cfg.MemoryBytes = spec.Limits().Instance.MemoryBytes
	if v, ok := o["memory"]; ok {
		if cfg.MemoryBytes, err = param.ParseSize(v); err != nil || (cfg.MemoryBytes != 0 && cfg.MemoryBytes < 16<<20) {
			return cfg, fail("memory", v, "the instance's memory, page cache included, like 3840MiB (at least 16MiB; 0: unbounded); unset: the instance's")
		}
	}
	switch m := o["model"]; m {
	case "", "on":
	case "off":
		cfg.Off = true
	default:
		return cfg, fail("model", m, "on (the provider's published limits) or off (this machine's own speed: the emulator's ceiling)")
	}
	cfg.FS = o["fs"]
	if cfg.FS == "" {
		cfg.FS = FileSystems[0]
	}
	if !slices.Contains(FileSystems, cfg.FS) {
		return cfg, fail("fs", cfg.FS, strings.Join(FileSystems, " or "))
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
