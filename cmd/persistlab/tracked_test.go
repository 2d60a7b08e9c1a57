package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxTrackedBytes bounds a file the repository tracks: a built binary or a results dump belongs
// in a release or out/, not in every clone.
const maxTrackedBytes = 1 << 20

func TestNoTrackedFileIsOverOneMiB(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, name := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		st, err := os.Lstat(filepath.Join(root, string(name)))
		if err != nil {
			continue // deleted in the work tree
		}
		if st.Mode().IsRegular() && st.Size() > maxTrackedBytes {
			t.Errorf("%s is tracked and %d bytes, over %d: build it, or keep it out of the repository", name, st.Size(), maxTrackedBytes)
		}
	}
}
