package main

import (
	"fmt"
	"io"
)

// terminalSafe writes to w with control characters (other than newline and tab) shown as \xNN:
// names and values from a results file or a scenario must never drive the user's terminal.
func terminalSafe(w io.Writer) io.Writer { return &escaper{w: w} }

type escaper struct {
	w   io.Writer
	buf []byte
}

func (e *escaper) Write(p []byte) (int, error) {
	e.buf = e.buf[:0]
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\n' || c == '\t':
			e.buf = append(e.buf, c)
		case c < 0x20 || c == 0x7f:
			e.buf = fmt.Appendf(e.buf, `\x%02x`, c)
		case c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f: // C1 controls, U+0080..U+009F
			e.buf = fmt.Appendf(e.buf, `\u%04x`, p[i+1])
			i++
		default:
			e.buf = append(e.buf, c)
		}
	}
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
