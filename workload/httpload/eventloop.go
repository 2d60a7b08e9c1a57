package httpload

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The closed loop runs on event loops, as wrk does: each loop owns its share of the virtual
// users' connections as non-blocking sockets outside Go's netpoller and waits for all of them in
// one epoll_wait. A request costs a send and a read: no goroutine parks and wakes, no deadline
// timer is reset, no fd lock is taken. Each loop is one goroutine; there are as many as the
// process may run at once (GOMAXPROCS, which follows the CPUs the driver is pinned to).
//
// A loop never blocks in epoll_wait itself: a goroutine blocked in a system call keeps its P, and
// the runtime's monitor thread then wakes every 20 us to take it (10% of the driver's CPU at
// 60,000 requests/s). The epoll set is itself pollable, so when nothing is ready the loop waits
// on it through Go's netpoller, as a parked goroutine does, and asks the set without waiting.

// loopConn is one virtual user's connection.
type loopConn struct {
	v        *vu
	fd       int // -1: none
	state    connState
	watching uint32 // the epoll events registered for fd (0: not registered)
	req      int
	out      []byte // the request's bytes not yet sent
	t0       time.Time
	deadline time.Time
	resp     responseReader
}

type connState uint8

const (
	connIdle     connState = iota // its next request not started
	connDialing                   // a non-blocking connect in progress
	connSending                   // the request sent in part: the socket's buffer was full
	connReading                   // waiting for the answer
	connFinished                  // its virtual user is done
)

// A loop looks for requests past their timeout every tenth of the timeout, within these bounds:
// a request that times out fails up to that much after its deadline (an answer after the
// deadline fails as soon as it comes, as a connection's deadline would fail it).
const (
	minExpiryCheck = time.Millisecond
	maxExpiryCheck = 50 * time.Millisecond
)

type eventLoop struct {
	epfd     int
	epoll    *os.File // epfd, registered with Go's netpoller
	epollRaw syscall.RawConn
	poll     func(fd uintptr) bool // made once: takes what is ready into events, ready
	ready    int
	pollErr  error
	waitTill time.Time // epoll's read deadline as last set
	sa       unix.Sockaddr
	addr     *net.TCPAddr // for error messages, as net's
	family   int
	requests []wireRequest
	conns    []loopConn
	events   []unix.EpollEvent
	pending  []int // connections to start at the next turn (after a failure)
	starting []int
	running  int // connections not finished
	stopped  *atomic.Bool
	end      time.Time // no request starts after it
	hardEnd  time.Time // requests still in flight are abandoned
	timeout  time.Duration
	expiry   time.Duration // how often requests past their timeout are looked for
}

// runEventLoops runs the closed loop of every virtual user until end, letting requests in
// flight finish until hardEnd.
func runEventLoops(vus []*vu, requests []wireRequest, host string, stopped *atomic.Bool, end, hardEnd time.Time, timeout time.Duration) error {
	addr, err := dialAddress(host, timeout)
	if err != nil {
		return err
	}
	loops := make([]*eventLoop, min(runtime.GOMAXPROCS(0), len(vus)))
	for k := range loops {
		var mine []*vu
		for i := k; i < len(vus); i += len(loops) {
			mine = append(mine, vus[i])
		}
		if loops[k], err = newEventLoop(mine, requests, addr, stopped, end, hardEnd, timeout); err != nil {
			for _, l := range loops[:k] {
				l.epoll.Close()
			}
			return err
		}
	}
	errs := make([]error, len(loops))
	var wg sync.WaitGroup
	for k, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = l.run()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// dialAddress is the address the loops connect to. A name is resolved as net.Dial resolves it,
// by dialling it once: the address that answers (localhost's IPv6 one, say, where only that
// listens); if none answers yet, its first address, whose refusals the loops then count.
func dialAddress(host string, timeout time.Duration) (*net.TCPAddr, error) {
	addr, err := net.ResolveTCPAddr("tcp", host)
	if err != nil || addr.IP == nil {
		return nil, fmt.Errorf("url host %q: %w", host, err)
	}
	if name, _, _ := net.SplitHostPort(host); net.ParseIP(name) == nil {
		if conn, err := net.DialTimeout("tcp", host, min(timeout, 5*time.Second)); err == nil {
			addr = conn.RemoteAddr().(*net.TCPAddr)
			conn.Close()
		}
	}
	return addr, nil
}

func newEventLoop(vus []*vu, requests []wireRequest, addr *net.TCPAddr, stopped *atomic.Bool, end, hardEnd time.Time, timeout time.Duration) (*eventLoop, error) {
	l := &eventLoop{addr: addr, requests: requests, stopped: stopped, end: end, hardEnd: hardEnd, timeout: timeout,
		expiry: min(max(timeout/10, minExpiryCheck), maxExpiryCheck),
		conns:  make([]loopConn, len(vus)), events: make([]unix.EpollEvent, min(len(vus), 1024)), running: len(vus)}
	if ip4 := addr.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], ip4)
		l.sa, l.family = sa, unix.AF_INET
	} else {
		sa := &unix.SockaddrInet6{Port: addr.Port}
		copy(sa.Addr[:], addr.IP.To16())
		l.sa, l.family = sa, unix.AF_INET6
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	l.epfd, l.epoll = epfd, os.NewFile(uintptr(epfd), "epoll")
	if l.epollRaw, err = l.epoll.SyscallConn(); err != nil {
		l.epoll.Close()
		return nil, err
	}
	l.poll = func(fd uintptr) bool {
		n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), 0, 0, 0)
		switch errno {
		case 0:
			l.ready = int(n)
		case unix.EINTR:
			l.ready = 0
		default:
			l.pollErr = os.NewSyscallError("epoll_pwait", errno)
		}
		return l.ready > 0 || l.pollErr != nil // false: wait until the set is readable
	}
	for i, v := range vus {
		l.conns[i] = loopConn{v: v, fd: -1, resp: newResponseReader()}
		l.pending = append(l.pending, i)
	}
	return l, nil
}

func (l *eventLoop) run() error {
	defer l.epoll.Close()
	nextExpiry := time.Now().Add(l.expiry)
	for l.running > 0 {
		l.starting, l.pending = l.pending, l.starting[:0]
		for _, i := range l.starting {
			l.start(i)
		}
		if l.running == 0 {
			break
		}
		now := time.Now()
		if !now.Before(l.hardEnd) {
			l.abandon()
			break
		}
		until := nextExpiry
		if l.hardEnd.Before(until) {
			until = l.hardEnd
		}
		if err := l.wait(len(l.pending) == 0, until); err != nil {
			l.abandon()
			return err
		}
		for _, ev := range l.events[:l.ready] {
			l.handle(int(ev.Fd))
		}
		now = time.Now()
		if !now.Before(nextExpiry) {
			l.expire(now)
			nextExpiry = now.Add(l.expiry)
		}
	}
	return nil
}

// wait takes the events ready now, or, with block, waits for some until the time given.
func (l *eventLoop) wait(block bool, until time.Time) error {
	l.ready, l.pollErr = 0, nil
	if !block {
		l.poll(uintptr(l.epfd))
		return l.pollErr
	}
	if !until.Equal(l.waitTill) {
		if err := l.epoll.SetReadDeadline(until); err != nil {
			return err
		}
		l.waitTill = until
	}
	if err := l.epollRaw.Read(l.poll); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return l.pollErr
}

// start begins connection i's next request, unless its virtual user is done.
func (l *eventLoop) start(i int) {
	c := &l.conns[i]
	c.t0 = time.Now()
	if l.stopped.Load() || !c.t0.Before(l.end) {
		l.finish(c)
		return
	}
	c.req = c.v.picker.pick(splitmix64(&c.v.rng))
	c.deadline = c.t0.Add(l.timeout)
	c.out = l.requests[c.req].bytes
	c.resp.start(l.requests[c.req].head)
	if c.fd < 0 {
		if err := l.dial(c, i); err != nil {
			l.fail(c, i, err)
			return
		}
		if c.state == connDialing {
			return
		}
	}
	l.send(c, i)
}

func (l *eventLoop) dial(c *loopConn, i int) error {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return l.opError("dial", os.NewSyscallError("socket", err))
	}
	c.fd = fd
	c.resp.reset()
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	switch err := unix.Connect(fd, l.sa); err {
	case nil:
		return l.watch(c, i, unix.EPOLLIN|unix.EPOLLRDHUP)
	case unix.EINPROGRESS:
		c.state = connDialing
		return l.watch(c, i, unix.EPOLLOUT)
	default:
		return l.opError("dial", os.NewSyscallError("connect", err))
	}
}

// connected completes a non-blocking connect.
func (l *eventLoop) connected(c *loopConn, i int) {
	if errno, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || errno != 0 {
		if err == nil {
			err = unix.Errno(errno)
		}
		l.fail(c, i, l.opError("dial", os.NewSyscallError("connect", err)))
		return
	}
	l.send(c, i)
}

// send writes what is left of the request; a full socket buffer waits for EPOLLOUT.
func (l *eventLoop) send(c *loopConn, i int) {
	for len(c.out) > 0 {
		n, err := sendNoSignal(c.fd, c.out)
		switch err {
		case nil:
			c.out = c.out[n:]
		case unix.EINTR:
		case unix.EAGAIN:
			c.state = connSending
			if err := l.watch(c, i, unix.EPOLLOUT); err != nil {
				l.fail(c, i, err)
			}
			return
		default:
			l.fail(c, i, l.opError("write", os.NewSyscallError("write", err)))
			return
		}
	}
	c.state = connReading
	if err := l.watch(c, i, unix.EPOLLIN|unix.EPOLLRDHUP); err != nil {
		l.fail(c, i, err)
	}
}

// handle takes connection i's event: what it means follows from the connection's state (an
// error or a hang-up shows in the call that state makes).
func (l *eventLoop) handle(i int) {
	c := &l.conns[i]
	switch c.state {
	case connDialing:
		l.connected(c, i)
	case connSending:
		l.send(c, i)
	case connReading:
		l.receive(c, i)
	}
}

// receive reads what has arrived and answers once the response is whole.
func (l *eventLoop) receive(c *loopConn, i int) {
	n, err := readRaw(c.fd, c.resp.space())
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		l.fail(c, i, l.opError("read", os.NewSyscallError("read", err)))
		return
	case n == 0:
		if err := c.resp.closed(); err != nil {
			l.fail(c, i, err)
			return
		}
	default:
		c.resp.filled(n)
		done, err := c.resp.parse()
		if err != nil {
			l.fail(c, i, err)
			return
		}
		if !done {
			return
		}
	}
	done := time.Now()
	if done.After(c.deadline) {
		l.fail(c, i, l.timeoutError(c))
		return
	}
	c.v.answer(c.req, c.resp.status, c.resp.body, done.Sub(c.t0), done)
	if !c.resp.keepAlive {
		l.close(c)
	}
	c.state = connIdle
	l.start(i)
}

// expire fails the requests past their timeout.
func (l *eventLoop) expire(now time.Time) {
	for i := range l.conns {
		c := &l.conns[i]
		if (c.state == connDialing || c.state == connSending || c.state == connReading) && now.After(c.deadline) {
			l.fail(c, i, l.timeoutError(c))
		}
	}
}

// timeoutError says a request ran out of time, in what it was doing, as net's errors say it.
func (l *eventLoop) timeoutError(c *loopConn) error {
	switch c.state {
	case connDialing:
		return l.opError("dial", os.ErrDeadlineExceeded)
	case connSending:
		return l.opError("write", os.ErrDeadlineExceeded)
	}
	return l.opError("read", os.ErrDeadlineExceeded)
}

// fail counts a transport error (unless the run is stopping) and starts over on a new connection
// at the next turn, as the goroutine loop's next iteration would.
func (l *eventLoop) fail(c *loopConn, i int, err error) {
	if !l.stopped.Load() {
		c.v.fail(c.req, err)
	}
	l.close(c)
	c.state = connIdle
	l.pending = append(l.pending, i)
}

func (l *eventLoop) finish(c *loopConn) {
	l.close(c)
	c.state = connFinished
	l.running--
}

// abandon closes every connection at the hard end: answers still due are not counted.
func (l *eventLoop) abandon() {
	for i := range l.conns {
		if c := &l.conns[i]; c.state != connFinished {
			l.finish(c)
		}
	}
	l.pending = l.pending[:0]
}

func (l *eventLoop) close(c *loopConn) {
	if c.fd >= 0 {
		_ = unix.Close(c.fd) // leaves the epoll set with it
		c.fd, c.watching = -1, 0
	}
}

// watch sets the events epoll reports for c's socket.
func (l *eventLoop) watch(c *loopConn, i int, events uint32) error {
	if c.watching == events {
		return nil
	}
	op := unix.EPOLL_CTL_MOD
	if c.watching == 0 {
		op = unix.EPOLL_CTL_ADD
	}
	if err := unix.EpollCtl(l.epfd, op, c.fd, &unix.EpollEvent{Events: events, Fd: int32(i)}); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	c.watching = events
	return nil
}

func (l *eventLoop) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Addr: l.addr, Err: err}
}

// sendNoSignal writes to a non-blocking socket without SIGPIPE. It never blocks, so it skips the
// scheduler's bookkeeping for a syscall that may.
func sendNoSignal(fd int, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), unix.MSG_NOSIGNAL, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// readRaw reads from a non-blocking socket (it never blocks either).
func readRaw(fd int, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
