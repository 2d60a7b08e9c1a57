package fio

import (
	"strings"
	"testing"
	"time"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// tiny is a valid job for tests to vary.
func tiny(dir string) Job {
	return Job{Name: "t", Directory: dir, RW: "randwrite", BS: 4096, Size: 1 << 20, NumJobs: 1, IODepth: 1}
}

func TestFileRendersEveryField(t *testing.T) {
	for _, c := range []struct {
		name string
		job  Job
		want string
	}{
		{"minimal", tiny("/mnt/target"), `[global]
directory=/mnt/target
rw=randwrite
bs=4096
size=1048576
iodepth=1
direct=0
lat_percentiles=1

[t]
numjobs=1
`},
		// gcsfuse's published read benchmark, one file per job.
		{"gcsfuse", Job{Name: "40", Directory: "/mnt/gcs", FilenameFormat: "$jobname.$jobnum.$filenum",
			RW: "read", BS: 1 << 20, FileSize: 128 << 10, NrFiles: 1, OpenFiles: 1, NumJobs: 40, IODepth: 64,
			Direct: true, Engine: "libaio", Runtime: 60 * time.Second, RampTime: 10 * time.Second, TimeBased: true,
			Thread: true, Invalidate: yes(), FadviseHint: no(), Verify: "0", AllRandRepeat: true, GroupReporting: true},
			`[global]
directory=/mnt/gcs
filename_format=$jobname.$jobnum.$filenum
rw=read
bs=1048576
filesize=131072
nrfiles=1
openfiles=1
iodepth=64
direct=1
ioengine=libaio
runtime=60s
ramp_time=10s
time_based=1
thread=1
invalidate=1
fadvise_hint=0
verify=0
allrandrepeat=1
group_reporting=1
lat_percentiles=1

[40]
numjobs=40
`},
		// seed 002's shared file, fsync every write, sub-second durations, extras in order.
		{"shared", Job{Name: "sync", Directory: "/mnt/target_dir", Filename: "test10k", RW: "write", BS: 10240,
			Size: 10240, NumJobs: 4, IODepth: 1, Fsync: 1, Runtime: 1500 * time.Millisecond,
			RampTime: 250 * time.Microsecond, Invalidate: no(),
			Extra: [][2]string{{"end_fsync", "1"}, {"create_on_open", ""}, {"rate_iops", "100"}}},
			`[global]
directory=/mnt/target_dir
filename=test10k
rw=write
bs=10240
size=10240
iodepth=1
direct=0
runtime=1500ms
ramp_time=250us
fsync=1
invalidate=0
lat_percentiles=1
end_fsync=1
create_on_open
rate_iops=100

[sync]
numjobs=4
`},
	} {
		if err := c.job.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", c.name, err)
		}
		if got := c.job.File(); got != c.want {
			t.Errorf("%s: File():\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

func TestValidateNamesFieldValueAndAllowed(t *testing.T) {
	for _, c := range []struct {
		change func(*Job)
		says   []string
	}{
		{func(j *Job) { j.Name = "" }, []string{"Name", "section name"}},
		{func(j *Job) { j.Name = "global" }, []string{"Name", "not global"}},
		{func(j *Job) { j.Name = "a b" }, []string{"Name", `"a b"`}},
		{func(j *Job) { j.Name = "x]\n[y" }, []string{"Name", "one line"}},
		{func(j *Job) { j.Directory = "" }, []string{"Directory", "absolute path"}},
		{func(j *Job) { j.Directory = "data" }, []string{"Directory", `"data"`, "absolute"}},
		{func(j *Job) { j.Directory = "/a:/b" }, []string{"Directory", "list of directories"}},
		{func(j *Job) { j.Filename = "/etc/passwd" }, []string{"Filename", "relative to Directory"}},
		{func(j *Job) { j.Filename = "../up" }, []string{"Filename", "'..'"}},
		{func(j *Job) { j.Filename, j.FilenameFormat = "f", "$jobname" }, []string{"Filename", "FilenameFormat"}},
		{func(j *Job) { j.RW = "sideways" }, []string{"RW", `"sideways"`, "read, write, randread, randwrite, rw, readwrite, randrw"}},
		{func(j *Job) { j.RW = "trim" }, []string{"RW", `"trim"`, "one of"}},
		{func(j *Job) { j.BS = 0 }, []string{"BS", "1 byte or more"}},
		{func(j *Job) { j.Size = -1 }, []string{"Size", "-1", "0 (unset) or more"}},
		{func(j *Job) { j.Size = 0 }, []string{"Size", "Size, FileSize or Runtime"}},
		{func(j *Job) { j.NrFiles = -1 }, []string{"NrFiles", "0 (fio's default) or more"}},
		{func(j *Job) { j.NrFiles, j.OpenFiles = 2, 3 }, []string{"OpenFiles", "3", "at most NrFiles (2)"}},
		{func(j *Job) { j.NumJobs = 0 }, []string{"NumJobs", "0", "1..4096"}},
		{func(j *Job) { j.NumJobs = 4097 }, []string{"NumJobs", "4097", "1..4096"}},
		{func(j *Job) { j.IODepth = 0 }, []string{"IODepth", "1..65536"}},
		{func(j *Job) { j.IODepth = 65537 }, []string{"IODepth", "65537", "1..65536"}},
		{func(j *Job) { j.Runtime = -time.Second }, []string{"Runtime", "-1s", "0 (unset) or more"}},
		{func(j *Job) { j.RampTime = 1500 * time.Nanosecond }, []string{"RampTime", "1.5µs", "whole microseconds"}},
		{func(j *Job) { j.TimeBased = true }, []string{"Runtime", "TimeBased"}},
		{func(j *Job) { j.Fsync = -1 }, []string{"Fsync", "0 (off)"}},
		{func(j *Job) { j.Engine = "lib aio" }, []string{"Engine", "ioengine name"}},
		{func(j *Job) { j.Extra = [][2]string{{"bs", "8k"}} }, []string{"Extra option", `"bs"`, "Job field BS"}},
		{func(j *Job) { j.Extra = [][2]string{{"readwrite", "read"}} }, []string{`"readwrite"`, "Job field RW"}},
		{func(j *Job) { j.Extra = [][2]string{{"lat_percentiles", "0"}} }, []string{`"lat_percentiles"`, "always 1"}},
		{func(j *Job) { j.Extra = [][2]string{{"rate=1", ""}} }, []string{"Extra option", "option name"}},
		{func(j *Job) { j.Extra = [][2]string{{"unified_rw_reporting", "1"}} }, []string{"unified_rw_reporting", "per direction"}},
		{func(j *Job) { j.Extra = [][2]string{{"rate", "1\n[evil]"}} }, []string{"Extra option", "one line"}},
	} {
		j := tiny("/mnt/target")
		c.change(&j)
		err := j.Validate()
		if err == nil {
			t.Errorf("%+v: accepted; want an error saying %q", j, c.says)
			continue
		}
		for _, s := range append(c.says, "want") {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%+v: error %q lacks %q", j, err, s)
			}
		}
	}
}

func TestValidateAcceptsRuntimeAloneAndEveryMode(t *testing.T) {
	for _, rw := range RWModes {
		j := tiny("/mnt/target")
		j.RW, j.Size, j.Runtime, j.TimeBased = rw, 0, 2*time.Second, true
		if err := j.Validate(); err != nil {
			t.Errorf("rw %s, runtime only: %v", rw, err)
		}
	}
}

// What a job lays out: the larger of size and its files, per job when each job has files of its
// own; never an overflow.
func TestLaidOutBytes(t *testing.T) {
	for _, tc := range []struct {
		j    Job
		want int64
	}{
		{Job{Filename: "f", Size: 10 << 20, NumJobs: 4}, 10 << 20},
		{Job{FilenameFormat: "$jobnum", FileSize: 1 << 20, NrFiles: 3, NumJobs: 2}, 6 << 20},
		{Job{FilenameFormat: "$jobnum", Size: 8 << 20, FileSize: 1 << 20, NrFiles: 3, NumJobs: 2}, 16 << 20},
	} {
		if got := tc.j.LaidOut(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.j, got, tc.want)
		}
	}
	huge := Job{FilenameFormat: "$jobnum", FileSize: 1 << 40, NrFiles: 100000, NumJobs: 4096}
	if got := huge.LaidOut(); got <= 1<<60 {
		t.Errorf("the largest job lays out %d (wrapped?)", got)
	}
}
