package volume

import (
	"fmt"
	"sync"
	"time"

	"persistlab/lab"
)

// Model decides when each I/O of an emulated volume completes: it counts the I/O in billing
// units, reserves them in the volume's and the instance's token buckets (the latest of their
// start times is when the I/O starts), and adds the type's service time. It keeps the counts a
// cell reports. Safe for concurrent use; Schedule allocates nothing.
type Model struct {
	limits Limits
	start  time.Time

	mu    sync.Mutex
	count counter
	// Buckets in units per second: IOPS (peak, credit, per direction) and MiB/s likewise; the
	// instance's. Unset ones have rate 0.
	iops, iopsCredit, readIOPS, writeIOPS, instIOPS limiter
	mibs, mibsCredit, readMiBs, writeMiBs, instMiBs limiter
	instWriteMiBs                                   limiter
	c                                               Counters
}

// Counters are a volume's cumulative counts.
type Counters struct {
	ReadOps, WriteOps, ReadBytes, WriteBytes float64 // as the device sent them
	ReadUnits, WriteUnits                    float64 // as the provider bills them
	Flushes                                  float64
	ThrottledS                               float64 // time I/Os waited for tokens, summed
	MaxWaitS                                 float64 // the longest one I/O waited for tokens
	CreditIOs, CreditMiB                     float64 // burst credits left (gp2; st1, sc1), -1 when the type has none
}

// Flatten names the counters for results files.
func (c Counters) Flatten() map[string]float64 {
	m := map[string]float64{
		lab.VolumeReadOps: c.ReadOps, lab.VolumeWriteOps: c.WriteOps, lab.VolumeReadBytes: c.ReadBytes, lab.VolumeWriteBytes: c.WriteBytes,
		lab.VolumeReadUnits: c.ReadUnits, lab.VolumeWriteUnits: c.WriteUnits, lab.VolumeFlushes: c.Flushes, lab.VolumeThrottledS: c.ThrottledS,
		lab.VolumeMaxWaitS: c.MaxWaitS,
	}
	if c.CreditIOs >= 0 {
		m[lab.VolumeCreditIOs] = c.CreditIOs
	}
	if c.CreditMiB >= 0 {
		m[lab.VolumeCreditMiB] = c.CreditMiB
	}
	return m
}

// New makes the model of a valid spec; clock gives its start.
func New(s Spec, clock func() time.Time) (*Model, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	l := s.Limits()
	m := &Model{limits: l, start: clock(), count: counter{unit: l.UnitBytes, window: l.MergeWindow.Seconds()}}
	if l.BurstIOPS > l.BaseIOPS {
		m.iops = newLimiter(l.BurstIOPS, peakBurst(l.BurstIOPS))
		m.iopsCredit = newLimiter(l.BaseIOPS, l.CreditIOs)
	} else {
		m.iops = newLimiter(l.BaseIOPS, peakBurst(l.BaseIOPS))
	}
	if l.BurstMiBps > l.BaseMiBps {
		m.mibs = newLimiter(l.BurstMiBps, peakBurst(l.BurstMiBps))
		m.mibsCredit = newLimiter(l.BaseMiBps, l.CreditMiB)
	} else {
		m.mibs = newLimiter(l.BaseMiBps, peakBurst(l.BaseMiBps))
	}
	m.readIOPS, m.writeIOPS = newLimiter(l.ReadIOPS, peakBurst(l.ReadIOPS)), newLimiter(l.WriteIOPS, peakBurst(l.WriteIOPS))
	m.readMiBs, m.writeMiBs = newLimiter(l.ReadMiBps, peakBurst(l.ReadMiBps)), newLimiter(l.WriteMiBps, peakBurst(l.WriteMiBps))
	m.instIOPS = newLimiter(l.Instance.IOPS, peakBurst(l.Instance.IOPS))
	m.instMiBs = newLimiter(l.Instance.MiBps, peakBurst(l.Instance.MiBps))
	m.instWriteMiBs = newLimiter(l.Instance.WriteMiBps, peakBurst(l.Instance.WriteMiBps))
	return m, nil
}

// Limits are the figures the model enforces.
func (m *Model) Limits() Limits { return m.limits }

// Schedule says when op, arriving at now, completes.
func (m *Model) Schedule(now time.Time, op Op) time.Time {
	t := now.Sub(m.start).Seconds()
	m.mu.Lock()
	units := float64(m.count.units(op, t))
	mib := float64(op.Len) / (1 << 20)
	if m.limits.HDD {
		mib = units // an HDD volume spends a full MiB of throughput on each unit, merged or not
	}
	start := max(t, m.iops.reserve(t, units), m.iopsCredit.reserve(t, units), m.mibs.reserve(t, mib), m.mibsCredit.reserve(t, mib))
	if op.Write {
		start = max(start, m.writeIOPS.reserve(t, units), m.writeMiBs.reserve(t, mib))
		m.c.WriteOps++
		m.c.WriteBytes += float64(op.Len)
		m.c.WriteUnits += units
	} else {
		start = max(start, m.readIOPS.reserve(t, units), m.readMiBs.reserve(t, mib))
		m.c.ReadOps++
		m.c.ReadBytes += float64(op.Len)
		m.c.ReadUnits += units
	}
	// The instance's limit counts each I/O once (assumption: AWS quotes it at 16 KiB I/O; larger
	// ones meet its bandwidth limit first).
	start = max(start, m.instIOPS.reserve(t, 1), m.instMiBs.reserve(t, float64(op.Len)/(1<<20)))
	if op.Write {
		start = max(start, m.instWriteMiBs.reserve(t, float64(op.Len)/(1<<20)))
	}
	m.c.ThrottledS += start - t
	m.c.MaxWaitS = max(m.c.MaxWaitS, start-t)
	m.mu.Unlock()
	return m.start.Add(time.Duration(start*float64(time.Second)) + m.limits.ServiceTime)
}

// Flush says when a cache flush arriving at now completes.
func (m *Model) Flush(now time.Time) time.Time {
	m.mu.Lock()
	m.c.Flushes++
	m.mu.Unlock()
	return now.Add(FlushTime)
}

// Snapshot is the counters at now.
func (m *Model) Snapshot(now time.Time) Counters {
	t := now.Sub(m.start).Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.c
	c.CreditIOs, c.CreditMiB = -1, -1
	if m.iopsCredit.rate > 0 {
		c.CreditIOs = m.iopsCredit.balance(t)
	}
	if m.mibsCredit.rate > 0 {
		c.CreditMiB = m.mibsCredit.balance(t)
	}
	return c
}

// String says what the model enforces, for logs and the lab command.
func (l Limits) String() string {
	s := fmt.Sprintf("%.0f IOPS", l.BaseIOPS)
	if l.ReadIOPS > 0 || l.WriteIOPS > 0 {
		s = fmt.Sprintf("read %.0f / write %.0f IOPS", l.ReadIOPS, l.WriteIOPS)
	}
	if l.BurstIOPS > l.BaseIOPS {
		s += fmt.Sprintf(" (burst %.0f on %.3g credits)", l.BurstIOPS, l.CreditIOs)
	}
	switch {
	case l.ReadMiBps > 0 || l.WriteMiBps > 0:
		s += fmt.Sprintf(", read %.1f / write %.1f MiB/s", l.ReadMiBps, l.WriteMiBps)
	default:
		s += fmt.Sprintf(", %.1f MiB/s", l.BaseMiBps)
	}
	if l.BurstMiBps > l.BaseMiBps {
		s += fmt.Sprintf(" (burst %.1f on %.3g MiB of credit)", l.BurstMiBps, l.CreditMiB)
	}
	s += fmt.Sprintf("; I/O counted in units of %d KiB; %v per I/O", l.UnitBytes>>10, l.ServiceTime)
	if l.MergeWindow > 0 {
		s += fmt.Sprintf("; contiguous I/O merged within %v", l.MergeWindow)
	}
	if l.Instance.IOPS > 0 || l.Instance.MiBps > 0 {
		s += fmt.Sprintf("; instance %s: %.0f IOPS, %.1f MiB/s", l.Instance.Name, l.Instance.IOPS, l.Instance.MiBps)
	}
	if l.Instance.WriteMiBps > 0 {
		s += fmt.Sprintf("; instance %s: writes at most %.1f MiB/s", l.Instance.Name, l.Instance.WriteMiBps)
	}
	return s
}
