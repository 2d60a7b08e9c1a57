// Package damon pauses a machine's running DAMON page-out policies for a run, at its owner's
// explicit request (run --pause-host-pageout), and restores them after it: only the kdamonds it
// turned off itself, as a record in the run's work directory says, so that `persistlab clean`
// restores them after a kill. Nothing here runs unless asked.
package damon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/lib/readfile"
)

// RecordName is the file in a run's work directory that records the kdamonds the run turned off.
const RecordName = "persistlab.pageout-paused"

// maxRecordBytes bounds how much of a record is read: a few kdamonds' descriptions.
const maxRecordBytes = 1 << 20

// Record is what a run paused: the DAMON admin directory, the boot it paused them in (a record
// means nothing after a reboot), and each kdamond it turned off.
type Record struct {
	Root     string   `json:"root"`
	Boot     string   `json:"boot"`
	Kdamonds []Paused `json:"kdamonds"`
}

// Paused is a kdamond the run turned off, and its page-out schemes as they read while it ran:
// it is turned on again only while they still read so.
type Paused struct {
	Index    int      `json:"kdamond"`
	Policies []string `json:"policies"`
}

// Policies are the paused kdamonds' page-out schemes, one line each.
func (r Record) Policies() []string {
	var out []string
	for _, k := range r.Kdamonds {
		out = append(out, k.Policies...)
	}
	return out
}

// access checks a file's permission; tests stand in a read-only file system.
var access = unix.Access

// Check refuses, starting nothing, what Pause cannot do: a user other than root (euid), or a
// DAMON sysfs under root that is absent or cannot be written.
func Check(root string, euid int) error {
	if euid != 0 {
		return fmt.Errorf("needs root: DAMON's kdamonds (%s) are root's to turn off and on; run as root, or without it", root)
	}
	count := filepath.Join(root, "kdamonds", "nr_kdamonds")
	if _, err := os.Stat(count); err != nil {
		return fmt.Errorf("DAMON's sysfs interface is absent here (%v): this kernel has no DAMON page-out policy to pause (CONFIG_DAMON_SYSFS)", err)
	}
	files := []string{count}
	for k := range sysinfo.Kdamonds(root) {
		files = append(files, sysinfo.KdamondStateFile(root, k))
	}
	for _, f := range files {
		if err := access(f, unix.W_OK); err != nil {
			return fmt.Errorf("DAMON's sysfs cannot be written (%s: %v): its policies cannot be paused here (a read-only /sys, as in a container?)", f, err)
		}
	}
	return nil
}

// Pause turns off every running kdamond under root with a page-out scheme, after recording each in
// dir's record: a kill at any moment leaves a record that Restore (and clean) acts on. It returns
// the record; one with no kdamonds where none was running (nothing written then). A kdamond
// already off is never touched. On failure it turns on again those it had turned off.
func Pause(root, dir string) (Record, error) {
	rec := Record{Root: root, Boot: proc.BootID()}
	for k := range sysinfo.Kdamonds(root) {
		if sysinfo.KdamondState(root, k) != "on" {
			continue
		}
		if policies := sysinfo.KdamondPageOut(root, k); len(policies) > 0 {
			rec.Kdamonds = append(rec.Kdamonds, Paused{Index: k, Policies: policies})
		}
	}
	if len(rec.Kdamonds) == 0 {
		return rec, nil
	}
	if _, err := os.Lstat(filepath.Join(dir, RecordName)); err == nil {
		return Record{}, fmt.Errorf("%s already holds a record of paused page-out policies: restore them first (persistlab clean %s)", dir, dir)
	}
	if err := write(dir, rec); err != nil {
		return Record{}, err
	}
	for _, k := range rec.Kdamonds {
		if err := setState(root, k.Index, "off"); err != nil {
			_, undo := Restore(dir)
			return Record{}, errors.Join(err, undo)
		}
	}
	return rec, nil
}

// Restore turns on again each kdamond dir's record names that is off and whose page-out schemes
// still read as recorded, and removes the record once none is left to restore. It says what it
// did, one line each. No record: nothing to do (a second Restore). A record of another boot is
// dropped unread: that boot's kdamonds are gone. A kdamond whose schemes changed is left off, and
// the record kept, with an error: someone else has set it since.
func Restore(dir string) (done []string, err error) {
	path := filepath.Join(dir, RecordName)
	rec, ok, err := read(path)
	if err != nil || !ok {
		return nil, err
	}
	if rec.Boot == "" || rec.Boot != proc.BootID() {
		if err := os.Remove(path); err != nil {
			return nil, err
		}
		return []string{"page-out policies paused before a reboot: nothing to restore (the record is removed)"}, nil
	}
	var errs []error
	for _, k := range rec.Kdamonds {
		switch state := sysinfo.KdamondState(rec.Root, k.Index); state {
		case "on":
			done = append(done, fmt.Sprintf("kdamond %d runs already: left as it is", k.Index))
		case "off":
			if now := sysinfo.KdamondPageOut(rec.Root, k.Index); !slices.Equal(now, k.Policies) {
				errs = append(errs, fmt.Errorf("kdamond %d: its page-out schemes changed since persistlab turned it off (recorded %q, now %q): left off; turn it on yourself (echo on > %s) if it should run, then persistlab clean again",
					k.Index, k.Policies, now, sysinfo.KdamondStateFile(rec.Root, k.Index)))
				continue
			}
			if err := setState(rec.Root, k.Index, "on"); err != nil {
				errs = append(errs, err)
				continue
			}
			done = append(done, fmt.Sprintf("kdamond %d turned on again: %s", k.Index, strings.Join(k.Policies, "; ")))
		default:
			errs = append(errs, fmt.Errorf("kdamond %d: state %q (%s), want on or off: left as it is", k.Index, state, sysinfo.KdamondStateFile(rec.Root, k.Index)))
		}
	}
	if len(errs) > 0 {
		return done, errors.Join(errs...)
	}
	return done, os.Remove(path)
}

// Recorded reads dir's record of paused kdamonds, if it holds one this user or root wrote.
func Recorded(dir string) (Record, bool) {
	rec, ok, err := read(filepath.Join(dir, RecordName))
	return rec, ok && err == nil
}

// setState writes state to kdamond k's state file (which must exist: nothing is created under
// root) and checks that it reads so.
func setState(root string, k int, state string) error {
	path := sysinfo.KdamondStateFile(root, k)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("kdamond %d: %s: %w", k, state, err)
	}
	_, err = f.WriteString(state)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("kdamond %d: writing %s to %s: %w", k, state, path, err)
	}
	if got := sysinfo.KdamondState(root, k); got != state {
		return fmt.Errorf("kdamond %d: wrote %s to %s, which reads %q", k, state, path, got)
	}
	return nil
}

// write saves the record whole (a file beside it, renamed over), readable by this user alone.
func write(dir string, rec Record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, RecordName+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, RecordName))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("recording the paused page-out policies in %s: %w", dir, err)
	}
	return nil
}

// read reads a record, if one is there; one that another user could have written (a link, a file
// others may write, or owned by neither this user nor root) is refused.
func read(path string) (Record, bool, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o022 != 0 || !ok || (int(sys.Uid) != os.Geteuid() && sys.Uid != 0) {
		return Record{}, false, fmt.Errorf("%s: not a record persistlab wrote (a link, or a file others may write): left alone", path)
	}
	data, err := readfile.Regular(path, maxRecordBytes)
	if err != nil {
		return Record{}, false, fmt.Errorf("%s: %w", path, err)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return Record{}, false, fmt.Errorf("%s: %w", path, err)
	}
	if !filepath.IsAbs(rec.Root) || filepath.Clean(rec.Root) != rec.Root {
		return Record{}, false, fmt.Errorf("%s: root %q: want an absolute, clean path", path, rec.Root)
	}
	for _, k := range rec.Kdamonds {
		if k.Index < 0 || k.Index >= sysinfo.MaxKdamonds {
			return Record{}, false, fmt.Errorf("%s: kdamond %d: want 0 to %d", path, k.Index, sysinfo.MaxKdamonds-1)
		}
	}
	return rec, true, nil
}
