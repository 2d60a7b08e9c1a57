package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"persistlab/app/counter"
	"persistlab/param"
	"persistlab/workload/httpload"
)

// runApp runs `persistlab app ARGS...` in this process, as main finds it in the command table.
func runApp(args []string) error {
	cmd, rest, ok := find(commands(), append([]string{"app"}, args...))
	if !ok {
		return errors.New("no such app command")
	}
	return cmd.run(context.Background(), rest)
}

// `app counter` and `app gitcommit` take what their workloads' parameters take, and no more.
func TestAppFlagsTakeTheWorkloadsBounds(t *testing.T) {
	dir := t.TempDir()
	gitDir := t.TempDir()
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"counter", "--max-conns", "10001"}, "--max-conns"},
		{[]string{"counter", "--threads", "-1"}, "--threads"},
		{[]string{"counter", "--cpu-per-request", "2s"}, "--cpu-per-request"},
		{[]string{"counter", "--cpus", "-1"}, "--cpus"},
		{[]string{"hello", "--cpus", "1025"}, "--cpus"},
		{[]string{"gitcommit", "--dir", gitDir, "--files", "1", "--changes", "1", "--file-bytes", "2097152"}, "--file-bytes"},
	} {
		db := filepath.Join(dir, "c.db")
		args := c.args
		if args[0] != "gitcommit" {
			args = append(args, "--db", db, "--prepare")
		}
		err := runApp(args)
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != c.flag {
			t.Errorf("%v: %v, want a refusal naming %s", c.args, err, c.flag)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("%v: the refused app made its database", c.args)
			os.Remove(db)
		}
		if entries, _ := os.ReadDir(gitDir); len(entries) > 0 {
			t.Errorf("%v: the refused driver wrote to its directory", c.args)
		}
	}
	if err := runApp([]string{"counter", "--db", filepath.Join(dir, "ok.db"), "--max-conns", "10000", "--cpu-per-request", "1s", "--prepare"}); err != nil {
		t.Errorf("flags at their bounds: %v", err)
	}
}

// `app counter --db` on a user's database refuses it and leaves it as it was.
func TestAppCounterRefusesAUsersDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	err = runApp([]string{"counter", "--db", path, "--prepare"})
	if err == nil || !strings.Contains(err.Error(), "did not make") {
		t.Errorf("app counter on a user's database: %v, want a refusal", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the user's database changed")
	}
}

// A pinned app serves connections that join under load in their turn: none waits behind the
// others' hand-offs (minAppProcs). Each round, 14 connections join 6 that keep the app busy; with
// one P the slowest of a round was 1.3-4.8x its median, here it stays near 1. The median round is
// judged: one round's stall on a machine shared with other work is the machine's, not the app's.
func TestConnectionsJoiningALoadedAppAreServedInTurn(t *testing.T) {
	cmd := exec.Command(binary, "app", "counter", "--db", filepath.Join(t.TempDir(), "c.db"), "--listen", "127.0.0.1:0",
		"--cpus", "1", "--threads", "3", "--gvl", "--cpu-per-request", "2ms")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	base, found := strings.CutPrefix(strings.TrimSpace(line), counter.ListeningMarker)
	if err != nil || !found {
		t.Fatalf("app did not start: %q %v\n%s", line, err, stderr.String())
	}
	url := base + "/count_up"

	const rounds = 7
	var ratios []float64
	var waits []string
	busy := make(chan error, 1)
	go func() {
		_, err := httpload.Run(context.Background(), httpload.Config{URL: url, Mode: httpload.ModeClosed, VUs: 6, Duration: rounds * time.Second})
		busy <- err
	}()
	time.Sleep(300 * time.Millisecond)
	for i := range rounds {
		res, err := httpload.Run(context.Background(), httpload.Config{URL: url, Mode: httpload.ModeClosed, VUs: 14, Duration: 600 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Latency.Summarize(res.Elapsed)
		if res.Errors() > 0 || s.Count < 14 {
			t.Fatalf("round %d: %d answers, %d errors: %v", i, s.Count, res.Errors(), res.ErrorSamples)
		}
		ratios = append(ratios, s.MaxMs/s.MedMs)
		waits = append(waits, fmt.Sprintf("%.1f ms (median %.1f)", s.MaxMs, s.MedMs))
		time.Sleep(300 * time.Millisecond)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	if slices.Sort(ratios); ratios[len(ratios)/2] > 2 {
		t.Errorf("in the median round a joining connection waited over twice the median answer; the slowest of each round: %s", strings.Join(waits, ", "))
	}
}
