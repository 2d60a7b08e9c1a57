// Package network is the network between an app's instance and a server it reaches (Cloud Run and
// Cloud SQL): a loopback TCP forwarder that holds every byte for half a round trip in each
// direction. It is a delay line, not a queue: bytes sent back to back arrive back to back, one
// round trip after a request left, so a pipelined client pays the round trip once.
package network

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// chunkBytes is what one read carries at most; inFlight the reads a direction holds at once, so a
// direction buffers at most about 1 MiB before its reader waits (TCP's back-pressure), whatever
// the app sends. At a 1 ms round trip that passes 2 GiB/s of full reads, and 128,000 small ones a
// second, far above what this machine's server answers.
const (
	chunkBytes = 16 << 10
	inFlight   = 64
)

// MaxRTT bounds the round trip a link adds: beyond a second it is no longer a region's network.
const MaxRTT = time.Second

// Link forwards connections made to its loopback address to a target, each byte held for half
// the round trip in each direction.
type Link struct {
	ln     net.Listener
	target string
	oneWay time.Duration
	pool   sync.Pool

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen starts a link on a free loopback port to target (host:port, on loopback), adding rtt to
// every round trip.
func Listen(target string, rtt time.Duration) (*Link, error) {
	if rtt < 0 || rtt > MaxRTT {
		return nil, fmt.Errorf("network round trip %v: want 0 to %v", rtt, MaxRTT)
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("network target %q: %w", target, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("network target %q: want a loopback address (the lab's servers bind loopback only)", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &Link{ln: ln, target: target, oneWay: rtt / 2, conns: map[net.Conn]struct{}{}}
	l.pool.New = func() any { return new([chunkBytes]byte) }
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Addr is the link's loopback address, host:port: what the app dials in place of the target.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// RTT is the round trip the link adds.
func (l *Link) RTT() time.Duration { return 2 * l.oneWay }

// Close stops accepting, closes every connection and waits until every forwarder has ended.
// Safe twice.
func (l *Link) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	err := l.ln.Close()
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

// track records c, or closes it and says false when the link is closing.
func (l *Link) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *Link) untrack(c net.Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	c.Close()
}

func (l *Link) accept() {
	defer l.wg.Done()
	for backoff := time.Millisecond; ; {
		client, err := l.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil { // out of descriptors, say: wait and try again, as net/http's server does
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		if !l.track(client) {
			return
		}
		l.wg.Add(1)
		go l.serve(client)
	}
}

// serve joins a client to a new connection to the target, one delay line each way; both
// connections close when both directions have ended or either fails.
func (l *Link) serve(client net.Conn) {
	defer l.wg.Done()
	defer l.untrack(client)
	server, err := net.DialTimeout("tcp", l.target, 10*time.Second)
	if err != nil {
		return // the client sees its connection close, as a refused one would
	}
	if !l.track(server) {
		return
	}
	defer l.untrack(server)
	done := make(chan error, 2)
	go func() { done <- l.pipe(server, client) }()
	go func() { done <- l.pipe(client, server) }()
	if err := <-done; err != nil {
		client.Close() // a failed direction ends the other
		server.Close()
	}
	<-done
}

// chunk is bytes read at one instant, or the end of the stream (n 0, err set).
type chunk struct {
	buf *[chunkBytes]byte
	n   int
	at  time.Time
	err error
}

// pipe copies src to dst, each chunk written a one-way delay after it was read. The end of src
// reaches dst as a half close, after the bytes before it.
func (l *Link) pipe(dst, src net.Conn) error {
	line := make(chan chunk, inFlight)
	go func() {
		for {
			buf := l.pool.Get().(*[chunkBytes]byte)
			n, err := src.Read(buf[:])
			at := time.Now()
			if n > 0 {
				line <- chunk{buf: buf, n: n, at: at}
			} else {
				l.pool.Put(buf)
			}
			if err != nil {
				line <- chunk{at: at, err: err}
				close(line)
				return
			}
		}
	}()
	var failed error
	for c := range line {
		if wait := time.Until(c.at.Add(l.oneWay)); wait > 0 && failed == nil {
			time.Sleep(wait)
		}
		if c.buf == nil {
			if failed == nil && errors.Is(c.err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				return nil
			}
			if failed == nil {
				failed = c.err
			}
			continue
		}
		if failed == nil {
			if _, err := dst.Write(c.buf[:c.n]); err != nil {
				failed = err
				src.Close() // the reader ends, and the line drains
			}
		}
		l.pool.Put(c.buf)
	}
	return failed
}
