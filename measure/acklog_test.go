package measure

import (
	"testing"
	"time"
)

func TestAckLogLoss(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// Counts 1..5 acknowledged at 100 ms steps; 4 was answered after 5 (two clients).
	log := NewAckLog([]Ack{{5, at(400)}, {1, at(0)}, {2, at(100)}, {4, at(450)}, {3, at(200)}})
	if log.Max() != 5 {
		t.Fatalf("max %d", log.Max())
	}
	if when, ok := log.AckedAt(4); !ok || !when.Equal(at(450)) {
		t.Errorf("AckedAt(4) = %v %v", when, ok)
	}
	if _, ok := log.AckedAt(9); ok {
		t.Error("AckedAt(9) found a count never acknowledged")
	}
	kill := at(1000)
	got := log.Loss(2, kill)
	// Lost 3, 4, 5: first acknowledged at 200 ms, last at 450 ms.
	if got.Lost != 3 || got.UnackedKept != 0 || got.WindowMs != 250 || got.ReachMs != 800 {
		t.Errorf("Loss(2) = %+v", got)
	}
	if got := log.Loss(7, kill); got.Lost != 0 || got.UnackedKept != 2 || got.WindowMs != 0 {
		t.Errorf("Loss(7) = %+v", got)
	}
	if got := log.Loss(0, kill); got.Lost != 5 || got.ReachMs != 1000 {
		t.Errorf("Loss(0) = %+v", got)
	}
	if got := (&AckLog{}).Loss(0, kill); got != (Loss{}) {
		t.Errorf("empty log: %+v", got)
	}
}
