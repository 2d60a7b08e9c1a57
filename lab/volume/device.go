package volume

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"persistlab/internal/cgroup"
	"persistlab/internal/loopdev"
	"persistlab/internal/mounts"
	"persistlab/internal/proc"
)

// FileSystems are the file systems a volume can be formatted with.
var FileSystems = []string{"ext4", "xfs"}

// Config is one emulated volume on this machine.
type Config struct {
	Spec Spec
	// Off serves the image with no model at all: the emulator's own ceiling.
	Off bool
	// WorkDir holds the image, the FUSE mount that serves it and the file system's mount point.
	WorkDir string
	FS      string // ext4 (default) or xfs
	// Keep leaves the image in WorkDir after Stop, for a user to mount and look at.
	Keep bool
	// MountAt is where to mount the file system ("": WorkDir/mnt); recoveries mount beside it.
	MountAt string
	// MemoryBytes bounds the emulated instance's memory, page cache included (0: unbounded, this
	// machine's): the programs a workload runs in it go into a memory cgroup (Volume.Wrap).
	MemoryBytes int64
	// Passthrough (model off only) hands the image's file to the kernel (FUSE passthrough), so
	// reads and writes go from the loop device to this machine's file system without reaching
	// persistlab: what the FUSE path would give if the model did not need to hold each I/O.
	Passthrough bool
}

// Volume is a running emulated volume: a sparse image on this machine's disk, served through
// FUSE by persistlab (every I/O passes the model), attached to a loop device with direct I/O, and
// formatted and mounted at Dir.
type Volume struct {
	cfg    Config
	model  *Model
	img    *image
	server *fuse.Server
	loop   string // /dev/loopN, "" when detached
	// Dir is where the file system is mounted: the workload's directory.
	Dir string

	imagePath, fuseDir string
	mounts             int // how many times the file system was mounted (recoveries)
	memory             *cgroup.Memory
}

var cgroupSeq atomic.Int64

// Wrap is the command prefix that runs a program in the emulated instance (nil: no bound).
func (v *Volume) Wrap() []string {
	if v.memory == nil {
		return nil
	}
	return v.memory.Wrap()
}

// MemoryCgroup is the directory of the instance's memory cgroup, "" with no bound.
func (v *Volume) MemoryCgroup() string {
	if v.memory == nil {
		return ""
	}
	return v.memory.Dir
}

// Paths inside a volume's work directory.
const (
	imageFile = "volume.img" // the backing file on this machine's disk
	fuseDir   = "fuse"       // where the FUSE server shows it as disk.img
	mountDir  = "mnt"        // the file system
)

// Start makes the volume: a sparse image of the spec's size, served, attached, formatted and
// mounted, all with the model off; the model counts from the mounted file system's first I/O. On
// failure everything it did is undone.
func Start(ctx context.Context, cfg Config) (v *Volume, err error) {
	if cfg.FS == "" {
		cfg.FS = "ext4"
	}
	if !slices.Contains(FileSystems, cfg.FS) {
		return nil, fmt.Errorf("volume: fs %q: want one of %s", cfg.FS, strings.Join(FileSystems, ", "))
	}
	if err := cfg.Spec.Validate(); err != nil {
		return nil, err
	}
	if cfg.Passthrough && !cfg.Off {
		return nil, fmt.Errorf("volume: passthrough needs the model off: with it, no I/O reaches the model")
	}
	v = &Volume{cfg: cfg, imagePath: filepath.Join(cfg.WorkDir, imageFile), fuseDir: filepath.Join(cfg.WorkDir, fuseDir)}
	if !cfg.Off {
		if v.model, err = New(cfg.Spec, time.Now); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			v.Stop(context.WithoutCancel(ctx))
			v = nil
		}
	}()
	for _, d := range []string{v.fuseDir, filepath.Join(cfg.WorkDir, mountDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return v, err
		}
	}
	f, err := os.OpenFile(v.imagePath, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	if err != nil {
		return v, fmt.Errorf("volume: image: %w", err)
	}
	size := cfg.Spec.SizeBytes
	if err := f.Truncate(size); err != nil { // sparse: disk is used only where the workload writes
		f.Close()
		return v, fmt.Errorf("volume: image of %d bytes: %w", size, err)
	}
	// No readahead into the image: what the device reads is what the workload asked for, and
	// readahead's large folios would slow every later small write (imageChunk).
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM); err != nil {
		f.Close()
		return v, fmt.Errorf("volume: image: fadvise: %w", err)
	}
	v.img = &image{file: f, size: size, passthrough: cfg.Passthrough}
	if v.server, err = serve(v.fuseDir, v.img); err != nil {
		return v, fmt.Errorf("volume: serve the image through FUSE at %s: %w", v.fuseDir, err)
	}
	if err := v.attach(ctx); err != nil {
		return v, err
	}
	if err := Format(ctx, cfg.FS, v.loop); err != nil {
		return v, err
	}
	if v.model != nil {
		v.img.overhead = stackOverhead(v.loop, size)
	}
	if err := v.mount(ctx); err != nil {
		return v, err
	}
	// Formatting and mounting wrote and read the image: through the kernel alone, if it took the
	// backing file.
	if n := v.img.served.Load(); cfg.Passthrough && n > 0 {
		return v, fmt.Errorf("volume: passthrough: %d reads and writes reached the FUSE server: this kernel did not take the backing file (FUSE passthrough needs Linux 6.9 and root)", n)
	}
	// Only now: making and mounting the file system is not the workload's I/O, and must not wait
	// on a slow model (with a latency of 10 s a Ctrl-C once took 46 s, the mount stuck in the kernel).
	if v.model != nil {
		v.img.setModel(v.model)
	}
	if cfg.MemoryBytes > 0 {
		name := fmt.Sprintf("persistlab-%d-%d", os.Getpid(), cgroupSeq.Add(1))
		if v.memory, err = cgroup.NewMemory(name, cfg.MemoryBytes, cfg.WorkDir); err != nil {
			return v, fmt.Errorf("volume: the instance's memory: %w", err)
		}
	}
	return v, nil
}

// Overhead is the emulator's own round trip per I/O on this machine, taken off each I/O's wait.
func (v *Volume) Overhead() time.Duration {
	if v.img == nil {
		return 0
	}
	return v.img.overhead
}

// stackOverhead times 4 KiB direct reads of the device with no model: the shortest round trip
// through the loop device, FUSE and this server, plus the least a sleep overshoots. The least,
// not the typical: each I/O then takes at least the model's time, never less (a median measured
// at a busy moment would make I/O faster than the model later). 0 if it cannot be measured.
func stackOverhead(dev string, size int64) time.Duration {
	f, err := os.OpenFile(dev, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := aligned(4096)
	shortest := time.Duration(math.MaxInt64)
	x := uint64(88172645463325252)
	for range 101 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		t0 := time.Now()
		if _, err := f.ReadAt(buf, int64(x%uint64(size/4096))*4096); err != nil {
			return 0
		}
		shortest = min(shortest, time.Since(t0))
	}
	return shortest + sleepOvershoot()
}

// sleepOvershoot is the least a sleep ends later than asked on this machine (timer slack and
// wake-up), of a few.
func sleepOvershoot() time.Duration {
	const d = 200 * time.Microsecond
	least := time.Duration(math.MaxInt64)
	for range 21 {
		t0 := time.Now()
		sleep(d)
		least = min(least, time.Since(t0)-d)
	}
	return max(0, least)
}

// attach makes a loop device of the served image (direct I/O: every block I/O reaches us).
func (v *Volume) attach(ctx context.Context) error {
	dev, err := loopdev.Attach(ctx, filepath.Join(v.fuseDir, ImageName))
	if dev != "" {
		v.loop = dev
	}
	if err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	return nil
}

// Format makes the file system on dev. The image is sparse, so what mkfs does not write reads as
// zeros: lazy inode table and journal initialisation is exact here, and no background zeroing
// runs later while the workload is measured (mount option noinit_itable).
func Format(ctx context.Context, fs, dev string) error {
	var cmd *exec.Cmd
	switch fs {
	case "xfs":
		cmd = proc.Command(ctx, "mkfs.xfs", "-f", "-q", "-K", dev)
	default:
		cmd = proc.Command(ctx, "mkfs.ext4", "-F", "-q", "-E", "nodiscard,lazy_itable_init=1,lazy_journal_init=1", dev)
	}
	if _, err := proc.RunCmd(cmd); err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	return nil
}

// MountArgs are mount's options for a file system Format made: ext4 must neither zero its inode
// tables nor prefetch every block group's bitmap in the background (its default since Linux 5.9)
// while a workload is measured; it reads a bitmap when it allocates in that group, as before.
func MountArgs(fs string) []string {
	if fs == "ext4" {
		return []string{"-t", fs, "-o", "noinit_itable,no_prefetch_block_bitmaps"}
	}
	return []string{"-t", fs}
}

// mount mounts the file system at a fresh directory: mnt, then mnt-1, mnt-2 after recoveries,
// as a new instance attaches the volume.
func (v *Volume) mount(ctx context.Context) error {
	dir := filepath.Join(v.cfg.WorkDir, mountDir)
	if v.cfg.MountAt != "" && v.mounts == 0 {
		dir = v.cfg.MountAt
	}
	if v.mounts > 0 {
		dir = fmt.Sprintf("%s-%d", dir, v.mounts)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := proc.Run(ctx, "mount", append(MountArgs(v.cfg.FS), v.loop, dir)...); err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	// From now on the device goes with its last mount, even when no cleanup runs (a killed pod).
	if err := loopdev.AutoClear(v.loop); err != nil {
		_, _ = proc.Run(ctx, "umount", dir)
		return fmt.Errorf("volume: %w", err)
	}
	v.mounts++
	v.Dir = dir
	return nil
}

// Counters are the model's cumulative counts (nil with the model off).
func (v *Volume) Counters() map[string]float64 {
	if v.model == nil {
		return nil
	}
	return v.model.Snapshot(time.Now()).Flatten()
}

// Limits are the model's resolved figures, for results and reports.
func (v *Volume) Limits() Limits { return v.cfg.Spec.Limits() }

// Freeze loses the instance: from now on every I/O of the device fails, so what the kernel still
// held in its page cache never reaches the image, and what the volume acknowledged stays. The
// file system is then detached as a lost instance's is.
func (v *Volume) Freeze() error {
	if v.img == nil {
		return nil
	}
	if v.cfg.Passthrough {
		return fmt.Errorf("volume: a passthrough volume cannot lose its instance: its I/O never reaches the emulator to be stopped")
	}
	v.img.frozen.Store(true)
	old := v.loop
	if err := v.detach(context.Background(), true); err != nil {
		return err
	}
	// The lazily unmounted file system lets go of its loop device once its last user has gone;
	// until then it could still write, and Recover unfreezes the image.
	for i := 0; i < 100 && old != "" && slices.Contains(loopdev.Under(v.cfg.WorkDir), old); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if old != "" && slices.Contains(loopdev.Under(v.cfg.WorkDir), old) {
		return fmt.Errorf("volume: %s still attached 5 s after the instance was lost", old)
	}
	return nil
}

// Recover attaches the frozen image to a new instance: a new loop device, the file system's own
// recovery (journal replay) at mount, a fresh mount point. The model's state (credits) carries
// over: it is the same volume.
func (v *Volume) Recover(ctx context.Context) error {
	if v.img == nil {
		return errors.New("volume: not started")
	}
	v.img.frozen.Store(false)
	v.img.setModel(nil) // attaching is not the workload's I/O
	if err := v.attach(ctx); err != nil {
		return err
	}
	if v.model != nil {
		v.img.setModel(v.model)
	}
	return v.mount(ctx)
}

// detach unmounts the file system (lazily when the device is frozen: its writes fail) and frees
// the loop device.
func (v *Volume) detach(ctx context.Context, lost bool) error {
	var errs []error
	var points []string
	if v.cfg.MountAt != "" && v.mounts > 0 && mounts.Mounted(v.cfg.MountAt) {
		points = append(points, v.cfg.MountAt)
	}
	for _, m := range mounts.Under(v.cfg.WorkDir) {
		if m.Point != v.fuseDir {
			points = append(points, m.Point)
		}
	}
	for _, point := range points {
		args := []string{point}
		if lost {
			args = []string{"-l", point}
		}
		if _, err := proc.Run(ctx, "umount", args...); err != nil {
			errs = append(errs, fmt.Errorf("volume: %w", err))
		}
	}
	if len(errs) > 0 && !lost {
		// A file system still mounted (busy) keeps its device and the server under it: freeing
		// them would leave it mounted over nothing, losing what it has not yet written.
		return errors.Join(errs...)
	}
	if v.loop != "" {
		if err := loopdev.Detach(v.loop, v.cfg.WorkDir); err != nil {
			errs = append(errs, err)
		} else {
			v.loop = ""
		}
	}
	return errors.Join(errs...)
}

// Stop writes back what the file system still holds, unmounts it, detaches the loop device, stops
// the FUSE server and removes the image unless kept. It undoes a failed Start too, and is safe to
// call twice.
func (v *Volume) Stop(ctx context.Context) error {
	v.writeBack()
	// Unmounting is not the workload's I/O: with the model off a stop waits only for the I/O
	// already in flight.
	if v.img != nil {
		v.img.setModel(nil)
	}
	detachErr := v.detach(ctx, false)
	if detachErr != nil && v.Mounted() {
		if v.img != nil && v.model != nil {
			v.img.setModel(v.model) // still serving a busy mount: still the volume it was
		}
		return detachErr
	}
	errs := []error{detachErr}
	if v.server != nil {
		if err := v.server.Unmount(); err != nil && mounts.Mounted(v.fuseDir) {
			errs = append(errs, fmt.Errorf("volume: unmount %s: %w", v.fuseDir, err))
		} else {
			v.server = nil
		}
	}
	if v.memory != nil {
		if err := v.memory.Remove(); err != nil {
			errs = append(errs, err)
		} else {
			v.memory = nil
		}
	}
	if v.img != nil && v.server == nil {
		errs = append(errs, v.img.file.Close())
		v.img = nil
		if !v.cfg.Keep {
			errs = append(errs, os.Remove(v.imagePath))
		}
	}
	return errors.Join(errs...)
}

// writeBack syncs the mounted file system (syncfs(2)): what the workload wrote and the kernel
// still held in its page cache reaches the volume, and the model counts it, as the volume would
// have received it at the unmount; no I/O waits on the model meanwhile (a slow one must not hold
// a stop). A lost instance's page cache is gone: nothing to write back.
func (v *Volume) writeBack() {
	if v.img == nil || v.model == nil || v.img.frozen.Load() || v.loop == "" || v.Dir == "" || !mounts.Mounted(v.Dir) {
		return
	}
	v.img.setModel(countOnly{v.model})
	if f, err := os.Open(v.Dir); err == nil {
		_ = unix.Syncfs(int(f.Fd())) // the unmount writes back what this could not
		f.Close()
	}
}

// Unmetered runs fn with the model off, then writes back what it left in the page cache
// (syncfs), still off, and turns the model on again: set-up before a workload is measured, which
// takes this machine's time and moves no counter (credits still refill with time, as they would
// on the provider's volume meanwhile). With the model off it is fn and the syncfs.
func (v *Volume) Unmetered(ctx context.Context, fn func(context.Context) error) error {
	if v.img == nil || v.Dir == "" {
		return errors.New("volume: not started")
	}
	v.img.setModel(nil)
	defer func() {
		if v.model != nil {
			v.img.setModel(v.model)
		}
	}()
	err := fn(ctx)
	f, openErr := os.Open(v.Dir)
	if openErr != nil {
		return errors.Join(err, fmt.Errorf("volume: write back the unmetered set-up: %w", openErr))
	}
	defer f.Close()
	if syncErr := unix.Syncfs(int(f.Fd())); syncErr != nil {
		return errors.Join(err, fmt.Errorf("volume: write back the unmetered set-up: syncfs %s: %w", v.Dir, syncErr))
	}
	return err
}

// countOnly counts each read and write in the model and completes it at once. Flushes are not
// counted: syncfs issues one even when nothing was left to write.
type countOnly struct{ model *Model }

func (c countOnly) Schedule(now time.Time, op Op) time.Time {
	c.model.Schedule(now, op)
	return now
}

func (c countOnly) Flush(now time.Time) time.Time { return now }

// FreeBytes is the free space of the file system holding dir: a sparse image larger than it
// can be made, but the run's writes fail once it is used up.
func FreeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}
