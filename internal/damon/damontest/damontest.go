// Package damontest writes stand-ins for DAMON's sysfs admin tree, so that pausing and restoring
// page-out policies is tested without touching the machine's.
package damontest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Kdamond is one kdamond of a stand-in tree: its state, and its one scheme's action (pageout
// pages out page cache idle for 60 s: 12 aggregations of 5 s, anonymous memory filtered out).
type Kdamond struct {
	State, Action string
}

// Tree writes a DAMON admin tree holding kdamonds in a temporary directory and returns its root.
func Tree(t *testing.T, kdamonds ...Kdamond) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{"kdamonds/nr_kdamonds": strconv.Itoa(len(kdamonds))}
	for i, k := range kdamonds {
		kd := "kdamonds/" + strconv.Itoa(i) + "/"
		sch := kd + "contexts/0/schemes/0/"
		for name, v := range map[string]string{
			kd + "state":                                         k.State,
			kd + "contexts/nr_contexts":                          "1",
			kd + "contexts/0/operations":                         "paddr",
			kd + "contexts/0/monitoring_attrs/intervals/aggr_us": "5000000",
			kd + "contexts/0/schemes/nr_schemes":                 "1",
			sch + "action":                                       k.Action,
			sch + "access_pattern/age/min":                       "12",
			sch + "ops_filters/nr_filters":                       "1",
			sch + "ops_filters/0/type":                           "anon",
			sch + "ops_filters/0/matching":                       "Y",
			sch + "ops_filters/0/allow":                          "N",
		} {
			files[name] = v
		}
	}
	WriteFiles(t, root, files)
	return root
}

// WriteFiles writes each file (a path under root) holding its one line, as sysfs shows them.
func WriteFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, v := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// State reads kdamond k's state file.
func State(t *testing.T, root string, k int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "kdamonds", strconv.Itoa(k), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// SetState writes kdamond k's state as someone else would.
func SetState(t *testing.T, root string, k int, state string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "kdamonds", strconv.Itoa(k), "state"), []byte(state+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
