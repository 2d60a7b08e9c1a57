package gitcommit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Layouts of the repositories (seed 004's two scripts).
const (
	LayoutMonolithic  = "monolithic"  // one repository holds every file (bench_monolithic.py)
	LayoutDistributed = "distributed" // a repository per file (bench_distributed.py)
)

// Plan is one run's sequence of changes: which file each change writes and with what. The same
// plan gives the same files, the same commits and, with git's dates fixed, the same hashes.
// Its fields are the workload's parameters of their tags (param.Decode).
type Plan struct {
	Files     int    `param:"files"`      // files the changes pick from
	Changes   int    `param:"changes"`    // changes, each followed by git add and git commit
	FileBytes int    `param:"file_bytes"` // 0: the seed's line (one of ten variants); else this many bytes of random text
	Layout    string `param:"layout"`     // LayoutMonolithic or LayoutDistributed
	Seed      uint64 `param:"seed"`
}

// Change is one change of a plan: the file (1-based, like the seed's file1..file5000) and its
// new content.
type Change struct {
	File    int
	Content []byte
}

// Changes yields the plan's changes in order; buf is reused, so a change's content is valid until
// the next call.
type Changes struct {
	p   Plan
	rng *rand.Rand
	buf []byte
}

// Iterate starts the plan's changes from the first.
func (p Plan) Iterate() *Changes {
	return &Changes{p: p, rng: rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))}
}

// Next is the next change.
func (c *Changes) Next() Change {
	file := 1 + c.rng.IntN(c.p.Files)
	c.buf = c.buf[:0]
	if c.p.FileBytes == 0 {
		// The seed's content: Python's str() of {0: 0, ..., 9: 9} with one value set to 100, as
		// `echo` writes it (a newline at the end). Ten variants, so about one change in ten
		// to an existing file leaves it as it was and its commit has nothing to commit.
		hundred := c.rng.IntN(10)
		c.buf = append(c.buf, '{')
		for i := 0; i < 10; i++ {
			if i > 0 {
				c.buf = append(c.buf, ", "...)
			}
			c.buf = strconv.AppendInt(c.buf, int64(i), 10)
			c.buf = append(c.buf, ": "...)
			v := i
			if i == hundred {
				v = 100
			}
			c.buf = strconv.AppendInt(c.buf, int64(v), 10)
		}
		c.buf = append(c.buf, "}\n"...)
		return Change{File: file, Content: c.buf}
	}
	const letters = "0123456789abcdefghijklmnopqrstuvwxyz"
	for i := 0; i < c.p.FileBytes-1; i++ {
		c.buf = append(c.buf, letters[c.rng.IntN(len(letters))])
	}
	c.buf = append(c.buf, '\n')
	return Change{File: file, Content: c.buf}
}

// Root is the directory under the target a run keeps its repositories in.
const Root = "gitcommit"

// FileName is a file's name, as the seed's: file1 .. fileN.
func FileName(file int) string { return "file" + strconv.Itoa(file) }

// RepoDir is the repository a file's changes are committed to, under the target dir.
func (p Plan) RepoDir(dir string, file int) string {
	if p.Layout == LayoutDistributed {
		return filepath.Join(dir, Root, FileName(file)) // benchmark_dir/fileN/{.git,fileN}
	}
	return filepath.Join(dir, Root) // ./.git with benchmark_dir/fileN
}

// FilePath is where a file lives, under the target dir.
func (p Plan) FilePath(dir string, file int) string {
	if p.Layout == LayoutDistributed {
		return filepath.Join(p.RepoDir(dir, file), FileName(file))
	}
	return filepath.Join(dir, Root, "files", FileName(file))
}

// Validate checks a plan's numbers.
func (p Plan) Validate() error {
	switch {
	case p.Files < 1:
		return fmt.Errorf("files %d: want at least 1", p.Files)
	case p.Changes < 1:
		return fmt.Errorf("changes %d: want at least 1", p.Changes)
	case p.FileBytes < 0:
		return fmt.Errorf("file_bytes %d: want 0 (the seed's line) or more", p.FileBytes)
	case p.Layout != LayoutMonolithic && p.Layout != LayoutDistributed:
		return fmt.Errorf("layout %q: want %s or %s", p.Layout, LayoutMonolithic, LayoutDistributed)
	}
	return nil
}

// Touched is how many distinct files the plan's changes write.
func (p Plan) Touched() int { return len(p.FilesOf(p.Changes)) }

// FilesOf is the distinct files the plan's first n changes write, in order of number.
func (p Plan) FilesOf(n int) []int {
	n = min(n, p.Changes)
	seen := make(map[int]bool, min(p.Files, n))
	c := p.Iterate()
	for i := 0; i < n; i++ {
		seen[c.Next().File] = true
	}
	files := make([]int, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	slices.Sort(files)
	return files
}

// Slot is when change i (from 0) of a run paced at rate changes per second starts, after the
// run's start.
func Slot(i int, rate float64) time.Duration {
	return time.Duration(float64(i) / rate * float64(time.Second))
}

// PacedChanges is how many changes a run paced at rate starts within limit: those whose slot
// comes before it, ceil(rate·limit), counted by Slot itself so that the driver, which stops at
// the first slot not before its limit, makes no more.
func PacedChanges(rate float64, limit time.Duration) int {
	n := int(min(math.Ceil(rate*limit.Seconds()), math.MaxInt32))
	for n > 0 && Slot(n-1, rate) >= limit {
		n--
	}
	for n < math.MaxInt32 && Slot(n, rate) < limit {
		n++
	}
	return n
}

// PrefillContent is what a prefill writes in each file, content no change of the plan writes (the
// seed's line without its 100; with file_bytes, dashes, which the changes' letters never are), so
// that the first change to each file always has something to commit.
func (p Plan) PrefillContent() []byte {
	if p.FileBytes == 0 {
		return []byte("{0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9}\n")
	}
	b := make([]byte, p.FileBytes)
	for i := range b {
		b[i] = '-'
	}
	b[len(b)-1] = '\n'
	return b
}
