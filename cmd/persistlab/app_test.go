package main

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/scenario"
)

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
		err := cmdApp(args)
		var fe *scenario.FieldError
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
	if err := cmdApp([]string{"counter", "--db", filepath.Join(dir, "ok.db"), "--max-conns", "10000", "--cpu-per-request", "1s", "--prepare"}); err != nil {
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
	err = cmdApp([]string{"counter", "--db", path, "--prepare"})
	if err == nil || !strings.Contains(err.Error(), "did not make") {
		t.Errorf("app counter on a user's database: %v, want a refusal", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the user's database changed")
	}
}
