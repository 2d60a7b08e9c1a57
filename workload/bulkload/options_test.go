package bulkload

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/internal/cgroup"
	"persistlab/internal/mariadb"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

func withServer(options map[string]any) scenario.Workload {
	return scenario.Workload{Type: Name, Sections: map[string]any{"server": options}}
}

// Options that move the server's files, open it to the network, hang it or bypass a parameter's
// bound are refused before any cell, however mariadbd would spell them.
func TestServerSectionRefusesWhatPersistlabSets(t *testing.T) {
	for _, c := range []struct {
		name  string
		value any
	}{
		{"bind-address", "0.0.0.0"}, {"bind_address", "0.0.0.0"}, {"bind", "0.0.0.0"}, {"loose-bind-address", "0.0.0.0"},
		{"port", 3307}, {"socket", "/tmp/x.sock"}, {"skip-networking", nil}, {"enable-networking", nil},
		{"datadir", "/tmp/elsewhere"}, {"data", "/tmp/elsewhere"}, {"pid-file", "/tmp/p"}, {"user", "mysql"},
		{"log-bin", "/tmp/binlog"}, {"log_bin", nil}, {"innodb_data_home_dir", "/tmp"}, {"innodb-data-home", "/tmp"},
		{"innodb_log_group_home_dir", "/tmp"}, {"innodb_undo_directory", "/tmp"}, {"innodb_data_file_path", "ibdata1:12M"},
		{"tmpdir", "/tmp"}, {"general_log_file", "/tmp/g"}, {"log-error", "/tmp/e"}, {"slow_query_log_file", "/tmp/s"},
		{"plugin-dir", "/tmp"}, {"plugin_load_add", "ha_x.so"}, {"secure-file-priv", ""}, {"init-file", "/tmp/i.sql"},
		{"local-infile", 0}, {"skip-grant-tables", nil}, {"loose_skip_grant_tables", nil},
		{"innodb_buffer_pool_size", "1T"}, {"innodb-buffer-pool-size-max", "1T"},
		{"innodb_io_cap", 1000}, {"INNODB_IO_CAPACITY", 1000}, {"!include /etc/mysql/my.cnf", nil},
		{"innodb_io_capacity", "1000\nbind-address=0.0.0.0"}, {"innodb_io_capacity", []any{1, 2}},
	} {
		_, err := New(withServer(map[string]any{c.name: c.value}))
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != "workload.server."+c.name || fe.Allowed == "" {
			t.Errorf("server: {%s: %v}: %v, want a refusal naming workload.server.%s", c.name, c.value, err, c.name)
		}
	}
	_, err := New(withServer(map[string]any{"innodb_io_capacity": 1000, "innodb-io-capacity": 2000}))
	if fe := (*param.FieldError)(nil); !errors.As(err, &fe) || !strings.Contains(fe.Allowed, "one setting per option") {
		t.Errorf("one option spelled twice: %v, want a refusal", err)
	}
}

func TestServerSectionTakesPerformanceOptions(t *testing.T) {
	settings, err := serverSettings(map[string]any{"innodb_io_capacity": 1000, "innodb-flush-method": "fsync", "loose-innodb-io-capacity-max": 4000,
		"skip-innodb-adaptive-hash-index": nil, "sync_binlog": 0, "maximum-sort-buffer-size": "4M", "performance_schema": false})
	if err != nil {
		t.Fatal(err)
	}
	opts := mariadb.ServerConfig{DataDir: "D", RunDir: "R", Settings: settings}.Options(1)
	for _, line := range []string{"innodb-flush-method=fsync", "skip-innodb-adaptive-hash-index", "sync_binlog=0", "performance_schema=false"} {
		if !strings.Contains(opts, "\n"+line+"\n") {
			t.Errorf("option file lacks %q:\n%s", line, opts)
		}
	}
	for _, name := range PerformanceOptions() {
		if pathLike(name) || normalOption(name) != name || parameterOptions[name] != "" {
			t.Errorf("allowed option %s takes a path, is not in its normal form or is a parameter's", name)
		}
	}
}

// A buffer pool the machine cannot hold is refused by Check, before any cell runs.
func TestBufferPoolBeyondMemoryIsRefusedBeforeTheRun(t *testing.T) {
	w := &Workload{}
	check := func(pool string) error {
		return w.Check(context.Background(), workload.Resolve(Params, map[string]string{"buffer_pool": pool}, nil))
	}
	var fe *param.FieldError
	if err := check("1TiB"); !errors.As(err, &fe) || fe.Field != "workload.buffer_pool" || !strings.Contains(fe.Allowed, "this machine") {
		t.Errorf("buffer_pool 1TiB: %v, want a refusal naming the machine's memory", err)
	}
	real := machineMemory
	t.Cleanup(func() { machineMemory = real })
	machineMemory = func() (int64, error) { return 4 << 30, nil }
	if err := check("4GiB"); !errors.As(err, &fe) || fe.Field != "workload.buffer_pool" || !strings.Contains(fe.Allowed, "3.2 GiB") {
		t.Errorf("buffer_pool 4GiB of 4 GiB: %v, want a refusal naming 3.2 GiB", err)
	}
	if err := check("3GiB"); err != nil {
		t.Errorf("buffer_pool 3GiB of 4 GiB: %v", err)
	}
}

func TestCgroupMemoryLimitIsTheSmallestOnItsPath(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory/memory.limit_in_bytes", "9223372036854771712")
	write("memory/a/memory.limit_in_bytes", "2147483648")
	write("memory/a/b/memory.limit_in_bytes", "1073741824")
	write("x/memory.max", "max")
	write("x/y/memory.max", "536870912")
	for _, c := range []struct {
		procCgroup string
		want       int64
	}{
		{"4:memory:/a/b\n0::/\n", 1 << 30},
		{"4:cpu,memory:/a\n", 2 << 30},
		{"4:memory:/\n", 0},
		{"0::/x/y\n", 512 << 20},
		{"0::/x\n", 0},
	} {
		if got := cgroupMemoryLimit(root, c.procCgroup); got != c.want {
			t.Errorf("%q: %d, want %d", c.procCgroup, got, c.want)
		}
	}
}

// In an emulated instance, the pool is bounded by the instance's memory, before MariaDB starts.
func TestBufferPoolBeyondTheInstanceIsRefused(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Skipf("MariaDB: %v", err)
	}
	work := t.TempDir()
	mem, err := cgroup.NewMemory("persistlab-bulkload-test-"+filepath.Base(work), 512<<20, work)
	if err != nil {
		t.Skipf("a memory cgroup: %v", err)
	}
	t.Cleanup(func() { mem.Remove() })
	p := workload.Resolve(Params, map[string]string{"buffer_pool": "1GiB", "rows": "10"}, nil)
	in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir(), Wrap: mem.Wrap()}, CellDir: t.TempDir(), Params: p})
	if err == nil {
		in.Stop(context.Background())
	}
	var fe *param.FieldError
	if !errors.As(err, &fe) || fe.Field != "workload.buffer_pool" || !strings.Contains(fe.Allowed, "the instance") {
		t.Errorf("a 1 GiB pool in a 512 MiB instance: %v, want a refusal naming the instance's memory", err)
	}
}

// When MariaDB does not start, the error quotes its log's [ERROR] lines, not install-db's advice.
func TestFailedStartQuotesTheLogsErrors(t *testing.T) {
	progs, err := mariadb.FindPrograms()
	if err != nil {
		t.Skipf("MariaDB: %v", err)
	}
	bad := map[string]string{"no_such_option_for_the_test": "1"}
	cfg := mariadb.ServerConfig{DataDir: filepath.Join(t.TempDir(), "mysql"), RunDir: t.TempDir(), BufferPool: 16 << 20, Settings: bad}
	_, err = mariadb.Start(context.Background(), progs, cfg)
	if err == nil || !strings.Contains(err.Error(), "[ERROR]") || !strings.Contains(err.Error(), "unknown variable") ||
		strings.Contains(err.Error(), "Installation of system tables failed") {
		t.Errorf("install-db failing: %v, want its log's [ERROR] lines", err)
	}
	if _, exited := errors.AsType[*exec.ExitError](err); !exited {
		t.Errorf("install-db failing: %v, want its exit status kept as the cause", err)
	}
	// A data directory that is not empty is not initialised: mariadbd itself fails.
	if err := os.WriteFile(filepath.Join(cfg.DataDir, "leftover"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = mariadb.Start(context.Background(), progs, cfg)
	if err == nil || !strings.Contains(err.Error(), "[ERROR]") || !strings.Contains(err.Error(), "unknown variable 'no_such_option_for_the_test") {
		t.Errorf("mariadbd failing: %v, want its log's [ERROR] lines", err)
	}
}

// mysys reads option files through a 4 KiB line buffer and ends a value at '#': a long or
// commented value could smuggle in a line of its own (bind-address=0.0.0.0), so it is refused;
// buffers allocated besides the pool are not on the list.
func TestServerValuesCannotSmuggleALine(t *testing.T) {
	for _, section := range []map[string]any{
		{"innodb_flush_method": strings.Repeat("A", 4070) + "bind-address=0.0.0.0"},
		{"innodb_io_capacity": "1000 # bind-address=0.0.0.0"},
		{"innodb_io_capacity": "1000\x00"},
		{"key_buffer_size": "8G"},
		{"innodb_buffer_pool_chunk_size": "1G"},
	} {
		if _, err := serverSettings(section); err == nil {
			t.Errorf("%.80v: accepted", section)
		}
	}
}
