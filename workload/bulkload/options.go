package bulkload

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"persistlab/internal/mariadb"
	"persistlab/param"
)

// The section `server` may only shape performance: persistlab places the server's files on the
// backend, keeps it on loopback without a password, and sets its buffer pool and binary log from
// parameters. An allowlist, not a denylist: mariadbd accepts any unambiguous prefix of an option's
// name (`bind` for bind-address, `innodb_data_home` for innodb_data_home_dir), so only an exact
// name known to be harmless can be let through. Buffers mariadbd allocates at start besides the
// pool (key, Aria, query cache, log buffer, pool chunks) are left out: buffer_pool's bound assumes
// the rest of memory is mariadbd's own. persistlab's InnoDB settings (flush method, doublewrite,
// flush at commit, redo size) may be set here: a variant of the seed's configuration.
var performanceOptions = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range []string{
		// InnoDB: flushing, I/O, logging, memory, purge, statistics, page format.
		"innodb_adaptive_flushing", "innodb_adaptive_flushing_lwm", "innodb_adaptive_hash_index", "innodb_adaptive_hash_index_parts",
		"innodb_autoextend_increment", "innodb_autoinc_lock_mode", "innodb_buffer_pool_dump_at_shutdown",
		"innodb_buffer_pool_dump_pct", "innodb_buffer_pool_load_at_startup", "innodb_change_buffer_max_size", "innodb_change_buffering",
		"innodb_checksum_algorithm", "innodb_compression_algorithm", "innodb_compression_default", "innodb_compression_failure_threshold_pct",
		"innodb_compression_level", "innodb_compression_pad_pct_max", "innodb_deadlock_detect", "innodb_default_row_format", "innodb_doublewrite",
		"innodb_fast_shutdown", "innodb_file_per_table", "innodb_fill_factor", "innodb_flush_log_at_timeout", "innodb_flush_log_at_trx_commit",
		"innodb_flush_method", "innodb_flush_neighbors", "innodb_flush_sync", "innodb_flushing_avg_loops", "innodb_io_capacity",
		"innodb_io_capacity_max", "innodb_linux_aio", "innodb_lock_wait_timeout", "innodb_log_file_buffering",
		"innodb_log_file_mmap", "innodb_log_file_size", "innodb_log_spin_wait_delay", "innodb_log_write_ahead_size", "innodb_lru_scan_depth",
		"innodb_max_dirty_pages_pct", "innodb_max_dirty_pages_pct_lwm", "innodb_max_purge_lag", "innodb_max_purge_lag_delay",
		"innodb_max_purge_lag_wait", "innodb_max_undo_log_size", "innodb_old_blocks_pct", "innodb_old_blocks_time", "innodb_open_files",
		"innodb_page_size", "innodb_purge_batch_size", "innodb_purge_threads", "innodb_random_read_ahead", "innodb_read_ahead_threshold",
		"innodb_read_io_threads", "innodb_sort_buffer_size", "innodb_spin_wait_delay", "innodb_stats_auto_recalc", "innodb_stats_persistent",
		"innodb_stats_persistent_sample_pages", "innodb_stats_transient_sample_pages", "innodb_strict_mode", "innodb_sync_spin_loops",
		"innodb_undo_log_truncate", "innodb_undo_tablespaces", "innodb_use_atomic_writes", "innodb_use_native_aio", "innodb_write_io_threads",
		// The binary log's format and syncing (where it goes is the parameter binlog's).
		"sync_binlog", "binlog_format", "binlog_row_image", "binlog_checksum", "binlog_cache_size", "binlog_stmt_cache_size",
		"binlog_file_cache_size", "binlog_commit_wait_count", "binlog_commit_wait_usec", "binlog_annotate_row_events",
		"max_binlog_size", "max_binlog_cache_size", "sync_frm",
		// The load's connection and the server's caches and threads.
		"bulk_insert_buffer_size", "max_allowed_packet", "net_buffer_length", "net_read_timeout", "net_write_timeout",
		"sort_buffer_size", "join_buffer_size", "read_buffer_size", "read_rnd_buffer_size", "tmp_table_size", "max_heap_table_size",
		"table_open_cache", "table_definition_cache", "thread_cache_size",
		"thread_handling", "thread_pool_size", "max_connections", "query_cache_type", "performance_schema",
		"flush", "flush_time", "transaction_isolation",
	} {
		m[name] = true
	}
	return m
}()

// parameterOptions are options a parameter of the workload sets: the bound on buffer_pool, and the
// binary log's place on the target, hold only through them.
var parameterOptions = map[string]string{
	"innodb_buffer_pool_size":     "buffer_pool",
	"innodb_buffer_pool_size_max": "buffer_pool",
	"log_bin":                     "binlog",
	"binlog":                      "binlog",
}

// optionPrefixes are what mariadbd's option parser strips from a name before looking it up
// (my_getopt's special_opt_prefix): they change how the value is read, not which option it sets.
var optionPrefixes = []string{"loose_", "skip_", "disable_", "enable_", "maximum_", "autoset_"}

var optionNameChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// normalOption is the option a name sets, as mariadbd reads it: `-` and `_` alike, its special
// prefixes stripped.
func normalOption(name string) string {
	n := strings.ReplaceAll(name, "-", "_")
	for stripped := true; stripped; {
		stripped = false
		for _, p := range optionPrefixes {
			if rest, ok := strings.CutPrefix(n, p); ok && rest != "" {
				n, stripped = rest, true
			}
		}
	}
	return n
}

// pathLike says whether an option's name says it takes a path (a directory, file or socket): such
// a value could put the server's files off the backend.
func pathLike(option string) bool {
	for _, s := range []string{"dir", "directory", "_file", "filename", "_path", "socket", "_priv", "basename"} {
		if strings.HasSuffix(option, s) {
			return true
		}
	}
	return false
}

// ownOptions are the options persistlab writes itself, normalised.
func ownOptions() map[string]bool {
	own := map[string]bool{}
	opts := mariadb.ServerConfig{DataDir: "D", RunDir: "R", Binlog: true}.Options(1)
	for _, line := range strings.Split(opts, "\n") {
		if name, _, _ := strings.Cut(line, "="); name != "" && !strings.HasPrefix(name, "[") {
			own[normalOption(name)] = true
		}
	}
	return own
}

// checkServerOptions refuses any option of the section `server` that does more than shape
// performance, and any option set twice under different spellings.
func checkServerOptions(settings map[string]string) error {
	names := make([]string, 0, len(settings))
	for k := range settings {
		names = append(names, k)
	}
	sort.Strings(names)
	own := ownOptions()
	seen := map[string]string{}
	for _, k := range names {
		v := settings[k]
		fail := func(allowed string) error {
			return &param.FieldError{Field: "workload.server." + k, Value: v, Allowed: allowed}
		}
		// mysys reads an option file line by line through a 4 KiB buffer (a longer line goes on as a
		// line of its own) and ends a value at an unquoted '#': either would let a value set another option.
		if len(k)+len(v) > maxOptionBytes || strings.ContainsAny(k+v, "#") || strings.ContainsFunc(k+v, unicode.IsControl) {
			return fail(fmt.Sprintf("one line of at most %d bytes, without '#' or control characters", maxOptionBytes))
		}
		if !optionNameChars.MatchString(k) {
			return fail("an option name of letters, digits, - and _")
		}
		option := normalOption(k)
		if param, ok := parameterOptions[option]; ok {
			return fail("no " + option + " here: the workload's parameter " + param + " sets it")
		}
		if pathLike(option) {
			return fail("no option that takes a path: persistlab places every file of the server on the backend or in the cell's directory")
		}
		if !performanceOptions[option] {
			why := "mariadbd's abbreviations are not taken"
			if own[option] {
				why = "persistlab sets " + option + " itself"
			}
			return fail("an option that only shapes performance, by its full name (" + why + "): one of " + strings.Join(PerformanceOptions(), ", "))
		}
		if prev, dup := seen[option]; dup {
			return fail("one setting per option: " + prev + " sets " + option + " too")
		}
		seen[option] = k
	}
	return nil
}

// maxOptionBytes bounds an option's name and value together, well inside mysys's line buffer.
const maxOptionBytes = 1024

// PerformanceOptions lists the options the section `server` may set, sorted.
func PerformanceOptions() []string {
	out := make([]string, 0, len(performanceOptions))
	for k := range performanceOptions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// serverSettings reads the section `server`: option names to one-line scalar values (null: the
// option alone, as skip-... is written).
func serverSettings(section any) (map[string]string, error) {
	m, ok := section.(map[string]any)
	if !ok {
		return nil, &param.FieldError{Field: "workload.server", Value: fmt.Sprint(section),
			Allowed: "a mapping of further mariadbd options, like {innodb_io_capacity: 1000}"}
	}
	out := map[string]string{}
	for k, v := range m {
		switch v.(type) {
		case nil:
			out[k] = ""
		case string, bool, int, int64, uint64, float64:
			out[k] = fmt.Sprint(v)
		default:
			return nil, &param.FieldError{Field: "workload.server." + k, Value: fmt.Sprint(v), Allowed: "one value: a number, a word or true/false"}
		}
	}
	return out, checkServerOptions(out)
}
