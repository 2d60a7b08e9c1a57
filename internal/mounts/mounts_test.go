package mounts

import "testing"

func TestParseUndoesEscapes(t *testing.T) {
	table := "proc /proc proc rw 0 0\npersistlab /tmp/a\\040b/mnt fuse.gcsfuse rw 0 0\n/dev/loop0 /tmp/tab\\011dir ext4 rw 0 0\n"
	got := Parse(table)
	if len(got) != 3 || got[1].Point != "/tmp/a b/mnt" || got[1].Type != "fuse.gcsfuse" || got[2].Point != "/tmp/tab\tdir" {
		t.Errorf("%+v", got)
	}
	if m, ok := Of("/proc/self"); !ok || m.Point != "/proc" {
		t.Errorf("Of(/proc/self) = %+v %v", m, ok)
	}
	if !Mounted("/proc") || Mounted("/proc/self") {
		t.Error("Mounted")
	}
}
