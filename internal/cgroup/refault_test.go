package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A v1 memory cgroup's refaults are its hierarchy's (total_), its limit's hits memory.failcnt; a
// v2 cgroup's are workingset_refault_file (hierarchical already) and memory.events' max.
func TestMemoryPageCacheReadsBothCgroupVersions(t *testing.T) {
	v1 := writeFiles(t, map[string]string{
		"memory.stat":    "cache 15171584\nworkingset_refault_file 9523\ntotal_cache 1\ntotal_workingset_refault_file 45514\n",
		"memory.failcnt": "17\n"})
	if pc, err := MemoryPageCache(v1); err != nil || pc != (PageCache{RefaultPages: 45514, LimitHits: 17, HasLimit: true}) {
		t.Errorf("v1: %+v, %v", pc, err)
	}
	v2 := writeFiles(t, map[string]string{
		"memory.stat":   "anon 0\nfile 4096\nworkingset_refault_anon 2\nworkingset_refault_file 300\n",
		"memory.events": "low 0\nhigh 0\nmax 4\noom 0\noom_kill 0\n"})
	if pc, err := MemoryPageCache(v2); err != nil || pc != (PageCache{RefaultPages: 300, LimitHits: 4, HasLimit: true}) {
		t.Errorf("v2: %+v, %v", pc, err)
	}
	old := writeFiles(t, map[string]string{"memory.stat": "cache 1\nworkingset_refault 5\n"})
	if _, err := MemoryPageCache(old); err == nil {
		t.Error("a kernel without workingset_refault_file: no error")
	}
}

func TestMachinePageCacheReadsVMStat(t *testing.T) {
	dir := writeFiles(t, map[string]string{"vmstat": "workingset_nodes 60815\nworkingset_refault_anon 0\nworkingset_refault_file 4551401\n"})
	if pc, err := MachinePageCache(filepath.Join(dir, "vmstat")); err != nil || pc != (PageCache{RefaultPages: 4551401}) {
		t.Errorf("%+v, %v", pc, err)
	}
	if _, err := MachinePageCache(filepath.Join(dir, "absent")); err == nil {
		t.Error("no vmstat: no error")
	}
}
