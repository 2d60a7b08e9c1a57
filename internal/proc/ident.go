package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// Ident is a process as /proc/PID/stat identifies it: its pid, its process group, and its start
// time in clock ticks after boot (a pid the kernel reused has another start time).
type Ident struct {
	PID, Group int
	Start      uint64
}

// statFields reads /proc/PID/stat and returns the fields after the command name (which may hold
// spaces and parentheses): [0] is field 3, the state.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return nil, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	return fields, nil
}

func identOf(pid int) (Ident, error) {
	fields, err := statFields(pid)
	if err != nil {
		return Ident{}, err
	}
	group, err := strconv.Atoi(fields[2]) // field 5, pgrp
	if err != nil {
		return Ident{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64) // field 22, starttime
	if err != nil {
		return Ident{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return Ident{PID: pid, Group: group, Start: start}, nil
}

// StartTime is the process's start time in clock ticks after boot.
func StartTime(pid int) (uint64, error) {
	id, err := identOf(pid)
	return id.Start, err
}

// All lists every process now running.
func All() []Ident {
	var out []Ident
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if id, err := identOf(pid); err == nil {
			out = append(out, id)
		}
	}
	return out
}

var onStart atomic.Pointer[func(pid int)]

// NotifyStarts tells f of every process persistlab starts from now on, so that a killed run's
// processes can be stopped later by pid and start time, never found by name; nil stops it.
func NotifyStarts(f func(pid int)) {
	if f == nil {
		onStart.Store(nil)
		return
	}
	onStart.Store(&f)
}

// Started reports a process just started (cmd.Start returned nil) to NotifyStarts' function.
func Started(cmd *exec.Cmd) {
	if f := onStart.Load(); f != nil && cmd.Process != nil {
		(*f)(cmd.Process.Pid)
	}
}

// Command is exec.CommandContext for a program persistlab runs and must not outlive it: the
// child gets SIGKILL if persistlab dies, and runs in its own process group, so a terminal's
// Ctrl-C reaches persistlab alone and persistlab stops its children in order. Call Started after
// Start for a child that may run long. When ctx ends, the child's whole process group gets
// SIGKILL: what it started dies with it.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		// Through the process's own handle first: once it has been waited for, its pid (and so
		// its group's id) may be another process's, which must not be touched.
		if err := cmd.Process.Kill(); err != nil {
			return err
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return nil
	}
	return cmd
}

// BootID is the kernel's id of this boot ("" if it cannot be read): what a record of process
// start times or of the kernel's state meant holds only within the boot that wrote it.
func BootID() string {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
