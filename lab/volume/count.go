package volume

// Op is one block I/O as the device saw it.
type Op struct {
	Write    bool
	Off, Len int64
}

// recentExtents is how many runs of contiguous I/O per direction the counter follows: enough for
// the pieces of a few large I/Os in flight at once, which the kernel splits and which reach the
// volume in any order.
const recentExtents = 64

// counter turns I/Os into billing units as the provider counts them [ebs-io]: an I/O of up to one
// unit counts one, a larger one one per unit, and contiguous I/Os merge. It follows the recent
// runs of contiguous I/O: an I/O that starts where a run ends, or ends where one starts, extends
// it (joining any run it now touches) and costs the units the longer run needs beyond those
// already counted for its parts. So 8 pieces of a
// 1 MiB I/O cost 4 SSD units in whatever order they arrive, and 64 contiguous 4 KiB I/Os cost one.
// (Assumption: a run of I/Os larger than a unit is billed as one long I/O, 300 KiB + 300 KiB as 3
// SSD units, where AWS may count 4.) Not safe for concurrent use: the model locks.
type counter struct {
	unit   int64
	window float64 // seconds: runs whose last I/O is older than this take no more (0: no bound)
	recent [2][recentExtents]extent
	clock  uint64 // orders the runs by last use: the least recently used one makes room
}

type extent struct {
	start, end, units int64
	used              uint64  // 0: the slot is free
	last              float64 // when its latest I/O arrived, seconds
}

// open says whether a run can still take an I/O arriving at now.
func (c *counter) open(e *extent, now float64) bool {
	return e.used > 0 && (c.window == 0 || now-e.last <= c.window)
}

// units is how many billing units op costs: negative when it joins runs that were paid for apart
// into one that needs fewer (the pieces of one large I/O arriving out of order), which refunds
// what was paid too much.
func (c *counter) units(op Op, now float64) int64 {
	d := dir(op)
	end := op.Off + op.Len
	runs := &c.recent[d]
	for i := range runs {
		e := &runs[i]
		if c.open(e, now) && (op.Off == e.end || end == e.start) {
			e.start, e.end = min(e.start, op.Off), max(e.end, end)
			charged := e.units
			for j := range runs { // the I/O may have closed the gap to another run
				o := &runs[j]
				if j != i && c.open(o, now) && (o.start == e.end || o.end == e.start) {
					e.start, e.end = min(e.start, o.start), max(e.end, o.end)
					charged += o.units
					*o = extent{}
				}
			}
			e.units = ceilDiv(e.end-e.start, c.unit)
			c.clock++
			e.used, e.last = c.clock, now
			return e.units - charged // below 0 when runs paid apart turn out to be one: a refund
		}
	}
	n := ceilDiv(op.Len, c.unit)
	oldest := 0
	for i := range runs {
		if runs[i].used < runs[oldest].used {
			oldest = i
		}
	}
	c.clock++
	runs[oldest] = extent{start: op.Off, end: end, units: n, used: c.clock, last: now}
	return n
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func dir(op Op) int {
	if op.Write {
		return 1
	}
	return 0
}
