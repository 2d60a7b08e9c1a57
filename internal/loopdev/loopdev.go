// Package loopdev attaches files as loop block devices (util-linux losetup), finds the ones a run
// left behind, and detaches them.
package loopdev

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Attach makes a loop device of file with direct I/O, so that the loop device keeps no page cache
// of its own and every block I/O reaches the file, and says which device it is.
func Attach(ctx context.Context, file string) (string, error) {
	out, err := exec.CommandContext(ctx, "losetup", "--find", "--show", "--direct-io=on", file).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("losetup %s: %v: %s", file, err, strings.TrimSpace(string(out)))
	}
	dev := strings.TrimSpace(string(out))
	dio, _ := os.ReadFile("/sys/block/" + filepath.Base(dev) + "/loop/dio")
	if strings.TrimSpace(string(dio)) != "1" {
		return dev, fmt.Errorf("%s did not take direct I/O: the kernel would cache %s twice", dev, file)
	}
	return dev, nil
}

// Detach frees a loop device, retrying while the kernel still holds it (a file system just
// unmounted). A device still in use is freed by the kernel when its last user goes.
func Detach(dev string) error {
	var err error
	for i := 0; i < 50; i++ {
		var out []byte
		if out, err = exec.Command("losetup", "-d", dev).CombinedOutput(); err == nil {
			return nil
		}
		err = fmt.Errorf("losetup -d %s: %v: %s", dev, err, strings.TrimSpace(string(out)))
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
