package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ProbeRecord is what a bucket probe keeps in the temporary directory while it may have objects
// in the bucket: enough for persistlab clean to delete what a killed probe wrote, by name, and
// no credential (a key file by its path only).
type ProbeRecord struct {
	PID      int       `json:"pid"`
	Started  time.Time `json:"started"`
	Endpoint string    `json:"endpoint"`
	Bucket   string    `json:"bucket"`
	Prefix   string    `json:"prefix"`
	KeyFile  string    `json:"key_file,omitempty"` // absolute; "" for Application Default Credentials or the lab's token
	// Objects are every object the probe may write, recorded before the first request: clean
	// deletes these and no other.
	Objects []string `json:"objects"`
}

// probeRecordPattern names records in a directory; the id is NewProbeID's.
const probeRecordPattern = "persistlab-probe-*.json"

var probeRecordName = regexp.MustCompile(`^persistlab-probe-([0-9a-f]{12})\.json$`)

// maxProbeRecordBytes bounds how much of a record is read (a default plan's is about 13 KiB).
const maxProbeRecordBytes = 1 << 20

// ProbeRecordPath is where the probe with this id keeps its record in dir.
func ProbeRecordPath(dir, id string) string {
	return filepath.Join(dir, "persistlab-probe-"+id+".json")
}

// Objects are the names of every object the plan may write under prefix, in the order the
// probe writes them.
func (p BucketPlan) Objects(prefix string) []string {
	var out []string
	for i := 0; i < p.Samples; i++ {
		out = append(out, prefix+smallObject(i))
	}
	for _, n := range p.largeSizes() {
		out = append(out, prefix+largeObject(n))
	}
	return append(out, prefix+burstObject)
}

// HeldProbeRecord is a live probe's record, locked while the probe runs so that clean takes it
// for a killed probe's only once the probe is gone.
type HeldProbeRecord struct {
	path string
	f    *os.File
}

// HoldProbeRecord writes rec to path (which must not exist) and holds its lock. The record is
// written and locked under another name first, then linked to path (the lock is the file's, under
// either name): clean never finds one half written, nor one the probe does not hold yet.
func HoldProbeRecord(path string, rec ProbeRecord) (*HeldProbeRecord, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	writing := path + ".new"
	f, err := os.OpenFile(writing, os.O_CREATE|os.O_EXCL|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*HeldProbeRecord, error) {
		f.Close()
		os.Remove(writing)
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		return fail(err)
	}
	if err := os.Link(writing, path); err != nil { // never over another's
		if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("%s exists: another probe's", path)
		}
		return fail(err)
	}
	os.Remove(writing)
	return &HeldProbeRecord{path: path, f: f}, nil
}

// Path is the record's file.
func (h *HeldProbeRecord) Path() string { return h.path }

// Release lets go of the record, removing it when nothing of the probe is left in the bucket.
func (h *HeldProbeRecord) Release(nothingLeft bool) {
	if nothingLeft {
		os.Remove(h.path)
	}
	h.f.Close()
}

// DeadProbe is the record of a probe that is gone and may have left objects.
type DeadProbe struct {
	Path   string
	Record ProbeRecord
	lock   *os.File // held from FindDeadProbes until Close: no other clean works on it meanwhile
}

// Close lets go of the record's lock.
func (d DeadProbe) Close() {
	if d.lock != nil {
		d.lock.Close()
	}
}

// Remove removes the record (once nothing it names is left).
func (d DeadProbe) Remove() error { return os.Remove(d.Path) }

// FindDeadProbes lists the records in dir of probes that are gone: a record nobody holds, owned
// by this user and writable by no one else, whose every name lies under its own probe prefix.
// Another record is returned in skipped, with why: clean would send deletes with this user's
// credentials on its word.
func FindDeadProbes(dir string) (dead []DeadProbe, skipped []string) {
	paths, _ := filepath.Glob(filepath.Join(dir, probeRecordPattern))
	for _, path := range paths {
		m := probeRecordName.FindStringSubmatch(filepath.Base(path))
		if m == nil {
			continue
		}
		d, err := inspectProbeRecord(path, m[1])
		if err == errLive {
			continue
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		dead = append(dead, d)
	}
	return dead, skipped
}

var errLive = fmt.Errorf("a live probe holds it")

func inspectProbeRecord(path, id string) (DeadProbe, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return DeadProbe{}, err
	}
	st, err := f.Stat() // what is read is what is checked
	if err != nil {
		f.Close()
		return DeadProbe{}, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.Mode().IsRegular() || !ok || st.Mode().Perm()&0o022 != 0 || int(sys.Uid) != os.Geteuid() {
		f.Close()
		return DeadProbe{}, fmt.Errorf("not a regular file of this user's that only it may write: left alone (a probe another user ran is cleaned by that user)")
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return DeadProbe{}, errLive
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProbeRecordBytes+1))
	if err == nil && len(data) > maxProbeRecordBytes {
		err = fmt.Errorf("over %d bytes: not a probe's record", maxProbeRecordBytes)
	}
	var rec ProbeRecord
	if err == nil {
		err = json.NewDecoder(bytes.NewReader(data)).Decode(&rec)
	}
	if err == nil {
		err = rec.check(id)
	}
	if err != nil {
		f.Close()
		return DeadProbe{}, err
	}
	return DeadProbe{Path: path, Record: rec, lock: f}, nil
}

// check says whether the record is one a probe with this id wrote: its prefix is the id's, every
// object lies under it, and its bucket and endpoint make a client.
func (r ProbeRecord) check(id string) error {
	if r.Prefix != ProbePrefix(id) {
		return fmt.Errorf("prefix %q: want %q, the file name's", r.Prefix, ProbePrefix(id))
	}
	for _, o := range r.Objects {
		if !strings.HasPrefix(o, r.Prefix) || strings.Contains(o[len(r.Prefix):], "..") {
			return fmt.Errorf("object %q: want a name under %s", o, r.Prefix)
		}
	}
	if r.KeyFile != "" && !filepath.IsAbs(r.KeyFile) {
		return fmt.Errorf("key_file %q: want an absolute path", r.KeyFile)
	}
	if _, err := NewClient(nil, r.Endpoint, r.Bucket); err != nil {
		return err
	}
	return nil
}
