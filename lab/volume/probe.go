package volume

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"persistlab/lab"
)

// Probe sizes: 1 MiB I/O for bandwidth and 4 KiB for IOPS, each with a few in flight, as a
// workload of deep queues would send them.
const (
	probeBlock     = 1 << 20
	probeSmall     = 4 << 10
	probeParallel  = 4
	probeSmallJobs = 16
	probeSmallTime = time.Second
)

// ProbeDirect measures what a file system moves with direct I/O on this machine: size bytes
// written into path in 1 MiB writes, fsynced, read back, then 4 KiB random writes and reads for a
// second each. On a volume with the model off it is the emulator's ceiling.
func ProbeDirect(path string, size int64) (lab.Ceiling, error) {
	size = max(size/probeBlock, probeParallel) * probeBlock
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_DIRECT, 0o600)
	if err != nil {
		return lab.Ceiling{}, err
	}
	defer os.Remove(path)
	defer f.Close()
	var c lab.Ceiling
	blocks := size / probeBlock
	t0 := time.Now()
	if err := parallel(probeParallel, blocks, probeBlock, func(buf []byte, i int64) error {
		_, err := f.WriteAt(buf, i*probeBlock)
		return err
	}); err != nil {
		return c, err
	}
	if err := f.Sync(); err != nil {
		return c, err
	}
	c.WriteMiBs = float64(size) / (1 << 20) / time.Since(t0).Seconds()
	t0 = time.Now()
	if err := parallel(probeParallel, blocks, probeBlock, func(buf []byte, i int64) error {
		_, err := f.ReadAt(buf, i*probeBlock)
		return err
	}); err != nil {
		return c, err
	}
	c.ReadMiBs = float64(size) / (1 << 20) / time.Since(t0).Seconds()
	slots := size / probeSmall
	for _, write := range []bool{true, false} {
		var ops atomic.Int64
		deadline := time.Now().Add(probeSmallTime)
		t0 = time.Now()
		err := parallel(probeSmallJobs, probeSmallJobs, probeSmall, func(buf []byte, job int64) error {
			x := uint64(job)*0x9E3779B97F4A7C15 + 1
			for time.Now().Before(deadline) {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				off := int64(x%uint64(slots)) * probeSmall
				var err error
				if write {
					_, err = f.WriteAt(buf, off)
				} else {
					_, err = f.ReadAt(buf, off)
				}
				if err != nil {
					return err
				}
				ops.Add(1)
			}
			return nil
		})
		if err != nil {
			return c, err
		}
		iops := float64(ops.Load()) / time.Since(t0).Seconds()
		if write {
			c.WriteIOPS = iops
		} else {
			c.ReadIOPS = iops
		}
	}
	return c, nil
}

// parallel runs do for items 0..n-1 on jobs goroutines, each with its own aligned buffer of
// block bytes (direct I/O wants memory aligned to the device's block size).
func parallel(jobs int, n int64, block int, do func(buf []byte, i int64) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, jobs)
	for j := 0; j < jobs; j++ {
		wg.Add(1)
		go func(j int) {
			defer wg.Done()
			buf := aligned(block)
			for i := range buf {
				buf[i] = byte(i*7 + j)
			}
			for {
				i := next.Add(1) - 1
				if i >= n || errs[j] != nil {
					return
				}
				errs[j] = do(buf, i)
			}
		}(j)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// aligned is a buffer of n bytes starting at a 4 KiB boundary.
func aligned(n int) []byte {
	const align = 4096
	raw := make([]byte, n+align)
	shift := (align - int(uintptr(unsafe.Pointer(&raw[0]))%align)) % align
	return raw[shift : shift+n]
}
