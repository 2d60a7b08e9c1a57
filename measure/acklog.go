package measure

import (
	"sort"
	"time"
)

// Point is one sample of a time series within a cell: seconds since the cell's start, and a value.
type Point struct {
	T float64 `json:"t"`
	V float64 `json:"v"`
}

// Ack is one acknowledged count and when its answer arrived.
type Ack struct {
	Count int64
	At    time.Time
}

// AckLog holds every acknowledged count of a run, sorted by count, so a crash run can tell which
// acknowledged writes a recovery lost and when they had been acknowledged.
type AckLog struct {
	Acks []Ack
}

// NewAckLog sorts acks by count.
func NewAckLog(acks []Ack) *AckLog {
	sort.Slice(acks, func(i, j int) bool { return acks[i].Count < acks[j].Count })
	return &AckLog{Acks: acks}
}

// Max is the highest acknowledged count, 0 if none.
func (l *AckLog) Max() int64 {
	if len(l.Acks) == 0 {
		return 0
	}
	return l.Acks[len(l.Acks)-1].Count
}

// AckedAt finds when count n was acknowledged; ok is false if it was not.
func (l *AckLog) AckedAt(n int64) (time.Time, bool) {
	i := sort.Search(len(l.Acks), func(i int) bool { return l.Acks[i].Count >= n })
	if i < len(l.Acks) && l.Acks[i].Count == n {
		return l.Acks[i].At, true
	}
	return time.Time{}, false
}

// Loss is what a recovery lost of the acknowledged writes.
type Loss struct {
	Lost        int64 // acknowledged counts above the recovered one
	UnackedKept int64 // recovered counts no client saw acknowledged (in flight at the kill)
	// WindowMs spans the lost acknowledgements, first to last; ReachMs is how long before the kill
	// the first lost one was acknowledged.
	WindowMs float64
	ReachMs  float64
}

// Loss compares the log with the count a recovery found, for a kill at killAt.
func (l *AckLog) Loss(recovered int64, killAt time.Time) Loss {
	top := l.Max()
	out := Loss{Lost: max(0, top-recovered), UnackedKept: max(0, recovered-top)}
	if out.Lost == 0 {
		return out
	}
	i := sort.Search(len(l.Acks), func(i int) bool { return l.Acks[i].Count > recovered })
	first, last := l.Acks[i].At, l.Acks[len(l.Acks)-1].At
	for _, a := range l.Acks[i:] {
		if a.At.Before(first) {
			first = a.At
		}
		if a.At.After(last) {
			last = a.At
		}
	}
	out.WindowMs = float64(last.Sub(first)) / float64(time.Millisecond)
	out.ReachMs = float64(killAt.Sub(first)) / float64(time.Millisecond)
	return out
}
