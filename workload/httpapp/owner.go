package httpapp

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listenerInodes are the socket inodes of the listeners on port, from /proc/net/tcp and tcp6
// (several with SO_REUSEPORT); none if nothing listens there.
func listenerInodes(port int) []uint64 {
	var out []uint64
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
			_, portHex, ok := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseUint(portHex, 16, 16); !ok || err != nil || int(p) != port {
				continue
			}
			if inode, err := strconv.ParseUint(fields[9], 10, 64); err == nil && inode != 0 {
				out = append(out, inode)
			}
		}
		f.Close()
	}
	return out
}

// listenerOf says whether anything listens on port, and refuses a listener that is not wholly
// the app's: one held by a process outside the app's process group (another program took the
// port persistlab picked, or the app handed it to a process the group's stop would not reach).
// Load, and the readiness probe, go only to what persistlab started.
func listenerOf(port, pgid int) (listening bool, err error) {
	inodes := listenerInodes(port)
	for _, inode := range inodes {
		holders, outsiders := holdersOf("socket:["+strconv.FormatUint(inode, 10)+"]", pgid)
		if len(holders) == 0 || len(outsiders) > 0 {
			who := "a process persistlab cannot see"
			if len(outsiders) > 0 {
				who = "process " + strings.Join(outsiders, ", ")
			}
			return true, fmt.Errorf("port %d is held by %s, not by the app alone (process group %d): another program took the port, or the app's server left its process group; persistlab loads only the app it started", port, who, pgid)
		}
	}
	return len(inodes) > 0, nil
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
