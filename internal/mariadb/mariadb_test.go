package mariadb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run directory too long for a Unix socket's path (a user's --workdir) still starts a server:
// its socket goes to a short directory of its own, gone once the server stops.
func TestALongRunDirectoryStartsTheServer(t *testing.T) {
	progs, err := FindPrograms()
	if err != nil {
		t.Skipf("MariaDB: %v", err)
	}
	dir := t.TempDir()
	run := filepath.Join(dir, strings.Repeat("a-long-work-directory-", 5))
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := ServerConfig{DataDir: filepath.Join(dir, "data"), RunDir: run, BufferPool: 16 << 20}
	if len(cfg.socket()) <= maxSocketPath {
		t.Fatalf("the run directory's socket %q is short enough: the test tests nothing", cfg.socket())
	}
	srv, err := Start(t.Context(), progs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	made := srv.socketDir
	if made == "" || len(filepath.Join(made, "mariadbd.sock")) > maxSocketPath {
		t.Errorf("the socket's directory %q", made)
	}
	if _, err := os.Stat(filepath.Join(made, "mariadbd.sock")); err != nil {
		t.Errorf("no socket in %s: %v", made, err)
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("the socket's directory %s is left after Stop: %v", made, err)
	}
}
