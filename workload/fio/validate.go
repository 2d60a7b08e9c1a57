package fio

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	sectionName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	optionName  = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

// fieldOf maps the options File writes (and their fio aliases) to the Job field that sets them, so
// that Extra cannot set one a second time behind the field's back.
var fieldOf = map[string]string{
	"name": "Name", "numjobs": "NumJobs", "directory": "Directory", "filename": "Filename",
	"filename_format": "FilenameFormat", "rw": "RW", "readwrite": "RW", "bs": "BS",
	"blocksize": "BS", "size": "Size", "filesize": "FileSize", "nrfiles": "NrFiles",
	"openfiles": "OpenFiles", "iodepth": "IODepth", "direct": "Direct", "buffered": "Direct",
	"ioengine": "Engine", "runtime": "Runtime", "timeout": "Runtime", "ramp_time": "RampTime",
	"time_based": "TimeBased", "fsync": "Fsync", "thread": "Thread", "invalidate": "Invalidate",
	"fadvise_hint": "FadviseHint", "verify": "Verify", "allrandrepeat": "AllRandRepeat",
	"group_reporting": "GroupReporting", "lat_percentiles": "(always 1)",
}

// Validate checks what persistlab knows of a job and returns the first problem; fio's own reading
// of the options is Check's.
func (j Job) Validate() error {
	bad := func(field string, value any, allowed string) error {
		return fmt.Errorf("fio job %q: %s %v: want %s", j.Name, field, value, allowed)
	}
	if err := j.safe(); err != nil {
		return err
	}
	if !sectionName.MatchString(j.Name) || j.Name == "global" {
		return bad("Name", strconv.Quote(j.Name), "letters, digits, _ . - (a section name), not global")
	}
	if !path.IsAbs(j.Directory) || strings.Contains(j.Directory, ":") {
		return bad("Directory", strconv.Quote(j.Directory), "an absolute path without ':' (fio reads ':' as a list of directories)")
	}
	if j.Filename != "" && j.FilenameFormat != "" {
		return bad("Filename", strconv.Quote(j.Filename), "unset when FilenameFormat is set (one shared file, or one file per job)")
	}
	if j.Filename != "" && (path.IsAbs(j.Filename) || strings.Contains(j.Filename, ":") || slices.Contains(strings.Split(j.Filename, "/"), "..")) {
		return bad("Filename", strconv.Quote(j.Filename), "a path relative to Directory, without ':' or '..'")
	}
	if !slices.Contains(RWModes, j.RW) {
		return bad("RW", strconv.Quote(j.RW), "one of "+strings.Join(RWModes, ", "))
	}
	if j.BS <= 0 {
		return bad("BS", j.BS, "a block size of 1 byte or more")
	}
	if j.Size < 0 || j.FileSize < 0 {
		return bad("Size/FileSize", fmt.Sprintf("%d/%d", j.Size, j.FileSize), "0 (unset) or more bytes")
	}
	if j.Size == 0 && j.FileSize == 0 && j.Runtime == 0 {
		return bad("Size", 0, "Size, FileSize or Runtime set, or fio has no end for the job")
	}
	if j.NrFiles < 0 || j.OpenFiles < 0 {
		return bad("NrFiles/OpenFiles", fmt.Sprintf("%d/%d", j.NrFiles, j.OpenFiles), "0 (fio's default) or more")
	}
	if j.NrFiles > 0 && j.OpenFiles > j.NrFiles {
		return bad("OpenFiles", j.OpenFiles, fmt.Sprintf("at most NrFiles (%d)", j.NrFiles))
	}
	if j.NumJobs < 1 || j.NumJobs > 4096 {
		return bad("NumJobs", j.NumJobs, "1..4096")
	}
	if j.IODepth < 1 || j.IODepth > 65536 {
		return bad("IODepth", j.IODepth, "1..65536")
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"Runtime", j.Runtime}, {"RampTime", j.RampTime}} {
		if d.v < 0 || d.v%time.Microsecond != 0 {
			return bad(d.field, d.v, "0 (unset) or more, in whole microseconds")
		}
	}
	if j.TimeBased && j.Runtime == 0 {
		return bad("Runtime", j.Runtime, "more than 0 when TimeBased is set")
	}
	if j.Fsync < 0 {
		return bad("Fsync", j.Fsync, "0 (off) or a number of writes")
	}
	return nil
}

// safe checks what fio must never be given, even to read (fio --parse-only): a value that ends
// its line, an ioengine persistlab does not run (fio loads one of any path while reading), an
// extra option off persistlab's list, or a '$' fio would expand from the environment.
func (j Job) safe() error {
	bad := func(field string, value any, allowed string) error {
		return fmt.Errorf("fio job %q: %s %v: want %s", j.Name, field, value, allowed)
	}
	if err := j.lines(); err != nil {
		return err
	}
	if j.Engine != "" && !slices.Contains(Engines, j.Engine) {
		return bad("Engine", strconv.Quote(j.Engine), "an ioengine name persistlab runs: "+strings.Join(Engines, ", "))
	}
	for _, v := range [][2]string{{"Directory", j.Directory}, {"Filename", j.Filename}, {"RW", j.RW}, {"Verify", j.Verify}} {
		if strings.Contains(v[1], "$") {
			return bad(v[0], strconv.Quote(v[1]), "no '$' (fio expands ${VAR} from the environment)")
		}
	}
	for _, e := range j.Extra {
		canonical, problem, ofValue := checkOption(e[0], e[1])
		if f, ok := fieldOf[canonical]; ok && optionName.MatchString(e[0]) {
			return bad("Extra option", strconv.Quote(e[0]), "set by the Job field "+f+" instead")
		}
		if problem != "" {
			if ofValue {
				return bad("Extra option", strconv.Quote(e[0]+"="+e[1]), problem)
			}
			return bad("Extra option", strconv.Quote(e[0]), problem)
		}
	}
	return nil
}

// lines refuses line breaks in any value: one would end the option and start another.
func (j Job) lines() error {
	values := [][2]string{{"Name", j.Name}, {"Directory", j.Directory}, {"Filename", j.Filename},
		{"FilenameFormat", j.FilenameFormat}, {"RW", j.RW}, {"Engine", j.Engine}, {"Verify", j.Verify}}
	for _, e := range j.Extra {
		values = append(values, [2]string{"Extra option " + strconv.Quote(e[0]), e[0] + "=" + e[1]})
	}
	for _, v := range values {
		if strings.ContainsAny(v[1], "\n\r\x00;#") {
			return fmt.Errorf("fio job %q: %s %q: want a value on one line, without ';' or '#' (fio ends a value at either)", j.Name, v[0], v[1])
		}
	}
	return nil
}
