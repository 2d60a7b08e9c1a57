package proc

import (
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"
)

// TailWriter keeps the last bytes written to it in a ring of a size fixed when it is made: a
// child may print without end, and only the end of what it printed is ever shown.
type TailWriter struct {
	mu      sync.Mutex
	ring    []byte
	next    int // where the next byte goes, once the ring is full
	written int64
}

// NewTailWriter keeps the last size bytes (at least 1).
func NewTailWriter(size int) *TailWriter {
	return &TailWriter{ring: make([]byte, 0, max(size, 1))}
}

// Write keeps the end of p; it never fails, so a child writing to it is never stopped.
func (t *TailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.written += int64(n)
	if room := cap(t.ring) - len(t.ring); room > 0 { // filling: no byte dropped yet
		k := min(room, len(p))
		t.ring, p = append(t.ring, p[:k]...), p[k:]
	}
	if len(p) >= len(t.ring) {
		copy(t.ring, p[len(p)-len(t.ring):])
		t.next = 0
		return n, nil
	}
	k := copy(t.ring[t.next:], p)
	copy(t.ring, p[k:])
	t.next = (t.next + len(p)) % len(t.ring)
	return n, nil
}

// Bytes is a copy of what the ring holds, oldest first.
func (t *TailWriter) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]byte, 0, len(t.ring))
	return append(append(out, t.ring[t.next:]...), t.ring[:t.next]...)
}

// Written is how many bytes were written in all.
func (t *TailWriter) Written() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written
}

// Size is the most the ring holds.
func (t *TailWriter) Size() int { return cap(t.ring) }

// Tail is the end of what was written as Tail shows a command's output; a first line the ring cut
// is left out (or, if it is the only one, marked with "...").
func (t *TailWriter) Tail(lines int) string {
	held := t.Bytes()
	return tail(string(held), lines, t.Written() > int64(len(held)))
}

// LimitedBuffer holds the first bytes written to it, up to a limit fixed when it is made; what
// comes after is counted and dropped, never held. Write never fails, so a child writing to it is
// drained to its end; Err says whether everything fit.
type LimitedBuffer struct {
	mu      sync.Mutex
	what    string
	limit   int
	buf     []byte
	dropped int64
}

// NewLimitedBuffer holds up to limit bytes of what names (a command, "fio's JSON").
func NewLimitedBuffer(what string, limit int) *LimitedBuffer {
	return &LimitedBuffer{what: what, limit: max(limit, 0)}
}

func (b *LimitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := min(b.limit-len(b.buf), len(p))
	if need := len(b.buf) + k; need > cap(b.buf) {
		// Doubling, never past the limit: at most twice the limit is ever allocated.
		grown := make([]byte, len(b.buf), min(max(2*cap(b.buf), need, 512), b.limit))
		copy(grown, b.buf)
		b.buf = grown
	}
	b.buf = append(b.buf, p[:k]...)
	b.dropped += int64(len(p) - k)
	return len(p), nil
}

// Bytes is what the buffer holds: everything written, if Err is nil.
func (b *LimitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf
}

// String is Bytes as text.
func (b *LimitedBuffer) String() string { return string(b.Bytes()) }

// Reset empties the buffer for another command's output.
func (b *LimitedBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf, b.dropped = b.buf[:0], 0
}

// Err is a *TooLongError if more was written than the buffer holds, else nil.
func (b *LimitedBuffer) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return nil
	}
	return &TooLongError{What: b.what, Limit: b.limit, Size: int64(len(b.buf)) + b.dropped}
}

// TooLongError is output that did not fit the buffer persistlab reads it into.
type TooLongError struct {
	What  string
	Limit int
	Size  int64 // how much there was
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("the output of %s is %d bytes, more than the %d persistlab reads", e.What, e.Size, e.Limit)
}

// tailBytes is how much of a command's output is kept for its error: twice what Tail shows, so
// that a first line the cut leaves partial can be dropped and whitespace trimmed.
const tailBytes = 2 * MaxOutputBytes

// fileTail is the end of the file at path from offset from on, as Tail shows it: at most
// tailBytes are read, whatever the file's size.
func fileTail(path string, from int64, lines int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	start := max(from, st.Size()-tailBytes)
	buf := make([]byte, min(max(st.Size()-start, 0), tailBytes))
	n, err := f.ReadAt(buf, start)
	if err != nil && err != io.EOF {
		return "", err
	}
	return tail(string(buf[:n]), lines, start > from), nil
}

// runeStart is the first index of s from i on that starts a character (len(s) if none).
func runeStart(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
