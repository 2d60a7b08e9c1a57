package readfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesWhatRegularRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte("0123456789"), 0o644)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var nr *NotRegularError
		for _, p := range []string{dir, fifo} { // a FIFO with no writer: refused, never waited on
			if _, err := Open(p, 100); !errors.As(err, &nr) {
				t.Errorf("Open(%s): %v", p, err)
			}
			if _, err := Regular(p, 100); !errors.As(err, &nr) {
				t.Errorf("Regular(%s): %v", p, err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
	var tl *TooLargeError
	if _, err := Open(big, 9); !errors.As(err, &tl) || tl.Limit != 9 {
		t.Errorf("Open of 10 bytes through 9: %v", err)
	}
	if data, err := Regular(big, 10); err != nil || string(data) != "0123456789" {
		t.Errorf("Regular of 10 bytes through 10: %q, %v", data, err)
	}
}

// A file that grows past the limit after the open fails the read: no reader sees more than limit.
func TestOpenRefusesAFileThatGrowsWhileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "growing")
	os.WriteFile(path, []byte("0123"), 0o644)
	f, err := Open(path, 6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.WriteFile(path, []byte("0123456789"), 0o644)
	data, err := io.ReadAll(f)
	var tl *TooLargeError
	if !errors.As(err, &tl) || len(data) > 6 || !strings.HasPrefix("0123456789", string(data)) {
		t.Errorf("read %q, %v", data, err)
	}
	// A reader asked again (bufio may) gives nothing more and the same refusal, never a count
	// below 0.
	for i := 0; i < 2; i++ {
		if n, err := f.Read(make([]byte, 4)); n != 0 || !errors.As(err, &tl) {
			t.Errorf("read again: %d, %v", n, err)
		}
	}
}
