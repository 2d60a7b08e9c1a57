// Package readfile reads a file a user named, only if it is a regular file, through a size limit:
// a device (/dev/zero) or a FIFO must never fill memory or block a run.
package readfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// NotRegularError is a path that is not a regular file; Kind says what it is ("a directory").
type NotRegularError struct{ Kind string }

func (e *NotRegularError) Error() string { return "not a regular file: " + e.Kind }

// TooLargeError is a file larger than the limit it was read through.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("larger than %d KiB", e.Limit>>10) }

// Regular reads path whole if it is a regular file of at most limit bytes (a symlink to one is
// followed). The open never blocks: a FIFO is refused, not waited on. Errors other than the two
// above are the open's or the read's, as the os package gives them.
func Regular(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens path for reading as it streams, with Regular's refusals: a file that is not regular,
// or larger than limit bytes, is refused at the open, and one that grows past limit while read
// fails the read with a *TooLargeError.
func Open(path string, limit int64) (io.ReadCloser, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Kind: Kind(st.Mode())}
	}
	if st.Size() > limit {
		f.Close()
		return nil, &TooLargeError{Limit: limit}
	}
	return &limited{f: f, left: limit, limit: limit}, nil
}

// limited reads a file through its limit: one byte past it is an error, not a short file.
type limited struct {
	f           *os.File
	left, limit int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 { // already past the limit
		return 0, &TooLargeError{Limit: l.limit}
	}
	if int64(len(p))-1 > l.left { // at most one byte past the limit, to see it
		p = p[:l.left+1]
	}
	n, err := l.f.Read(p)
	if l.left -= int64(n); l.left < 0 { // it grew while read
		return n + int(l.left), &TooLargeError{Limit: l.limit}
	}
	return n, err
}

func (l *limited) Close() error { return l.f.Close() }

// Kind names what a file that is not a regular one is.
func Kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
