package httpapp

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listenerInode is the socket inode of the loopback listener on port, from /proc/net/tcp and
// tcp6; 0 if nothing listens there.
func listenerInode(port int) uint64 {
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
				f.Close()
				return inode
			}
		}
		f.Close()
	}
	return 0
}

// checkListenerIsTheApp refuses a port answered by a program that is not the app: one that took
// the port persistlab picked before the app bound it, or the app having handed it to a process
// outside its own process group. Load goes only to what persistlab started.
func checkListenerIsTheApp(port, pgid int) error {
	inode := listenerInode(port)
	if inode == 0 {
		return fmt.Errorf("nothing listens on port %d although it answered: want the app listening there", port)
	}
	socket := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	holders, members := holdersOf(socket, pgid)
	if members > 0 {
		return nil
	}
	who := "a process persistlab cannot see"
	if len(holders) > 0 {
		who = "process " + strings.Join(holders, ", ")
	}
	return fmt.Errorf("port %d is answered by %s, not by the app (process group %d): another program took the port, or the app's server left its process group; persistlab loads only the app it started", port, who, pgid)
}

// holdersOf lists the processes holding socket open ("pid (name)"), and how many of them are in
// process group pgid.
func holdersOf(socket string, pgid int) (holders []string, members int) {
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
			pid := filepath.Base(dir)
			name, group := statOf(dir)
			holders = append(holders, fmt.Sprintf("%s (%s)", pid, name))
			if group == pgid {
				members++
			}
			break
		}
	}
	return holders, members
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
