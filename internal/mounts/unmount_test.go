package mounts

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"persistlab/internal/proc"
)

func needFUSE(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("fusermount3"); err != nil {
		t.Skip("fusermount3 missing (Debian package fuse3; run scripts/setup)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
}

// mountEmpty serves an empty FUSE file system from this process at a new directory.
func mountEmpty(t *testing.T) (string, *fuse.Server) {
	t.Helper()
	dir := t.TempDir()
	server, err := fs.Mount(dir, &fs.Inode{}, &fs.Options{MountOptions: fuse.MountOptions{FsName: "persistlab-test", Name: "persistlab"}})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		if Mounted(dir) {
			_ = Detach(dir)
		}
		server.Wait()
	})
	if !Mounted(dir) {
		t.Fatalf("%s not in the mount table after mounting", dir)
	}
	return dir, server
}

func TestUnmountRetriesWhileBusy(t *testing.T) {
	needFUSE(t)
	dir, _ := mountEmpty(t)
	busy, err := os.Open(dir) // an open directory on the mount: umount says busy
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = Unmount(ctx, dir)
	var ce *proc.CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "fusermount3 -u "+dir) || !Mounted(dir) {
		t.Errorf("busy mount: %v (still mounted: %v); want the failure of fusermount3 -u %s", err, Mounted(dir), dir)
	}
	time.AfterFunc(200*time.Millisecond, func() { busy.Close() })
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Unmount(ctx, dir); err != nil || Mounted(dir) {
		t.Errorf("unmount once no longer busy: %v (still mounted: %v)", err, Mounted(dir))
	}
}

func TestDetachIsLazy(t *testing.T) {
	needFUSE(t)
	dir, _ := mountEmpty(t)
	busy, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if err := Detach(dir); err != nil || Mounted(dir) {
		t.Errorf("detach of a busy mount: %v (still mounted: %v)", err, Mounted(dir))
	}
}

func TestUnmountOfWhatIsNotMounted(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Unmount(ctx, dir); err != nil {
		t.Errorf("Unmount of a directory not mounted: %v; want nil (nothing to unmount)", err)
	}
	err := Detach(dir)
	var ce *proc.CommandError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "fusermount3 -u -z "+dir+": exit status") {
		t.Errorf("Detach of a directory not mounted: %v; want fusermount3's failure naming %s", err, dir)
	}
}
