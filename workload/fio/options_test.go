package fio

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/backend"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// Options that run commands, write or read files at paths of their own, or leave the backend's
// directory; each is refused in extra and in a job file, however fio would accept it written.
var escapes = map[string]string{
	"exec_prerun":       "touch MARKER",
	"exec_postrun":      "touch MARKER",
	"write_iolog":       "MARKER",
	"write_lat_log":     "MARKER",
	"write_bw_log":      "MARKER",
	"write_iops_log":    "MARKER",
	"write_hist_log":    "MARKER",
	"read_iolog":        "/etc/passwd",
	"replay_redirect":   "/dev/sda",
	"ioscheduler":       "none",
	"include":           "x",
	"filename":          "../x",
	"directory":         "/tmp",
	"opendir":           "/etc",
	"filename_format":   "../$jobname",
	"cgroup":            "x",
	"uid":               "0",
	"cpus_allowed":      "0",
	"mem":               "mmapshared:MARKER",
	"iomem":             "mmapshared:MARKER",
	"buffer_pattern":    "'/etc/shadow'",
	"verify_state_save": "1",
	"ioengine":          "external:/tmp/evil.so",
	"fill_fs":           "1",
	"description":       "${HOME}",
}

func TestExtraRefusesOptionsOffTheList(t *testing.T) {
	for name, value := range escapes {
		_, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"extra": map[string]any{name: value}}})
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != "workload.extra" || !strings.Contains(fe.Value, name) || fe.Allowed == "" {
			t.Errorf("extra %s=%s: %v; want a FieldError naming it", name, value, err)
		}
	}
	// The list is told where to find, and an alias is judged as its option.
	_, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"extra": map[string]any{"exec_prerun": "x"}}})
	if err == nil || !strings.Contains(err.Error(), "workload/fio/options.go") {
		t.Errorf("exec_prerun: %v; want the list's place", err)
	}
	// A Job built by hand is held to the same list before fio reads it.
	j := tiny(t.TempDir())
	j.Extra = [][2]string{{"exec_prerun", "touch " + filepath.Join(j.Directory, "MARKER")}}
	if err := Check(context.Background(), fioBin(t), j); err == nil || !strings.Contains(err.Error(), "exec_prerun") {
		t.Errorf("Check with exec_prerun: %v", err)
	}
}

// jobFileCheck writes body as a job file and checks it as a scenario would; it also tries to
// start it, which must fail the same way.
func jobFileCheck(t *testing.T, body string) error {
	t.Helper()
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "job.fio")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(body, "MARKER", filepath.Join(dir, "MARKER"))), 0o644); err != nil {
		t.Fatal(err)
	}
	p := cellParams(map[string]string{"job_file": path})
	checkErr := w.Check(context.Background(), p)
	var fe *param.FieldError
	if errors.As(checkErr, &fe) && strings.Contains(fe.Value, " line ") { // persistlab's own refusal
		if _, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir()}, CellDir: t.TempDir(), Params: p}); err == nil {
			t.Errorf("%q: Check refuses, Start does not", body)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "MARKER")); err == nil {
		t.Errorf("%q: fio acted on the job", body)
	}
	return checkErr
}

func TestJobFileRefusesOptionsOffTheList(t *testing.T) {
	for name, value := range escapes {
		for _, line := range []string{name + "=" + value, "  " + name + " = " + value, "\t" + name + "=" + value} {
			body := "[global]\nbs=4k\n\n[w]\nrw=write\nsize=1m\n" + line + "\n"
			err := jobFileCheck(t, body)
			var fe *param.FieldError
			if !errors.As(err, &fe) || fe.Field != "workload.job_file" || !strings.Contains(fe.Value, "line 7") {
				t.Errorf("%q: %v; want a FieldError naming line 7", line, err)
			}
		}
	}
	// include in every form fio reads: any line starting with "include".
	for _, line := range []string{"include x", "include=x", "include\tx", "   include x", "\tinclude=x", "includex", "INCLUDE x"} {
		err := jobFileCheck(t, "[w]\nrw=write\nsize=1m\n"+line+"\n")
		if err == nil || !strings.Contains(err.Error(), "no include") {
			t.Errorf("%q: %v", line, err)
		}
	}
	// Names that would lead fio's files out of the directory, and what fio would expand.
	for _, body := range []string{"[..]\nrw=write\nsize=1m\nfilename_format=$jobname\n", "[w]\nname=../up\nrw=write\nsize=1m\n",
		"[w]\nrw=write\nsize=${SIZE}\n", "[w]\n${OPTION}\n", "[w]\nfilename=-\nrw=write\nsize=1m\n",
		"[w]\nfilename=a:/etc/passwd\nrw=write\nsize=1m\n", "rw=write\n[w]\nsize=1m\n",
		"[w]\nrw=write\nsize=1m\ndescription=" + strings.Repeat("x", 4096) + "exec_prerun=touch MARKER\n"} {
		if err := jobFileCheck(t, body); err == nil {
			t.Errorf("%q: accepted", body)
		}
	}
}

// An error quotes at most the offending option, cut short: never the file's other lines.
func TestJobFileErrorsQuoteOnlyTheOffendingOption(t *testing.T) {
	for _, c := range []struct{ body, says string }{
		{"root:$6$SECRETHASH:19000:0:99999:7:::\ndaemon:*:SECRET2:0:99999:7:::\n", "line 1"},
		{"[j]\ndescription=SECRET1\nrw=read\nexec_prerun=/bin/true\n; SECRET2\nSECRET3\n", "line 4: exec_prerun"},
		{"[j]\ndescription=SECRET1\nsize=1m\nrw=sideways\n; SECRET2\nbs=4k\n", "rw=sideways"},
		{"[j]\ndescription=SECRET1\nfilename=" + strings.Repeat("a/", 300) + "\n", "line 3: filename=a/a/"},
	} {
		err := jobFileCheck(t, c.body)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %v; want it to say %q", c.body, err, c.says)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "SECRET") || len(msg) > 600 {
			t.Errorf("%q: the error shows more of the file than its offending option:\n%s", c.body, msg)
		}
	}
}

// returnsWithin runs f and fails the test if it has not returned after d.
func returnsWithin(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
		return nil
	}
}

func TestJobFileMustBeARegularFileOfBoundedSize(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.fio")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.fio")
	os.WriteFile(big, []byte("[w]\n"+strings.Repeat("; comment\n", MaxJobFileBytes/10+1)), 0o644)
	for path, says := range map[string]string{"/dev/zero": "regular file, not a device", fifo: "named pipe", dir: "directory",
		big: "at most 1024 KiB", filepath.Join(dir, "missing"): "no such file"} {
		if path == "/dev/zero" {
			if _, err := os.Stat(path); err != nil {
				continue
			}
		}
		err := returnsWithin(t, 5*time.Second, func() error {
			return w.Check(context.Background(), cellParams(map[string]string{"job_file": path}))
		})
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != "workload.job_file" || fe.Value != path || !strings.Contains(fe.Allowed, says) {
			t.Errorf("%s: %v; want %q", path, err, says)
		}
	}
}

// Checking a job leaves nothing in TMPDIR, whether it passes or fails, and a FIFO does not hold
// a directory there while it would block.
func TestCheckLeavesNothingInTmp(t *testing.T) {
	jobs := t.TempDir()
	good, bad, fifo := filepath.Join(jobs, "good.fio"), filepath.Join(jobs, "bad.fio"), filepath.Join(jobs, "fifo.fio")
	os.WriteFile(good, []byte("[w]\nrw=write\nsize=1m\n"), 0o644)
	os.WriteFile(bad, []byte("[w]\nrw=sideways\nsize=1m\n"), 0o644)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set map[string]string
		ok  bool
	}{
		{nil, true}, {map[string]string{"rw": "sideways"}, false}, {map[string]string{"job_file": good}, true},
		{map[string]string{"job_file": bad}, false}, {map[string]string{"job_file": fifo}, false},
	} {
		err := returnsWithin(t, 60*time.Second, func() error { return w.Check(context.Background(), cellParams(c.set)) })
		if (err == nil) != c.ok {
			t.Errorf("%v: %v", c.set, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Fatalf("%v: left %v in TMPDIR", c.set, left)
		}
	}
}

// A job file and extra options that only shape the I/O still pass, written as fio reads them:
// comments, blanks around '=', aliases, bare flags, fio's file keywords, an engine's options.
func TestLegitimateJobFileAndExtraStillPass(t *testing.T) {
	body := "; a job of my own\n# two comment styles\n[global]\n  readwrite = randrw\nblocksize=4k\nrwmixread=70\n" +
		"ioengine=libaio\nuserspace_reap\ndirect=1\nnorandommap\nrandom_distribution=zipf:1.2\n\n" +
		"[a]\nfilename=shared.data\nsize=1m\nnumjobs=2\ndescription=reads and writes\n\n" +
		"[b.2]\nfilename_format=$jobname.$jobnum.$filenum\nnr_files=2\nfilesize=64k\ntimeout=1s\nend_fsync=1\n"
	if err := jobFileCheck(t, body); err != nil {
		t.Fatalf("a legitimate job file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "mine.fio")
	os.WriteFile(path, []byte(body), 0o644)
	text, err := UserJob(path, "/mnt/target")
	want := "; persistlab: the job's files live on the backend under test\n[global]\ndirectory=/mnt/target\nlat_percentiles=1\n\n" +
		"[global]\nrw=randrw\nbs=4k\nrwmixread=70\nioengine=libaio\nuserspace_reap\ndirect=1\nnorandommap\nrandom_distribution=zipf:1.2\n\n" +
		"[a]\nfilename=shared.data\nsize=1m\nnumjobs=2\ndescription=reads and writes\n\n" +
		"[b.2]\nfilename_format=$jobname.$jobnum.$filenum\nnrfiles=2\nfilesize=64k\nruntime=1s\nend_fsync=1\n"
	if err != nil || text != want {
		t.Errorf("UserJob: %v\n%s\nwant\n%s", err, text, want)
	}

	extra := map[string]any{"norandommap": nil, "rate_iops": 500, "bssplit": "4k/50:64k/50", "random_distribution": "zipf:1.2",
		"end_fsync": 1, "ramp_time": "0", "iodepth_batch_submit": 1}
	if _, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"extra": extra}}); err == nil || !strings.Contains(err.Error(), "ramp_time") {
		t.Errorf("ramp_time in extra, which a parameter sets: %v", err)
	}
	delete(extra, "ramp_time")
	w, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"extra": extra}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Check(context.Background(), cellParams(map[string]string{"rw": "randread", "engine": "libaio"})); err != nil {
		t.Errorf("legitimate extra options: %v", err)
	}
}

// The list and the aliases are fio's own: every allowed name is an option's name (not another
// option's alias), and every alias is the alias fio knows.
func TestOptionNamesAreFios(t *testing.T) {
	if testing.Short() {
		t.Skip("asks fio about each option")
	}
	bin := fioBin(t)
	engineOptions := map[string]bool{}
	for _, engine := range Engines {
		out, _ := exec.Command(bin, "--enghelp="+engine).Output()
		for _, line := range strings.Split(string(out), "\n") {
			if name, _, ok := strings.Cut(line, ":"); ok {
				engineOptions[strings.TrimSpace(name)] = true
			}
		}
	}
	nameOf := func(option string) string {
		out, _ := exec.Command(bin, "--cmdhelp="+option).Output()
		name, _, _ := strings.Cut(strings.TrimSpace(string(out)), ":")
		return name
	}
	for _, name := range AllowedOptions() {
		if got := nameOf(name); got != name && !(got == "" && engineOptions[name]) {
			t.Errorf("%s: fio calls it %q", name, got)
		}
	}
	for alias, name := range fioAliases {
		if got := nameOf(alias); got != name {
			t.Errorf("alias %s: fio's option %q, want %q", alias, got, name)
		}
	}
}

// fio ends a value at ';' or '#' (tried: filename=/tmp/a;b wrote /tmp/a): a value holding either
// would be another value than the one checked, so it is refused, in extra and in a job file.
func TestValuesHoldingACommentMarkAreRefused(t *testing.T) {
	for _, v := range []string{"/tmp/a;b", "x#y"} {
		if _, problem, ofValue := checkOption("description", v); problem == "" || !ofValue {
			t.Errorf("description=%s: accepted", v)
		}
	}
	j := Job{Name: "j", Directory: "/data/run#2", RW: "read", BS: 4096, NumJobs: 1, IODepth: 1}
	if err := j.Validate(); err == nil || !strings.Contains(err.Error(), "';' or '#'") {
		t.Errorf("a directory with '#': %v", err)
	}
}
