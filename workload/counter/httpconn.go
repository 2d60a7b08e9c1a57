package counter

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// httpConn is a keep-alive HTTP/1.1 client connection that reuses its buffers, so a request in the
// measuring loop allocates nothing. It speaks just what a load driver needs: a fixed set of
// requests built once, responses framed by Content-Length or chunked encoding, and reconnection
// after Connection: close.
type httpConn struct {
	addr     string
	requests []wireRequest // shared, read-only: built once per run
	conn     net.Conn
	br       *bufio.Reader
	body     []byte
}

// wireRequest is one request as it is sent.
type wireRequest struct {
	bytes []byte
	head  bool // a HEAD request: its answer has no body whatever its headers say
}

// maxBody bounds how much of a response body is kept; the rest is read and discarded.
const maxBody = 64 << 10

var errMalformed = errors.New("malformed HTTP response")

// newHTTPConn is a connection for one request without headers or body.
func newHTTPConn(addr, method, path string) *httpConn {
	return newConn(addr, []wireRequest{Request{Method: method, Path: path}.wire(addr)})
}

func newConn(addr string, requests []wireRequest) *httpConn {
	return &httpConn{addr: addr, requests: requests, body: make([]byte, 0, 512)}
}

// wire builds the request's bytes for host: the request line, Host, User-Agent (persistlab's
// unless the request has its own), the request's headers in order, Content-Length and the body.
func (r Request) wire(host string) wireRequest {
	method := r.method()
	var b bytes.Buffer
	b.Grow(128 + len(r.Path) + len(r.Body))
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, r.Path, host)
	ownAgent := false
	for _, h := range r.Headers {
		ownAgent = ownAgent || strings.EqualFold(h[0], "User-Agent")
	}
	if !ownAgent {
		b.WriteString("User-Agent: persistlab\r\n")
	}
	for _, h := range r.Headers {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(r.Body))
	b.Write(r.Body)
	return wireRequest{bytes: b.Bytes(), head: method == "HEAD"}
}

// do sends the first request and reads the response.
func (c *httpConn) do(deadline time.Time) (status int, body []byte, err error) {
	return c.doRequest(0, deadline)
}

// doRequest sends request i and reads the response. The returned body aliases an internal buffer
// that the next call overwrites.
func (c *httpConn) doRequest(i int, deadline time.Time) (status int, body []byte, err error) {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, time.Until(deadline))
		if err != nil {
			return 0, nil, err
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetNoDelay(true)
		}
		c.conn = conn
		if c.br == nil {
			c.br = bufio.NewReaderSize(conn, 16<<10)
		} else {
			c.br.Reset(conn)
		}
	}
	if err := c.conn.SetDeadline(deadline); err != nil {
		c.close()
		return 0, nil, err
	}
	req := &c.requests[i]
	if _, err := c.conn.Write(req.bytes); err != nil {
		c.close()
		return 0, nil, err
	}
	status, keepAlive, err := c.readResponse(req.head)
	if err != nil {
		c.close()
		return 0, nil, err
	}
	if !keepAlive {
		c.close()
	}
	return status, c.body, nil
}

func (c *httpConn) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

func (c *httpConn) readResponse(head bool) (status int, keepAlive bool, err error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, errMalformed
	}
	status, ok := atoi(line[9:12])
	if !ok {
		return 0, false, errMalformed
	}
	keepAlive = line[7] == '1'
	contentLength, chunked := -1, false
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		if len(line) <= 2 { // blank line ends the header
			break
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			return 0, false, errMalformed
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "content-length"):
			if contentLength, ok = atoi(value); !ok {
				return 0, false, errMalformed
			}
		case asciiEqualFold(name, "transfer-encoding"):
			chunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "connection"):
			if asciiEqualFold(value, "close") {
				keepAlive = false
			} else if asciiEqualFold(value, "keep-alive") {
				keepAlive = true
			}
		}
	}
	c.body = c.body[:0]
	switch {
	case head: // the headers describe the body a GET would have had
	case chunked:
		err = c.readChunked()
	case contentLength >= 0:
		err = c.readBody(contentLength)
	case status == 204 || status == 304 || status/100 == 1:
	default: // body ends when the server closes the connection
		keepAlive = false
		err = c.readBody(-1)
	}
	return status, keepAlive, err
}

// readBody reads n bytes (or up to EOF for n < 0), keeping the first maxBody of them.
func (c *httpConn) readBody(n int) error {
	for n != 0 {
		want := 4096
		if n > 0 && n < want {
			want = n
		}
		chunk, err := c.br.Peek(want)
		if len(chunk) == 0 && err != nil {
			if n < 0 && err == io.EOF {
				return nil
			}
			return err
		}
		if room := maxBody - len(c.body); room > 0 {
			c.body = append(c.body, chunk[:min(room, len(chunk))]...)
		}
		_, _ = c.br.Discard(len(chunk))
		if n > 0 {
			n -= len(chunk)
		}
	}
	return nil
}

func (c *httpConn) readChunked() error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(line), 16, 64) // chunk headers are short; converting does not escape
		if err != nil || size < 0 {
			return errMalformed
		}
		if size == 0 {
			for { // trailers, then the final blank line
				line, err = c.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		if err := c.readBody(int(size)); err != nil {
			return err
		}
		if _, err := c.br.Discard(2); err != nil { // CRLF after the chunk
			return err
		}
	}
}

func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = n*10 + int(ch-'0')
	}
	return n, true
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}

// countValue extracts N from a body like {"count":N}; ok is false if there is none.
func countValue(body []byte) (int64, bool) { return fieldValue(body, countKey) }

var countKey = []byte(`"count":`)

// FieldValue extracts N from a JSON body holding "field":N, key being `"field":`; ok is false if
// there is none. It allocates nothing: the driver calls it on every answer.
func FieldValue(body, key []byte) (int64, bool) { return fieldValue(body, key) }

func fieldValue(body, key []byte) (int64, bool) {
	i := bytes.Index(body, key)
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(body[i+len(key):], " ")
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, ok := atoi(rest[:end])
	return int64(n), ok
}
