package volume

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"persistlab/scenario"
)

// OptionNames are the options that describe a volume: the volume backend's, and the flags of
// `persistlab lab volume`.
var OptionNames = []string{"type", "size", "iops", "throughput", "fs", "instance", "memory", "era", "model", "latency", "credit_scale", "merge_window"}

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
	n, err := scenario.ParseSize(size)
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
		if cfg.MemoryBytes, err = scenario.ParseSize(v); err != nil || (cfg.MemoryBytes != 0 && cfg.MemoryBytes < 16<<20) {
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
