package sysinfo

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"persistlab/internal/damon/damontest"
)

// damonTree writes a DAMON admin tree of one kdamond in state, with one context (aggregations of
// aggrUs) holding one scheme doing action to regions idle for ageMin aggregations, with an
// anonymous-memory filter when anon is false (page cache only).
func damonTree(t *testing.T, state, action string, aggrUs, ageMin int, anon bool) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"kdamonds/nr_kdamonds":                                           "1",
		"kdamonds/0/state":                                               state,
		"kdamonds/0/contexts/nr_contexts":                                "1",
		"kdamonds/0/contexts/0/operations":                               "paddr",
		"kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us":       strconv.Itoa(aggrUs),
		"kdamonds/0/contexts/0/schemes/nr_schemes":                       "1",
		"kdamonds/0/contexts/0/schemes/0/action":                         action,
		"kdamonds/0/contexts/0/schemes/0/access_pattern/age/min":         strconv.Itoa(ageMin),
		"kdamonds/0/contexts/0/schemes/0/quotas/bytes":                   "134217728",
		"kdamonds/0/contexts/0/schemes/0/quotas/reset_interval_ms":       "1000",
		"kdamonds/0/contexts/0/schemes/0/ops_filters/nr_filters":         "1",
		"kdamonds/0/contexts/0/schemes/0/ops_filters/0/type":             "anon",
		"kdamonds/0/contexts/0/schemes/0/ops_filters/0/matching":         "Y",
		"kdamonds/0/contexts/0/schemes/0/ops_filters/0/allow":            map[bool]string{true: "Y", false: "N"}[anon],
		"kdamonds/0/contexts/0/schemes/0/access_pattern/nr_accesses/max": "1",
	}
	damontest.WriteFiles(t, root, files)
	return root
}

func TestPageOutPoliciesReadDamon(t *testing.T) {
	got := PageOutPolicies(damonTree(t, "on", "pageout", 5_000_000, 12, false))
	if len(got) != 1 || !strings.Contains(got[0], "pages out page cache idle for 60 s or more, up to 128 MiB per 1000 ms") {
		t.Errorf("a running page-cache pageout scheme (12 aggregations of 5 s): %q", got)
	}
	if got := PageOutPolicies(damonTree(t, "on", "pageout", 100_000, 50, true)); len(got) != 1 || !strings.Contains(got[0], "pages out memory idle for 5 s") {
		t.Errorf("a scheme that pages out anonymous memory too (50 aggregations of 0.1 s): %q", got)
	}
	for _, c := range []struct{ state, action string }{{"off", "pageout"}, {"on", "stat"}} {
		if got := PageOutPolicies(damonTree(t, c.state, c.action, 5_000_000, 12, false)); len(got) != 0 {
			t.Errorf("kdamond %s, action %s: %q, want none", c.state, c.action, got)
		}
	}
	if got := PageOutPolicies(filepath.Join(t.TempDir(), "absent")); len(got) != 0 {
		t.Errorf("no DAMON: %q", got)
	}
}
