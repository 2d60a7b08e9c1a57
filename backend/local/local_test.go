package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/backend/conformance"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(work string) (backend.Backend, error) {
		return backend.New(Name, backend.Env{WorkDir: work})
	})
}

func TestStopRemovesData(t *testing.T) {
	b, err := New(backend.Env{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	target, err := b.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(target.Dir, "x"), []byte("x"), 0o644)
	b.Stop(t.Context())
	if _, err := os.Stat(target.Dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after Stop: %v", target.Dir, err)
	}
}

func TestBadOptions(t *testing.T) {
	_, err := backend.New(Name, backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"dri": "/tmp"}})
	if err == nil || !strings.Contains(err.Error(), "options.dri") || !strings.Contains(err.Error(), "options: dir") {
		t.Errorf("unknown option: %v", err)
	}
	_, err = New(backend.Env{WorkDir: t.TempDir(), Options: map[string]string{"dir": "/no/such/dir"}})
	if err == nil || !strings.Contains(err.Error(), "/no/such/dir") {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := backend.New("nfs", backend.Env{}); err == nil || !strings.Contains(err.Error(), "local") {
		t.Errorf("unknown backend: %v", err)
	}
}

func TestKeepLeavesTheData(t *testing.T) {
	work := t.TempDir()
	b, err := New(backend.Env{WorkDir: work, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	target, err := b.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(target.Dir, "counter.db"), []byte("data"), 0o644)
	if err := b.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(target.Dir, "counter.db")); err != nil || string(data) != "data" {
		t.Errorf("kept data: %q %v", data, err)
	}
}
