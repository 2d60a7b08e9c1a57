package network

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echoServer answers on loopback with every byte it receives, then half-closes when its client
// does.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
				c.(*net.TCPConn).CloseWrite()
			}()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, l *Link) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// A request's answer comes back no sooner than the link's round trip; requests sent back to back
// pay it about once, not once each (a delay line, not a queue).
func TestARoundTripTakesAtLeastTheLinksAndPipelinedOnesShareIt(t *testing.T) {
	const rtt = 40 * time.Millisecond
	l, err := Listen(echoServer(t), rtt)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := dial(t, l)
	buf := make([]byte, 1)
	for i := range 3 {
		start := time.Now()
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil || buf[0] != byte(i) {
			t.Fatalf("echo %d: %v %v", i, buf, err)
		}
		if took := time.Since(start); took < rtt {
			t.Errorf("round trip %d took %v, less than the link's %v", i, took, rtt)
		}
	}
	const n = 10
	start := time.Now()
	for i := range n {
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < rtt || took > 5*rtt {
		t.Errorf("%d requests sent back to back answered in %v: want one round trip of %v and the sending, not %d of them", n, took, rtt, n)
	}
	for i, b := range got {
		if b != byte(i) {
			t.Fatalf("answers out of order: %v", got)
		}
	}
}

// Every byte arrives, in order, when far more than the link holds in flight goes through it at
// once, and the end of the client's stream reaches the server as a half close after its bytes.
func TestEveryByteArrivesInOrderAndTheEndFollows(t *testing.T) {
	l, err := Listen(echoServer(t), 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := dial(t, l)
	data := make([]byte, 8*inFlight*chunkBytes)
	rand.Read(data)
	go func() {
		c.Write(data)
		c.CloseWrite()
	}()
	got, err := io.ReadAll(c) // to the server's half close, which follows the client's
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(data) || sha256.Sum256(got) != sha256.Sum256(data) {
		t.Errorf("%d bytes back of %d, equal %v", len(got), len(data), bytes.Equal(got, data))
	}
}

// Close ends the link's connections, so a client waiting on one sees it end, and Close returns
// only when every forwarder has.
func TestCloseEndsEveryConnection(t *testing.T) {
	l, err := Listen(echoServer(t), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, l)
	c.Write([]byte("x"))
	buf := make([]byte, 1)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a connection open")
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(buf); err == nil {
		t.Error("the client's connection is still open after Close")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("the client's connection did not end after Close")
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close twice: %v", err)
	}
	if _, err := net.DialTimeout("tcp", l.Addr(), time.Second); err == nil {
		t.Error("the link still accepts after Close")
	}
}

// A link goes to loopback only, and adds a round trip within its bound.
func TestBadLinksAreRefused(t *testing.T) {
	for _, tc := range []struct {
		target string
		rtt    time.Duration
		want   string
	}{
		{"10.0.0.5:3306", time.Millisecond, "loopback"},
		{"db.example:3306", time.Millisecond, "loopback"},
		{"127.0.0.1", time.Millisecond, "127.0.0.1"},
		{"127.0.0.1:3306", -time.Millisecond, "round trip"},
		{"127.0.0.1:3306", 2 * time.Second, "round trip"},
	} {
		l, err := Listen(tc.target, tc.rtt)
		if err == nil {
			l.Close()
			t.Errorf("%s with %v: accepted", tc.target, tc.rtt)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %v: %v, want it to name %q", tc.target, tc.rtt, err, tc.want)
		}
	}
}
