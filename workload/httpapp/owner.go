package httpapp

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"persistlab/lib/readfile"
)

// socket is a listening TCP socket as a network namespace's /proc/PID/net/tcp or tcp6 lists it.
type socket struct {
	table string // tcp or tcp6
	addr  netip.AddrPort
	inode uint64
}

// Bounds of what is read of a network namespace's tables, which list every connection too.
const (
	maxTableBytes = 256 << 20
	maxListening  = 1 << 16
)

// listening reads the listening TCP sockets of the network namespace process pid is in ("self":
// persistlab's own).
func listening(pid string) ([]socket, error) {
	var out []socket
	for _, table := range []string{"tcp", "tcp6"} {
		path := filepath.Join("/proc", pid, "net", table)
		f, err := readfile.Open(path, maxTableBytes)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6 here, or the process is gone
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			addr, ok := parseAddr(fields[1])
			inode, err := strconv.ParseUint(fields[9], 10, 64)
			if !ok || err != nil {
				continue
			}
			if len(out) >= maxListening {
				f.Close()
				return nil, fmt.Errorf("%s: more than %d listening sockets", path, maxListening)
			}
			out = append(out, socket{table: table, addr: addr, inode: inode})
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, nil
}

// parseAddr reads a /proc/net/tcp address, "0100007F:1F90": the address as the kernel holds it
// (network byte order) printed as 32-bit words of this machine's order, then the port.
func parseAddr(s string) (netip.AddrPort, bool) {
	addrHex, portHex, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(portHex, 16, 16)
	raw, hexErr := hex.DecodeString(addrHex)
	if !ok || err != nil || hexErr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(raw); i += 4 { // each word back to the bytes it was printed from
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr, uint16(port)), true
}

// loopback says whether a socket bound to addr is reachable from this machine alone: 127.x.x.x,
// ::1, or ::ffff:127.x.x.x.
func loopback(addr netip.Addr) bool { return addr.Unmap().IsLoopback() }

// checkSockets refuses, for the app whose processes processes lists: any listening socket of
// theirs bound off loopback (0.0.0.0, ::, an outside address: the apps persistlab starts are
// reachable from this machine alone), on whatever port; and a listener on port that none of them
// holds (another program took the port persistlab picked: load and the readiness probe go only
// to what persistlab started). It says whether anything listens on port yet.
func checkSockets(port int, processes func() []int) (bool, error) {
	listens, err := checkSocketsOnce(port, processes())
	if _, outside := err.(*outsiderError); outside {
		// Once more: a process the app forked after its processes were listed may hold the port.
		listens, err = checkSocketsOnce(port, processes())
	}
	return listens, err
}

// outsiderError is a listener on the app's port that none of its processes holds.
type outsiderError struct {
	port    int
	holders []string
}

func (e *outsiderError) Error() string {
	who := "a process persistlab cannot see"
	if len(e.holders) > 0 {
		who = "process " + strings.Join(e.holders, ", ")
	}
	return fmt.Sprintf("port %d is held by %s, not by the app (a process it started): another program took the port; persistlab loads only the app it started", e.port, who)
}

func checkSocketsOnce(port int, pids []int) (bool, error) {
	own, err := listening("self")
	if err != nil {
		return false, err
	}
	byInode := map[uint64]socket{}
	for _, s := range own {
		byInode[s.inode] = s
	}
	// An app's process in a network namespace of its own lists its sockets there.
	selfNS, _ := os.Readlink("/proc/self/ns/net")
	seen := map[string]bool{selfNS: true}
	for _, pid := range pids {
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		theirs, err := listening(strconv.Itoa(pid))
		if err != nil {
			return false, err
		}
		for _, s := range theirs {
			byInode[s.inode] = s
		}
	}
	heldBy := map[uint64]int{} // a listening socket's inode: the app's process holding it
	for _, pid := range pids {
		socketsOf(pid, func(inode uint64) bool {
			if _, ok := byInode[inode]; ok {
				heldBy[inode] = pid
			}
			return true
		})
	}
	var offLoopback []string
	for inode, pid := range heldBy {
		if s := byInode[inode]; !loopback(s.addr.Addr()) {
			offLoopback = append(offLoopback, fmt.Sprintf("%s (%s, pid %d %s)", s.addr, s.table, pid, commOf(pid)))
		}
	}
	if len(offLoopback) > 0 {
		slices.Sort(offLoopback)
		if len(offLoopback) > 5 {
			offLoopback = append(offLoopback[:5], fmt.Sprintf("and %d more", len(offLoopback)-5))
		}
		return false, fmt.Errorf("the app listens off loopback on %s: the apps persistlab starts must be reachable from this machine alone; bind every socket to %s (the %s placeholder)",
			strings.Join(offLoopback, ", "), host, HostPlaceholder)
	}
	onPort := false
	for _, s := range own {
		if int(s.addr.Port()) != port {
			continue
		}
		onPort = true
		if _, ok := heldBy[s.inode]; !ok {
			return true, &outsiderError{port: port, holders: holdersOf(s.inode)}
		}
	}
	return onPort, nil
}

// socketsOf calls found with the inode of each socket process pid holds open, until found says
// stop; the process's descriptors are read a few at a time, however many it has.
func socketsOf(pid int, found func(inode uint64) bool) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	f, err := os.Open(dir)
	if err != nil {
		return // gone
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(256)
		for _, name := range names {
			link, _ := os.Readlink(dir + "/" + name)
			if rest, ok := strings.CutPrefix(link, "socket:["); ok {
				if inode, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64); err == nil && !found(inode) {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// maxHolders bounds the processes named as holding a socket.
const maxHolders = 10

// holdersOf names the processes holding the socket inode, "pid (name)", found among all
// processes: only once a listener turned out not to be the app's.
func holdersOf(inode uint64) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		socketsOf(pid, func(i uint64) bool {
			if i == inode {
				out = append(out, fmt.Sprintf("%d (%s)", pid, commOf(pid)))
				return false
			}
			return true
		})
		if len(out) >= maxHolders {
			break
		}
	}
	return out
}

// commOf is a process's name, "?" once it is gone.
func commOf(pid int) string {
	data, err := readfile.Regular(fmt.Sprintf("/proc/%d/comm", pid), 64)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(data))
}
