package httpload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// httpConn is a keep-alive HTTP/1.1 client connection that reuses its buffers, so a request in the
// measuring loop allocates nothing. It speaks just what a load driver needs: a fixed set of
// requests built once, responses framed by Content-Length or chunked encoding, and reconnection
// after Connection: close. The closed loop's event loop speaks the same through loopConn.
type httpConn struct {
	addr     string
	requests []wireRequest // shared, read-only: built once per run
	conn     net.Conn
	resp     responseReader
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
	return &httpConn{addr: addr, requests: requests}
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
		if c.resp.buf == nil { // made at the first dial: the event loop's users never dial here
			c.resp = newResponseReader()
		}
		c.resp.reset()
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
	if err := c.readResponse(req.head); err != nil {
		c.close()
		return 0, nil, err
	}
	if !c.resp.keepAlive {
		c.close()
	}
	return c.resp.status, c.resp.body, nil
}

// readResponse reads until the response to the request just sent is whole.
func (c *httpConn) readResponse(head bool) error {
	c.resp.start(head)
	for {
		if done, err := c.resp.parse(); done || err != nil {
			return err
		}
		n, err := c.conn.Read(c.resp.space())
		c.resp.filled(n)
		if err == io.EOF {
			return c.resp.closed()
		}
		if err != nil {
			return err
		}
	}
}

func (c *httpConn) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
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
