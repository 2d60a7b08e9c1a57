// Package loopdev attaches files as loop block devices (util-linux losetup), finds the ones a run
// left behind, and detaches them.
package loopdev

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	dio, _ := os.ReadFile("/sys/block/" + filepath.Base(dev) + "/loop/dio")
	if strings.TrimSpace(string(dio)) != "1" {
		return dev, fmt.Errorf("%s did not take direct I/O: the kernel would cache %s twice", dev, file)
	}
	return dev, nil
}

// Detach frees a loop device, retrying while the kernel still holds it (a file system just
// unmounted). A device still in use is freed by the kernel when its last user goes. The error
// is losetup's last failure, a *proc.CommandError.
func Detach(dev string) error {
	var err error
	for i := 0; i < 50; i++ {
		if _, err = proc.Run(context.Background(), "losetup", "-d", dev); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// Under lists the loop devices whose backing file lies under dir.
func Under(dir string) []string {
	dir = strings.TrimSuffix(dir, "/")
	var found []string
	paths, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		backing := strings.TrimSuffix(strings.TrimSpace(string(data)), " (deleted)")
		if backing == dir || strings.HasPrefix(backing, dir+"/") {
			found = append(found, "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(p))))
		}
	}
	return found
}
