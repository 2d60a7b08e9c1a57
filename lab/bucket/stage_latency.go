package bucket

import (
	"math"
	"math/rand"
	"net/http"
	"sync"
	"time"
)

// z99 is the standard normal quantile of 0.99: a lognormal's p99 is median·exp(z99·σ).
const z99 = 2.3263478740408408

// latencyStage delays each request by a draw from its class's lognormal distribution.
type latencyStage struct {
	model Model
	mu    sync.Mutex
	rng   *rand.Rand
}

func newLatencyStage(m Model) *latencyStage {
	return &latencyStage{model: m, rng: rand.New(rand.NewSource(m.Seed))}
}

// draw returns one latency from l, or 0 if l has no median.
func (s *latencyStage) draw(l Latency) time.Duration {
	if l.Median <= 0 {
		return 0
	}
	sigma := 0.0
	if l.P99 > l.Median {
		sigma = math.Log(float64(l.P99)/float64(l.Median)) / z99
	}
	s.mu.Lock()
	z := s.rng.NormFloat64()
	s.mu.Unlock()
	return time.Duration(float64(l.Median) * math.Exp(sigma*z))
}

func (s *latencyStage) latencyFor(op Op) Latency {
	switch {
	case op.Class == ClassNone && !op.Mutation:
		return Latency{}
	case op.List:
		return s.model.List
	case op.Mutation || op.Class == ClassA:
		return s.model.Write
	}
	return s.model.Read
}

func (s *latencyStage) stage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := s.draw(s.latencyFor(opOf(r))); d > 0 {
			time.Sleep(d)
		}
		next.ServeHTTP(w, r)
	})
}
