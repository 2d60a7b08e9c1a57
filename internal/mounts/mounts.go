// Package mounts reads the mount table: the one parser every part of persistlab uses, so a mount
// point with a space in its path is seen the same everywhere. It also unmounts FUSE file systems,
// the one way persistlab does.
package mounts

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"persistlab/internal/proc"
)

// Mount is one line of the mount table.
type Mount struct {
	Device, Point, Type string
}

// Table reads /proc/self/mounts; nil if it cannot be read.
func Table() []Mount {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	return Parse(string(data))
}

// Parse reads mount table text, undoing its octal escapes (\040 for a space).
func Parse(text string) []Mount {
	var out []Mount
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		out = append(out, Mount{Device: unescape(f[0]), Point: unescape(f[1]), Type: f[2]})
	}
	return out
}

// Under lists the mounts at dir or below it, deepest first (the order to unmount them in).
func Under(dir string) []Mount {
	abs := absolute(dir)
	var out []Mount
	for _, m := range Table() {
		if m.Point == abs || strings.HasPrefix(m.Point, strings.TrimSuffix(abs, "/")+"/") {
			out = append(out, m)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Mounted reports whether dir is a mount point.
func Mounted(dir string) bool {
	abs := absolute(dir)
	for _, m := range Table() {
		if m.Point == abs {
			return true
		}
	}
	return false
}

// Of is the mount holding path: the deepest mount point above it.
func Of(path string) (Mount, bool) {
	abs := absolute(path)
	var best Mount
	found := false
	for _, m := range Table() {
		if (abs == m.Point || strings.HasPrefix(abs, strings.TrimSuffix(m.Point, "/")+"/")) && len(m.Point) >= len(best.Point) {
			best, found = m, true
		}
	}
	return best, found
}

// Unmount unmounts the FUSE file system at dir (fusermount3 -u), retrying every 100 ms while it
// is busy (a file still closing) until ctx ends; the last failure, a *proc.CommandError, is the
// error then. It tries at least once, even with ctx already ended, and succeeds if dir is no
// longer mounted.
func Unmount(ctx context.Context, dir string) error {
	for {
		// Each try runs to its end: ctx bounds the retrying, not an unmount under way.
		_, err := proc.Run(context.WithoutCancel(ctx), "fusermount3", "-u", dir)
		if err == nil || !Mounted(dir) {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Detach detaches the FUSE file system at dir lazily (fusermount3 -u -z): it is gone from the
// tree at once, and from the kernel when its last user lets go. Its error is a *proc.CommandError.
func Detach(dir string) error {
	_, err := proc.Run(context.Background(), "fusermount3", "-u", "-z", dir)
	return err
}

func absolute(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
