package httpload

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// responseReader parses HTTP/1.x responses from the bytes a connection has read, as they arrive:
// the blocking connection (httpConn) feeds it after each read, the event loop after each readable
// event, so both speak HTTP through the same code. It allocates nothing once its buffers exist.
type responseReader struct {
	buf  []byte // bytes read and not yet parsed are buf[r:w]
	r, w int
	responseParser
}

// readBufferSize is a connection's buffer; it grows (to maxHeaderBytes) only for a response
// header longer than that.
const (
	readBufferSize = 16 << 10
	maxHeaderBytes = 1 << 20
)

var errHeaderTooLarge = errors.New("malformed HTTP response: header over 1 MiB")

func newResponseReader() responseReader {
	return responseReader{buf: make([]byte, readBufferSize), responseParser: responseParser{body: make([]byte, 0, 512)}}
}

// reset forgets what a previous connection left unread.
func (rr *responseReader) reset() { rr.r, rr.w = 0, 0 }

// space is where the next read goes, with the unparsed bytes moved to the front first when the
// buffer's end is reached.
func (rr *responseReader) space() []byte {
	if rr.w == len(rr.buf) && rr.r > 0 {
		rr.w = copy(rr.buf, rr.buf[rr.r:rr.w])
		rr.r = 0
	}
	if rr.w == len(rr.buf) && len(rr.buf) < maxHeaderBytes { // a header longer than the buffer
		rr.buf = append(rr.buf, make([]byte, len(rr.buf))...)
	}
	return rr.buf[rr.w:]
}

// filled records n bytes read into space().
func (rr *responseReader) filled(n int) { rr.w += n }

// parse takes what it can of the unparsed bytes; done says the response is complete.
func (rr *responseReader) parse() (done bool, err error) {
	used, done, err := rr.feed(rr.buf[rr.r:rr.w])
	rr.r += used
	if rr.r == rr.w {
		rr.r, rr.w = 0, 0
	}
	if !done && err == nil && rr.r == 0 && rr.w >= maxHeaderBytes {
		return false, errHeaderTooLarge // a header (or a chunk's size line) fills the largest buffer
	}
	return done, err
}

// closed is the end of the connection: it completes a response framed by the close, and cuts any
// other short.
func (rr *responseReader) closed() error {
	if done, err := rr.parse(); done || err != nil {
		return err
	}
	switch {
	case rr.phase == phaseUntilClose:
		rr.phase = phaseDone
		return nil
	case rr.phase == phaseHeader && rr.r == rr.w:
		return io.EOF // hung up before answering
	}
	return io.ErrUnexpectedEOF
}

// responseParser is one response's state, fed bytes in order.
type responseParser struct {
	headRequest bool // the request was HEAD: no body whatever the headers say
	phase       phase
	status      int
	keepAlive   bool
	remaining   int64  // body or chunk bytes still to come
	body        []byte // the first maxBody bytes of the body
}

type phase uint8

const (
	phaseHeader     phase = iota
	phaseBody             // remaining bytes, then done
	phaseUntilClose       // the body ends when the server closes the connection
	phaseChunkSize
	phaseChunkData
	phaseChunkEnd // the CRLF after a chunk's data
	phaseTrailer
	phaseDone
)

// start readies the parser for the answer to a request.
func (p *responseParser) start(headRequest bool) {
	*p = responseParser{headRequest: headRequest, body: p.body[:0]}
}

// feed parses what it can of b, returning how many bytes it used; done says the response is
// complete (the bytes after it belong to the next one).
func (p *responseParser) feed(b []byte) (used int, done bool, err error) {
	for {
		rest := b[used:]
		switch p.phase {
		case phaseDone:
			return used, true, nil
		case phaseHeader:
			n, err := p.header(rest)
			if n == 0 || err != nil {
				return used, false, err
			}
			used += n
		case phaseBody, phaseChunkData:
			n := int(min(int64(len(rest)), p.remaining))
			p.keep(rest[:n])
			used += n
			p.remaining -= int64(n)
			if p.remaining > 0 {
				return used, false, nil
			}
			if p.phase == phaseBody {
				p.phase = phaseDone
			} else {
				p.phase = phaseChunkEnd
			}
		case phaseUntilClose:
			p.keep(rest)
			return len(b), false, nil
		case phaseChunkEnd:
			if len(rest) < 2 {
				return used, false, nil
			}
			used += 2
			p.phase = phaseChunkSize
		case phaseChunkSize:
			line, n := nextLine(rest)
			if n == 0 {
				return used, false, nil
			}
			used += n
			line = bytes.TrimSpace(line)
			if i := bytes.IndexByte(line, ';'); i >= 0 {
				line = line[:i]
			}
			size, err := strconv.ParseInt(string(line), 16, 64) // chunk headers are short; converting does not escape
			if err != nil || size < 0 {
				return used, false, errMalformed
			}
			if size == 0 {
				p.phase = phaseTrailer
			} else {
				p.phase, p.remaining = phaseChunkData, size
			}
		case phaseTrailer: // trailers, then the final blank line
			line, n := nextLine(rest)
			if n == 0 {
				return used, false, nil
			}
			used += n
			if len(line) <= 2 {
				p.phase = phaseDone
			}
		}
	}
}

// header parses the status line and headers once the blank line that ends them is in b; n is 0
// until then.
func (p *responseParser) header(b []byte) (n int, err error) {
	end := 0
	for {
		line, k := nextLine(b[end:])
		if k == 0 {
			return 0, nil
		}
		end += k
		if len(line) <= 2 && end > k { // the blank line after the status line and headers
			break
		}
	}
	line, k := nextLine(b)
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, errMalformed
	}
	status, ok := atoi(line[9:12])
	if !ok {
		return 0, errMalformed
	}
	p.status, p.keepAlive = status, line[7] == '1'
	contentLength, chunked := -1, false
	for pos := k; pos < end; pos += k {
		line, k = nextLine(b[pos:end])
		if len(line) <= 2 {
			break
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			return 0, errMalformed
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "content-length"):
			if contentLength, ok = atoi(value); !ok {
				return 0, errMalformed
			}
		case asciiEqualFold(name, "transfer-encoding"):
			chunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "connection"):
			if asciiEqualFold(value, "close") {
				p.keepAlive = false
			} else if asciiEqualFold(value, "keep-alive") {
				p.keepAlive = true
			}
		}
	}
	switch {
	case status/100 == 1 && status != 101: // informational (100 Continue, 103 Early Hints): the answer follows
		p.status, p.keepAlive = 0, false
	case p.headRequest: // the headers describe the body a GET would have had
		p.phase = phaseDone
	case chunked:
		p.phase = phaseChunkSize
	case contentLength > 0:
		p.phase, p.remaining = phaseBody, int64(contentLength)
	case contentLength == 0, status == 204 || status == 304 || status == 101:
		p.phase = phaseDone
	default: // the body ends when the server closes the connection
		p.phase, p.keepAlive = phaseUntilClose, false
	}
	return end, nil
}

// keep appends what fits of a body's bytes.
func (p *responseParser) keep(b []byte) {
	if room := maxBody - len(p.body); room > 0 {
		p.body = append(p.body, b[:min(room, len(b))]...)
	}
}

// nextLine is b's first line with its '\n', and its length; 0 when b holds no whole line.
func nextLine(b []byte) (line []byte, n int) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, 0
	}
	return b[:i+1], i + 1
}
