package volume

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"persistlab/internal/loopdev"
)

// With passthrough the kernel reads and writes the image itself: a file written and synced
// through the volume lands in the image while no read or write reaches the FUSE server. A kernel
// that does not take the backing file (before Linux 6.9, or without the capability) is refused at
// Start, and the test skips.
func TestPassthroughKeepsIOOutOfTheServer(t *testing.T) {
	cfg, err := ConfigFromOptions(map[string]string{"type": "io2", "size": "20GiB", "iops": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.WorkDir, cfg.Passthrough = t.TempDir(), true
	if _, err := Start(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "model off") {
		t.Fatalf("passthrough with the model on: %v, want refused", err)
	}
	cfg.Off = true
	v, err := Start(context.Background(), cfg)
	if err != nil {
		if v == nil && strings.Contains(err.Error(), "passthrough") {
			t.Skipf("this kernel offers no FUSE passthrough: %v", err)
		}
		t.Fatal(err)
	}
	defer func() {
		if err := v.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if left := append(mountPoints(cfg.WorkDir), loopdev.Under(cfg.WorkDir)...); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}()
	var before syscall.Stat_t
	if err := syscall.Stat(v.imagePath, &before); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("passthrough "), 1<<17) // 1.5 MiB
	f, err := os.Create(filepath.Join(v.Dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var after syscall.Stat_t
	if err := syscall.Stat(v.imagePath, &after); err != nil {
		t.Fatal(err)
	}
	if grew := (after.Blocks - before.Blocks) * 512; grew < int64(len(data)) {
		t.Errorf("the image grew by %d bytes for a synced file of %d", grew, len(data))
	}
	got, err := os.ReadFile(filepath.Join(v.Dir, "f"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
	}
	if n := v.img.served.Load(); n != 0 {
		t.Errorf("%d reads and writes reached the server", n)
	}
	if err := v.Freeze(); err == nil {
		t.Error("a passthrough volume froze: its I/O would have gone on")
	}
}
