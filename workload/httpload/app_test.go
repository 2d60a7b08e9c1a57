package httpload

import (
	"os"
	"path/filepath"
	"testing"
)

// A second or recovered instance of a cell's app logs beside the first, never over it.
func TestAppLogNeverNamesALogThatExists(t *testing.T) {
	dir := t.TempDir()
	for i, want := range []struct{ log, tag string }{{"app.log", ""}, {"app-2.log", "-2"}, {"app-3.log", "-3"}} {
		log, tag := AppLog(dir)
		if log != filepath.Join(dir, want.log) || tag != want.tag {
			t.Fatalf("instance %d: log %s, tag %q; want %s, %q", i+1, log, tag, want.log, want.tag)
		}
		if err := os.WriteFile(log, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
