package volume

import (
	"fmt"
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
	for _, f := range []struct {
		option string
		into   *float64
	}{{"iops", &spec.ProvisionedIOPS}, {"throughput", &spec.ProvisionedMiBps}} {
		if v, ok := o[f.option]; ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) {
				return cfg, fail(f.option, v, "a number above 0 ("+map[string]string{"iops": "I/O operations per second", "throughput": "MiB/s"}[f.option]+")")
			}
			*f.into = x
		}
	}
	if v, ok := o["latency"]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return cfg, fail("latency", v, "a service time per I/O above 0, like 1ms (replaces the type's assumed one)")
		}
		spec.ServiceTime = d
	}
	if v, ok := o["merge_window"]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return cfg, fail("merge_window", v, "a duration like 10ms: contiguous I/Os arriving within it of each other bill as one (0: no bound)")
		}
		spec.MergeWindow = d
	}
	if v, ok := o["credit_scale"]; ok {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) {
			return cfg, fail("credit_scale", v, "a factor above 0 on the burst bucket's size (1: the published one)")
		}
		spec.CreditScale = x
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
