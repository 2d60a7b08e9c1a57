package fio

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Engines are the ioengines persistlab runs: plain I/O on the job's files. fio's others run
// commands (exec), load a library of any path (external:), or reach a network or a device.
var Engines = []string{"psync", "sync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap"}

// allowedOptions are the fio options a scenario's extra and a user's job file may set: the ones
// that only shape the I/O on the job's own files. An allowlist, not a list of bad ones: fio's
// other options run commands (exec_prerun), write or read files at paths of their own (logs,
// iologs, verify state, mem=mmap:FILE, buffer_pattern='FILE'), or change the host (ioscheduler,
// cgroup, uid, nice, cpus_allowed, lockmem), and an option a later fio adds stays refused until
// someone looks at it. Names are fio 3.33's (fio --cmdhelp=all, --enghelp=ENGINE).
var allowedOptions = map[string]bool{
	// what and how much
	"rw": true, "rw_sequencer": true, "bs": true, "ba": true, "bsrange": true, "bssplit": true,
	"bs_unaligned": true, "size": true, "io_size": true, "filesize": true, "file_append": true,
	"offset": true, "offset_increment": true, "offset_align": true, "number_ios": true,
	"nrfiles": true, "openfiles": true, "file_service_type": true, "numjobs": true, "loops": true,
	"rwmixread": true, "rwmixwrite": true,
	// randomness
	"randrepeat": true, "allrandrepeat": true, "randseed": true, "norandommap": true,
	"random_distribution": true, "random_generator": true, "percentage_random": true,
	// how it is issued
	"ioengine": true, "iodepth": true, "iodepth_batch": true, "iodepth_batch_complete_min": true,
	"iodepth_batch_complete_max": true, "iodepth_low": true, "io_submit_mode": true,
	"serialize_overlap": true, "direct": true, "buffered": true, "atomic": true, "thread": true,
	"invalidate": true, "fadvise_hint": true, "fallocate": true, "overwrite": true,
	"pre_read": true, "lockfile": true,
	// syncs
	"fsync": true, "fdatasync": true, "sync": true, "end_fsync": true, "fsync_on_close": true,
	"write_barrier": true, "sync_file_range": true,
	// when and how long
	"runtime": true, "time_based": true, "ramp_time": true, "startdelay": true,
	"thinktime": true, "thinktime_spin": true, "thinktime_blocks": true,
	"thinktime_blocks_type": true, "thinktime_iotime": true,
	"rate": true, "rate_min": true, "rate_iops": true, "rate_iops_min": true, "rate_process": true,
	"rate_cycle": true, "rate_ignore_thinktime": true,
	// the job's files, in the backend's directory
	"filename": true, "filename_format": true, "create_serialize": true, "create_fsync": true,
	"create_on_open": true, "create_only": true, "allow_file_create": true, "unlink": true,
	"unlink_each_loop": true,
	// buffer contents
	"zero_buffers": true, "refill_buffers": true, "scramble_buffers": true,
	"buffer_compress_percentage": true, "buffer_compress_chunk": true, "dedupe_percentage": true,
	"dedupe_mode": true, "dedupe_working_set_percentage": true,
	// verification, in memory
	"verify": true, "do_verify": true, "verify_only": true, "verify_interval": true,
	"verify_offset": true, "verify_fatal": true, "verify_backlog": true,
	"verify_backlog_batch": true, "experimental_verify": true,
	// naming and units
	"name": true, "description": true, "group_reporting": true, "kb_base": true, "unit_base": true,
	// the engines' own options (libaio, io_uring, pvsync2, mmap)
	"userspace_reap": true, "nowait": true, "hipri": true, "hipri_percentage": true,
	"fixedbufs": true, "registerfiles": true, "sqthread_poll": true, "nonvectored": true,
	"uncached": true, "force_async": true, "thp": true,
}

// fioAliases are fio 3.33's other names of its options (fio --cmdhelp=NAME says "alias"), so
// that an option is judged by its one name however it is written.
var fioAliases = map[string]string{
	"readwrite": "rw", "blocksize": "bs", "blockalign": "ba", "blocksize_range": "bsrange",
	"blocksize_unaligned": "bs_unaligned", "iodepth_batch_submit": "iodepth_batch",
	"iodepth_batch_complete": "iodepth_batch_complete_min", "io_limit": "io_size",
	"fill_fs": "fill_device", "fileoffset": "offset", "nr_files": "nrfiles", "timeout": "runtime",
	"iomem": "mem", "ratemin": "rate_min", "ratecycle": "rate_cycle",
	"wait_for_previous": "stonewall", "disable_bw": "disable_bw_measurement", "ss": "steadystate",
	"ss_dur": "steadystate_duration", "ss_ramp": "steadystate_ramp_time",
}

// refusedBecause says why options persistlab sets itself, or cannot measure, are refused.
var refusedBecause = map[string]string{
	"directory":            "no directory=: persistlab runs the job in the backend's directory",
	"opendir":              "no opendir=: it reads a directory outside the backend's; name the files with filename=",
	"lat_percentiles":      "no lat_percentiles=: persistlab sets it to 1 for the percentiles it reports",
	"unified_rw_reporting": "no unified_rw_reporting=: results are read per direction",
	"stonewall":            jobsWaitReason, "wait_for": jobsWaitReason, "new_group": jobsWaitReason,
}

// persistlab sums its jobs' bandwidth over the run: jobs that run one after another would be
// added as if they had run at once.
const jobsWaitReason = "no jobs that wait for each other (stonewall, wait_for, new_group): their bandwidths would be summed as if concurrent; use a job file per phase"

// notOnList is the Allowed text of an option off allowedOptions.
const notOnList = "an option on persistlab's list of fio options that only shape the I/O (allowedOptions in workload/fio/options.go; fio's options that run commands, write logs or reach paths outside the backend's directory are refused)"

// AllowedOptions lists, sorted, the fio options extra and a job file may set.
func AllowedOptions() []string {
	names := make([]string, 0, len(allowedOptions))
	for n := range allowedOptions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// fileKeywords are what fio puts into filename_format per job and file.
var fileKeywords = []string{"$jobname", "$jobnum", "$filenum", "$clientuid"}

// checkOption judges one option a user sets (name as written, value "" for a bare flag). It
// returns fio's name for it and, if it is refused, what is allowed and whether the value (not
// the name) is at fault.
func checkOption(name, value string) (canonical, problem string, ofValue bool) {
	if strings.ContainsAny(value, ";#") { // fio's strip_blank_end ends a value at either
		return name, "a value without ';' or '#' (fio ends the value there, so it would read another)", true
	}
	if !optionName.MatchString(name) {
		return name, "an option name (letters, digits, _)", false
	}
	canonical = name
	if n, ok := fioAliases[name]; ok {
		canonical = n
	}
	if why, ok := refusedBecause[canonical]; ok {
		return canonical, why, false
	}
	if !allowedOptions[canonical] {
		return canonical, notOnList, false
	}
	if len(name)+1+len(value) > maxLineBytes {
		return canonical, fmt.Sprintf("an option of at most %d bytes", maxLineBytes), true
	}
	if hasControl(value) {
		return canonical, "a value on one line, without control characters", true
	}
	if problem := checkValue(canonical, value); problem != "" {
		return canonical, problem, true
	}
	return canonical, "", false
}

// checkValue judges the value of an allowed option.
func checkValue(canonical, value string) string {
	switch canonical {
	case "ioengine":
		if !slices.Contains(Engines, value) {
			return "one of the ioengines " + strings.Join(Engines, ", ")
		}
	case "name":
		if !jobName(value) || value == "global" {
			return "a job name of letters, digits, _ . - (it names the job's files)"
		}
	case "filename":
		// ':' separates fio's files (and '\' escapes it); "-" is fio's stdin/stdout.
		if value == "" || value == "." || value == ".." || value == "-" || strings.ContainsAny(value, `/\:$`) {
			return "a plain file name in the backend's directory: no / \\ : or $, not . .. or -"
		}
	case "filename_format":
		rest := value
		for _, k := range fileKeywords {
			rest = strings.ReplaceAll(rest, k, "")
		}
		if value == "" || value == "." || value == ".." || strings.ContainsAny(rest, `/\:$`) {
			return "a plain file name in the backend's directory: no / \\ : or $ other than " + strings.Join(fileKeywords, " ")
		}
	default:
		// fio replaces ${VAR} from persistlab's environment, anywhere in the line (the option's
		// name too), and $ncpus and the like by the host's: the job would not be the one checked.
		if strings.Contains(value, "$") {
			return "a value without $ (fio would expand it from persistlab's environment)"
		}
	}
	return ""
}

// jobName says whether name may name a section: fio's $jobname puts it into file names, and fio
// reads at most 255 bytes of it.
func jobName(name string) bool {
	return len(name) <= 128 && sectionName.MatchString(name) && name != "." && name != ".."
}

// hasControl says whether s holds a control character other than a tab.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f })
}
