package gitcommit

import (
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// fsUsage is the bytes in use on the file system holding dir (as df counts them), its block size,
// and whether dir is the root of that file system (a volume of the cell's own).
func fsUsage(dir string) (used, block int64, own bool, err error) {
	var fs unix.Statfs_t
	if err = unix.Statfs(dir, &fs); err != nil {
		return 0, 0, false, err
	}
	var st, parent unix.Stat_t
	if unix.Stat(dir, &st) == nil && unix.Stat(filepath.Dir(dir), &parent) == nil {
		own = st.Dev != parent.Dev
	}
	return int64(fs.Blocks-fs.Bfree) * int64(fs.Bsize), int64(fs.Bsize), own, nil
}

// measureDisk records the repositories' disk use and what plain files would take instead. On a
// file system of the cell's own it is what the run added to it (statfs: instant, where walking
// 100,000 inodes on an emulated HDD reads them back at its random-I/O rate), the checked-out files
// taking their blocks; elsewhere it walks the files (du).
func (in *instance) measureDisk(m map[string]float64, usedBefore int64, changes int) error {
	list, err := repos(in.env.Target.Dir)
	if err != nil {
		return err
	}
	const mib = 1 << 20
	usedAfter, block, own, err := fsUsage(in.env.Target.Dir)
	if err != nil {
		return fmt.Errorf("disk use of the repositories: %w", err)
	}
	size := int64(in.s.Plan.FileBytes)
	if size == 0 {
		size = seedLineBytes
	}
	fileBlocks := (size + block - 1) / block * block
	if own {
		worktree := int64(in.filesWritten(changes)) * fileBlocks
		m["disk_mib"], m["worktree_mib"] = float64(usedAfter-usedBefore)/mib, float64(worktree)/mib
		m["git_mib"] = m["disk_mib"] - m["worktree_mib"]
		in.method = "statfs: what the run added to its volume; work tree: the checked-out files' blocks"
	} else {
		u, err := diskUse(in.env.Target.Dir)
		if err != nil {
			return fmt.Errorf("disk use of the repositories: %w", err)
		}
		m["git_mib"], m["worktree_mib"] = float64(u.Git)/mib, float64(u.WorkTree)/mib
		m["disk_mib"] = m["git_mib"] + m["worktree_mib"]
		in.method = "du: the blocks of every file and directory under the repositories"
	}
	m["repos"] = float64(len(list))
	m["as_files_mib"] = (m["ok"] + float64(len(in.prefilled))) * float64(fileBlocks) / mib
	return nil
}

// filesWritten is how many files the run left: those its first changes wrote and the prefill's.
func (in *instance) filesWritten(changes int) int {
	files := in.s.Plan.FilesOf(changes)
	n := len(files)
	for _, f := range in.prefilled {
		if _, found := slices.BinarySearch(files, f); !found {
			n++
		}
	}
	return n
}

// seedLineBytes is the length of the seed's line, "{0: 0, ..., 9: 9}" with one value 100, and its
// newline.
const seedLineBytes = 63
