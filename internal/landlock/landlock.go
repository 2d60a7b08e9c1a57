// Package landlock starts a program whose TCP connections the kernel confines to given ports
// (Linux's Landlock, ABI 4 and later: Linux 6.7), without privileges and without confining
// persistlab itself.
//
// The program is started through persistlab's own executable, which confines itself and then
// becomes the program (execve): confining one of persistlab's threads instead would mean ending
// that thread afterwards, and a thread's end sends the parent-death signal to every child it
// ever started (the app's, gcsfuse's), not only to the confined one.
package landlock

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
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

// launcherArg, as an executable's first argument, makes it the launcher: it confines itself to
// the ports of its second argument and executes the program its third names, with the rest as
// that program's argv.
const launcherArg = "__persistlab_landlock_exec"

func init() {
	if len(os.Args) >= 5 && os.Args[1] == launcherArg {
		os.Exit(launch(os.Args[2], os.Args[3], os.Args[4:]))
	}
}

// launch confines this process's thread and executes program with argv; it returns only on
// failure, with the exit status to end with.
func launch(portList, program string, argv []string) int {
	runtime.LockOSThread() // Landlock confines the calling thread, which execve then carries over
	var ports []int
	for _, f := range strings.Split(portList, ",") {
		p, err := strconv.Atoi(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "persistlab: confined start of %s: port %q: %v\n", program, f, err)
			return 127
		}
		ports = append(ports, p)
	}
	err := confineThread(ports)
	if err == nil {
		err = unix.Exec(program, argv, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "persistlab: confined start of %s: %v\n", program, err)
	return 127
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

// Confine makes cmd, not yet started, start confined to connecting over TCP to ports only
// (anything else fails with EACCES), it and everything it starts; it is started and waited for
// as before, and keeps its pid, environment and attributes (a parent-death signal among them).
// The executable running must be a Go program that links this package (persistlab, or a test).
func Confine(cmd *exec.Cmd, ports ...int) error {
	if err := Supported(); err != nil {
		return err
	}
	if cmd.Process != nil || cmd.Err != nil {
		return errors.New("landlock: a command started, or not found")
	}
	if len(ports) == 0 {
		return errors.New("landlock: no port to allow")
	}
	list := make([]string, len(ports))
	for i, p := range ports {
		if p < 1 || p > 65535 {
			return fmt.Errorf("landlock: port %d: want 1 to 65535", p)
		}
		list[i] = strconv.Itoa(p)
	}
	// /proc/self/exe is, in the child, the executable it was forked from: this one, even if
	// its file was replaced since.
	cmd.Args = append([]string{"persistlab-confined", launcherArg, strings.Join(list, ","), cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	return nil
}

// confineThread confines the calling thread (Landlock rules a thread, and what it starts or
// executes) to TCP connections to ports.
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
	// Required to confine oneself without CAP_SYS_ADMIN.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restrict: %w", errno)
	}
	return nil
}
