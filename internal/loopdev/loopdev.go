// Package loopdev attaches files as loop block devices (util-linux losetup), finds the ones a run
// left behind, and detaches them.
package loopdev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"persistlab/internal/proc"
)

// Attach makes a loop device of file with direct I/O, so that the loop device keeps no page cache
// of its own and every block I/O reaches the file, and says which device it is.
func Attach(ctx context.Context, file string) (string, error) {
	out, err := proc.Run(ctx, "losetup", "--find", "--show", "--direct-io=on", file)
	if err != nil {
		return "", err
	}
	dev := strings.TrimSpace(string(out))
	dio, _ := os.ReadFile(sysDir(dev) + "/dio")
	if strings.TrimSpace(string(dio)) != "1" {
		return dev, fmt.Errorf("%s did not take direct I/O: the kernel would cache %s twice", dev, file)
	}
	return dev, nil
}

// AutoClear has the kernel free dev when its last user closes it. Set it once a file system is
// mounted on dev (mkfs's own close would free it earlier): a mount namespace that dies (a pod
// killed on its node) then frees the device with its last mount, with nobody left to detach it.
func AutoClear(dev string) error {
	f, err := os.OpenFile(dev, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := unix.IoctlLoopGetStatus64(int(f.Fd()))
	if err != nil {
		return fmt.Errorf("%s: loop status: %w", dev, err)
	}
	info.Flags |= unix.LO_FLAGS_AUTOCLEAR
	if err := unix.IoctlLoopSetStatus64(int(f.Fd()), info); err != nil {
		return fmt.Errorf("%s: set autoclear: %w", dev, err)
	}
	return nil
}

// Detach frees dev if its backing file lies under owner, the directory persistlab made it in.
// The device is held open from the check to the detach, so it cannot be freed and bound to
// another file in between; a device the kernel freed already, or now backs another's file, is
// left alone. One still in use (a file system lazily unmounted) is freed by the kernel when its
// last user goes.
func Detach(dev, owner string) error {
	f, err := os.OpenFile(dev, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENXIO) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if !backedUnder(dev, owner) {
		return nil
	}
	if err := unix.IoctlSetInt(int(f.Fd()), unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
		return fmt.Errorf("detach %s: %w", dev, err)
	}
	return nil
}

// Under lists the loop devices whose backing file lies under dir.
func Under(dir string) []string {
	var found []string
	paths, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, p := range paths {
		dev := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(p)))
		if backedUnder(dev, dir) {
			found = append(found, dev)
		}
	}
	return found
}

// backedUnder reports whether dev is bound to a file under dir (a deleted one included).
func backedUnder(dev, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	data, err := os.ReadFile(sysDir(dev) + "/backing_file")
	if err != nil {
		return false
	}
	backing := strings.TrimSuffix(strings.TrimSpace(string(data)), " (deleted)")
	return backing == dir || strings.HasPrefix(backing, dir+"/")
}

func sysDir(dev string) string { return "/sys/block/" + filepath.Base(dev) + "/loop" }
