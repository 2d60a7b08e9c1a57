// Package landlock starts a child whose TCP connections the kernel confines to given ports
// (Linux's Landlock, ABI 4 and later: Linux 6.7), without privileges, and without confining
// persistlab itself.
package landlock

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// netABI is the first Landlock ABI that rules TCP connections.
const netABI = 4

// ruleNetPort is LANDLOCK_RULE_NET_PORT (x/sys has the access rights, not this rule type).
const ruleNetPort = 2

// rulesetAttr is struct landlock_ruleset_attr as ABI 4 knows it; later kernels take it whole.
type rulesetAttr struct {
	handledAccessFS, handledAccessNet uint64
}

// netPortAttr is struct landlock_net_port_attr.
type netPortAttr struct {
	allowedAccess, port uint64
}

// Supported says why this kernel cannot confine TCP connections, or nil if it can.
func Supported() error {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno != 0:
		return fmt.Errorf("this kernel has no Landlock enabled (%v)", errno)
	case abi < netABI:
		return fmt.Errorf("this kernel's Landlock (ABI %d) cannot rule TCP connections (ABI %d, Linux 6.7, can)", abi, netABI)
	}
	return nil
}

// Start starts cmd able to connect over TCP only to ports (anything else fails with EACCES), and
// returns the function that waits for it in place of cmd.Wait. The confinement is the kernel's:
// cmd and everything it starts inherit it. cmd is started from an OS thread of its own, confined
// first and never given back; the thread waits for cmd, as a parent-death signal
// (SysProcAttr.Pdeathsig) fires when the thread that started the child ends.
func Start(cmd *exec.Cmd, ports ...int) (wait func() error, err error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	if len(ports) == 0 {
		return nil, errors.New("landlock: no port to allow")
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("landlock: port %d: want 1 to 65535", p)
		}
	}
	started, exited := make(chan error, 1), make(chan error, 1)
	go func() {
		// Never unlocked: the confined thread ends with this goroutine instead of serving others.
		runtime.LockOSThread()
		if err := confineThread(ports); err != nil {
			started <- err
			return
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return func() error { return <-exited }, nil
}

// confineThread confines the calling thread (Landlock rules a thread, and what it starts) to
// TCP connections to ports.
func confineThread(ports []int) error {
	attr := rulesetAttr{handledAccessNet: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, p := range ports {
		rule := netPortAttr{allowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(p)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, ruleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("landlock: allow port %d: %w", p, errno)
		}
	}
	// Required to confine oneself without CAP_SYS_ADMIN; it holds for this thread alone.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restrict: %w", errno)
	}
	return nil
}
