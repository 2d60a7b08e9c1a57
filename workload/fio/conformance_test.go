package fio

import (
	"testing"

	"persistlab/workload"
	"persistlab/workload/conformance"
)

// fio on a local directory: a small job run by fio itself, and the same through two fio servers on
// loopback (the only fio processes that outlive Start: Stop must end them).
func TestConformance(t *testing.T) {
	if _, err := Find(); err != nil {
		t.Skip(err)
	}
	for name, fixed := range map[string]map[string]string{
		"job":     {"rw": "randwrite", "file_size": "1MiB", "fsync": "8"},
		"servers": {"rw": "read", "file_size": "1MiB", "servers": "2"},
	} {
		t.Run(name, func(t *testing.T) {
			conformance.Run(t, Name, conformance.Options{
				Fixed: fixed,
				Result: func(t *testing.T, res *workload.Result) {
					if res.Metrics["bytes"] <= 0 || res.Metrics["iops"] <= 0 {
						t.Errorf("bytes %v, iops %v", res.Metrics["bytes"], res.Metrics["iops"])
					}
				},
			})
		})
	}
}
