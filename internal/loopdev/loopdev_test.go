package loopdev

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// attachFormatted attaches a small ext4 image under dir and detaches it at the test's end.
func attachFormatted(t *testing.T, dir string) string {
	t.Helper()
	img := filepath.Join(dir, "img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	dev, err := Attach(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Detach(dev, dir); err != nil {
			t.Error(err)
		}
	})
	if out, err := exec.Command("mkfs.ext4", "-F", "-q", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs: %v: %s", err, out)
	}
	return dev
}

func waitGone(dev, dir string, within time.Duration) bool {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if !slices.Contains(Under(dir), dev) {
			return true
		}
	}
	return false
}

// A pod killed on its node runs no cleanup: its mount namespace dies with it, and the loop
// device must go with the last mount on it. Here a process in a mount namespace of its own
// mounts the device and is killed.
func TestAutoClearFreesTheDeviceWhenItsMountNamespaceDies(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for loop devices and mounts")
	}
	dir := t.TempDir()
	dev := attachFormatted(t, dir)
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	pod := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount -t ext4 "$1" "$2" && echo mounted && exec sleep 600`, "sh", dev, mnt)
	out, err := pod.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	pod.Stderr = os.Stderr
	if err := pod.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pod.Process.Kill(); _ = pod.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "mounted" {
		t.Fatalf("the namespace did not mount %s: %q %v", dev, line, err)
	}
	if err := AutoClear(dev); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(Under(dir), dev) {
		t.Fatalf("%s freed while still mounted", dev)
	}
	if err := pod.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = pod.Wait()
	if !waitGone(dev, dir, 30*time.Second) {
		t.Fatalf("%s still bound to %s after its only mount namespace died", dev, dir)
	}
}

// Detach frees only a device bound to a file under the directory it is given.
func TestDetachLeavesAnotherDirectorysDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for loop devices")
	}
	ours, theirs := t.TempDir(), t.TempDir()
	dev := attachFormatted(t, theirs)
	if err := Detach(dev, ours); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(Under(theirs), dev) {
		t.Fatalf("Detach(%s, %s) freed a device backed under %s", dev, ours, theirs)
	}
	if err := Detach(dev, theirs); err != nil {
		t.Fatal(err)
	}
	if !waitGone(dev, theirs, 10*time.Second) {
		t.Fatalf("%s still bound after Detach", dev)
	}
	if err := Detach(dev, theirs); err != nil {
		t.Errorf("detaching a freed device: %v", err)
	}
}
