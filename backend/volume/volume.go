// Package volume keeps the data on an emulated cloud block volume (EBS, Persistent Disk, a Cloud
// SQL disk): a real file system on a loop device whose every I/O passes persistlab's model of the
// provider's published limits (lab/volume).
package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"

	"persistlab/backend"
	"persistlab/internal/sysinfo"
	"persistlab/lab"
	"persistlab/lab/volume"
	"persistlab/param"
)

// Name is the backend's name in scenarios.
const Name = "volume"

// The optional capabilities the runner finds by type assertion, checked at compile time.
var (
	_ backend.Crasher         = (*Backend)(nil)
	_ backend.CeilingProber   = (*Backend)(nil)
	_ backend.Sampler         = (*Backend)(nil)
	_ backend.InstanceMemory  = (*Backend)(nil)
	_ backend.InstanceWrapper = (*Backend)(nil)
	_ backend.ProbeSpacer     = (*Backend)(nil)
)

func init() {
	backend.RegisterInfo(backend.Info{Name: Name, Description: "an emulated cloud block volume (EBS, Persistent Disk, Cloud SQL's disk): ext4 or xfs on a loop device whose every I/O passes the provider's published limits (needs root)",
		Options: Options, New: New, CloudModel: "volume", VolumeModel: Model})
}

// Model describes an entry's volume for the report: its type, size, published limits and price.
func Model(options map[string]string) (lab.VolumeModel, bool) {
	cfg, err := volume.ConfigFromOptions(options)
	if err != nil || cfg.Off {
		return lab.VolumeModel{}, false
	}
	s, l := cfg.Spec, cfg.Spec.Limits()
	m := lab.VolumeModel{Type: s.Type, SizeBytes: s.SizeBytes, Limits: l.String(),
		CreditIOs: l.CreditIOs, CreditMiB: l.CreditMiB, BaseIOPS: l.BaseIOPS, BaseMiBps: l.BaseMiBps,
		Expect: func(j lab.Job) float64 { return l.Expect(volume.Job(j)) }}
	// io1's 25,000 IOPS on a c4.large are the instance's 4,000: what the lab must reach.
	m.WriteIOPS, m.WriteMiBps = l.PeakWriteOn()
	m.MonthlyUSD, m.PriceBasis = s.MonthlyUSD()
	return m, true
}

// Options are the backend's options: a volume's (lab/volume), and ceiling_probe.
var Options = append(slices.Clone(volume.Options), param.Param{Name: "ceiling_probe", Kind: param.KindSize,
	Default: param.FormatSize(DefaultCeilingProbe), Min: 0, Max: MaxCeilingProbe, Unit: "bytes",
	Help: "bytes written and read back on a volume of the same type with the model off before the first cell: the emulator's own ceiling here, against which the volume's published limits are flagged when the lab cannot reach them (0: no probe)"})

// Backend is one emulated volume, made fresh for each cell.
type Backend struct {
	env       backend.Env
	cfg       volume.Config
	probeSize int64
	vol       *volume.Volume
	versions  map[string]string
}

// WrapsInstance implements backend.InstanceWrapper: with the instance's memory bounded, its
// programs run in a memory cgroup.
func (b *Backend) WrapsInstance() bool { return b.cfg.MemoryBytes > 0 }

// InstanceMemoryCgroup implements backend.InstanceMemory: the started volume's instance memory
// cgroup, "" with unbounded memory or before Start.
func (b *Backend) InstanceMemoryCgroup() string {
	if b.vol == nil {
		return ""
	}
	return b.vol.MemoryCgroup()
}

// New reads the options into a volume and checks it, the programs it runs and the rights it
// needs, starting nothing.
func New(env backend.Env) (backend.Backend, error) {
	cfg, err := volume.ConfigFromOptions(env.Options)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	cfg.WorkDir, cfg.Keep = env.WorkDir, env.Keep
	var own struct {
		CeilingProbe int64 `param:"ceiling_probe"`
	}
	if err := param.Decode(Options, env.Options, &own); err != nil {
		return nil, fmt.Errorf("backend %q: %w", Name, err)
	}
	b := &Backend{env: env, cfg: cfg, probeSize: own.CeilingProbe}
	mkfs := "mkfs." + cfg.FS
	for _, prog := range []string{"losetup", "mount", "umount", mkfs} {
		if _, err := exec.LookPath(prog); err != nil {
			return nil, fmt.Errorf("backend %q: %s not found (Debian packages util-linux, e2fsprogs, xfsprogs; run scripts/setup)", Name, prog)
		}
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("backend %q: attaching loop devices and mounting file systems needs root", Name)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("backend %q: /dev/fuse: %w", Name, err)
	}
	b.versions = map[string]string{mkfs: sysinfo.ProgramVersion(mkfs, "-V"), "losetup": sysinfo.ProgramVersion("losetup", "--version")}
	return b, nil
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return Name }

// Versions implements backend.Backend.
func (b *Backend) Versions() map[string]string { return b.versions }

// Start makes the volume and mounts its file system.
func (b *Backend) Start(ctx context.Context) (backend.Target, error) {
	if b.vol != nil {
		return backend.Target{}, fmt.Errorf("backend %q: started twice", Name)
	}
	if free, err := volume.FreeBytes(b.env.WorkDir); err == nil && free < b.cfg.Spec.SizeBytes {
		warnSparse(b.env.Warn, b.cfg.Spec.SizeBytes, free)
	}
	v, err := volume.Start(ctx, b.cfg)
	if err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
	}
	b.vol = v
	return backend.Target{Dir: v.Dir, Wrap: v.Wrap(), Unmetered: v.Unmetered}, nil
}

var warned sync.Map // volume sizes already warned of, once per process

// warnSparse says, once per size, that a volume larger than this machine's free disk space works
// only because its image is sparse: a run that writes more than the free space fails.
func warnSparse(warn func(string), size, free int64) {
	if _, done := warned.LoadOrStore(size, true); done {
		return
	}
	note := fmt.Sprintf("a volume of %.0f GiB on a disk with %.1f GiB free: its image is sparse, so a run may write up to %.1f GiB before its writes fail",
		float64(size)/(1<<30), float64(free)/(1<<30), float64(free)/(1<<30))
	if warn != nil {
		warn(note)
		return
	}
	fmt.Fprintln(os.Stderr, "persistlab: "+note)
}

// Stats are the model's counters: I/Os and bytes as seen and as billed, credits, throttled time.
func (b *Backend) Stats() backend.Stats {
	if b.vol == nil {
		return nil
	}
	return backend.Stats(b.vol.Counters())
}

// SampledStats are the counters worth seeing over a cell: credits draining, throttling growing,
// units billed, and the writes the volume received (a database's write operations per second).
func (b *Backend) SampledStats() []string {
	return []string{lab.VolumeCreditIOs, lab.VolumeCreditMiB, lab.VolumeThrottledS, lab.VolumeReadUnits, lab.VolumeWriteUnits,
		lab.VolumeWriteOps, lab.VolumeWriteBytes}
}

// Stop unmounts and detaches everything; safe after a failed Start and twice.
func (b *Backend) Stop(ctx context.Context) error {
	if b.vol == nil {
		return nil
	}
	err := b.vol.Stop(ctx)
	if err == nil {
		b.vol = nil
	}
	return err
}

// Crash loses the instance: the device freezes, so writes still in the instance's page cache
// never reach the volume, as when an EC2 instance dies with its EBS volume attached.
func (b *Backend) Crash() error {
	if b.vol == nil {
		return nil
	}
	return b.vol.Freeze()
}

// Recover attaches the volume to a new instance: its file system's journal is replayed at mount.
func (b *Backend) Recover(ctx context.Context) (backend.Target, error) {
	if b.vol == nil {
		return backend.Target{}, errors.New("backend volume: not started")
	}
	if err := b.vol.Recover(ctx); err != nil {
		return backend.Target{}, fmt.Errorf("backend %q: %w", Name, err)
	}
	return backend.Target{Dir: b.vol.Dir, Wrap: b.vol.Wrap(), Unmetered: b.vol.Unmetered}, nil
}

// DefaultCeilingProbe is how much ProbeCeiling moves each way; MaxCeilingProbe the most it may:
// more only takes longer, and the probe's volume is twice its size.
const (
	DefaultCeilingProbe = 512 << 20
	MaxCeilingProbe     = 64 << 30
)

// CeilingProbeBytes implements backend.ProbeSpacer: the probe's file, on a sparse image in the
// work directory.
func (b *Backend) CeilingProbeBytes() int64 { return b.probeSize }

// ProbeCeiling measures the emulator with the model off on this machine: probe bytes written with
// 1 MiB direct writes into a file on a volume of this type's file system, then read back.
func (b *Backend) ProbeCeiling(ctx context.Context) (lab.Ceiling, bool, error) {
	if b.probeSize == 0 {
		return lab.Ceiling{}, false, nil
	}
	// The model is off, so every volume type of one file system has the same ceiling: measured
	// once per run.
	key := fmt.Sprintf("%s/%d", b.cfg.FS, b.probeSize)
	if c, ok := probed.Load(key); ok {
		return c.(lab.Ceiling), true, nil
	}
	cfg := b.cfg
	cfg.Off, cfg.Keep, cfg.MemoryBytes = true, false, 0
	cfg.Spec.SizeBytes = max(cfg.Spec.SizeBytes, 2*b.probeSize)
	cfg.WorkDir = filepath.Join(b.env.WorkDir, "ceiling")
	v, err := volume.Start(ctx, cfg)
	if err != nil {
		return lab.Ceiling{}, false, fmt.Errorf("backend %q: ceiling probe: %w", Name, err)
	}
	defer v.Stop(context.WithoutCancel(ctx))
	c, err := volume.ProbeDirect(filepath.Join(v.Dir, "persistlab-ceiling.bin"), b.probeSize)
	if err != nil {
		return lab.Ceiling{}, false, fmt.Errorf("backend %q: ceiling probe: %w", Name, err)
	}
	c.ReadBytesStat, c.WriteBytesStat, c.ReadOpsStat, c.WriteOpsStat = lab.VolumeReadBytes, lab.VolumeWriteBytes, lab.VolumeReadOps, lab.VolumeWriteOps
	c.Method = fmt.Sprintf("%s with 1 MiB direct I/O, 4 at once, and 4 KiB direct I/O, 16 at once, on %s over the emulator with the model off", param.FormatSize(b.probeSize), cfg.FS)
	probed.Store(key, c)
	return c, true, nil
}

var probed sync.Map // file system and probe size -> Ceiling, once per process
