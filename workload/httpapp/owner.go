package httpapp

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listener is a listening socket from /proc/net/tcp or tcp6.
type listener struct {
	table, addr string // addr in the table's hex form
	inode       uint64
}

// listeners are the sockets listening on port (several with SO_REUSEPORT); none if nothing
// listens there.
func listeners(port int) []listener {
	var out []listener
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			addr, portHex, ok := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseUint(portHex, 16, 16); !ok || err != nil || int(p) != port {
				continue
			}
			inode, _ := strconv.ParseUint(fields[9], 10, 64)
			out = append(out, listener{table: table, addr: addr, inode: inode})
		}
		f.Close()
	}
	return out
}

// listenerOf says whether anything listens on port, and refuses a listener that is not wholly
// the app's on loopback: one bound off loopback (0.0.0.0, ::, an outside address: persistlab's
// servers and the apps it starts are reachable from this machine alone), or one held by a process
// outside the app's process group (another program took the port persistlab picked, or the app
// handed it to a process the group's stop would not reach). Load, and the readiness probe, go
// only to what persistlab started.
func listenerOf(port, pgid int) (listening bool, err error) {
	ls := listeners(port)
	for _, l := range ls {
		if !loopbackHex(l.addr) {
			return true, fmt.Errorf("the app listens on port %d off loopback (%s): bind it to %s (the %s placeholder)", port, l.table, host, HostPlaceholder)
		}
		holders, outsiders := holdersOf("socket:["+strconv.FormatUint(l.inode, 10)+"]", pgid)
		if l.inode == 0 || len(holders) == 0 || len(outsiders) > 0 {
			who := "a process persistlab cannot see"
			if len(outsiders) > 0 {
				who = "process " + strings.Join(outsiders, ", ")
			}
			return true, fmt.Errorf("port %d is held by %s, not by the app alone (process group %d): another program took the port, or the app's server left its process group; persistlab loads only the app it started", port, who, pgid)
		}
	}
	return len(ls) > 0, nil
}

// loopbackHex says whether /proc/net/tcp's hex address is a loopback one: 127.x.x.x (stored
// little-endian, so its last byte is 7F), ::1, or ::ffff:127.x.x.x.
func loopbackHex(addr string) bool {
	switch len(addr) {
	case 8:
		return strings.HasSuffix(addr, "7F")
	case 32:
		return addr == "00000000000000000000000001000000" || (strings.HasPrefix(addr, "0000000000000000FFFF0000") && strings.HasSuffix(addr, "7F"))
	}
	return false
}

// holdersOf lists the processes holding socket open ("pid (name)"), and those of them outside
// process group pgid.
func holdersOf(socket string, pgid int) (holders, outsiders []string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range procs {
		fds, err := os.ReadDir(filepath.Join(dir, "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err != nil || link != socket {
				continue
			}
			name, group := statOf(dir)
			holder := fmt.Sprintf("%s (%s)", filepath.Base(dir), name)
			holders = append(holders, holder)
			if group != pgid {
				outsiders = append(outsiders, holder)
			}
			break
		}
	}
	return holders, outsiders
}

// statOf reads a process's name and process group from /proc/PID/stat.
func statOf(dir string) (name string, pgid int) {
	data, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return "?", 0
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "?", 0
	}
	fields := strings.Fields(s[end+1:]) // state, ppid, pgrp, ...
	if len(fields) > 2 {
		pgid, _ = strconv.Atoi(fields[2])
	}
	return s[open+1 : end], pgid
}
