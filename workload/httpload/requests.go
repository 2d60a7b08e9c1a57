package httpload

import (
	"fmt"
	"math/bits"
	"strings"
)

// Request is one entry of a run's list of requests (k6's weighted requests of a scenario): each
// iteration of a virtual user, or each arrival of the open loop, sends one, chosen by weight.
type Request struct {
	Name   string // how the result names it ("": "METHOD path")
	Method string // "": GET
	// Path is the request-target on Config.URL's host and port, like /items?page=2.
	Path string
	Body []byte // sent as it is, with its Content-Length
	// Headers are sent in this order, as written; Host, Content-Length, Transfer-Encoding,
	// Connection, Expect and Upgrade are the driver's (ReservedHeader). A User-Agent replaces
	// persistlab's.
	Headers [][2]string
	// Weight is the entry's share of the iterations against the others' (0: 1).
	Weight int
}

// Bounds of a list of requests the driver accepts.
const (
	maxRequests = 1 << 16
	maxWeight   = 1 << 31
)

func (r Request) method() string {
	if r.Method == "" {
		return "GET"
	}
	return r.Method
}

// DisplayName is the entry's name: its Name, or "METHOD path".
func (r Request) DisplayName() string {
	if r.Name != "" {
		return r.Name
	}
	return r.method() + " " + r.Path
}

func (r Request) weight() uint64 {
	if r.Weight == 0 {
		return 1
	}
	return uint64(r.Weight)
}

// ReservedHeader says whether a request header is the driver's own: Host, Content-Length,
// Transfer-Encoding and Connection (it sets them: one keep-alive connection, a body of known
// length), Expect and Upgrade (an interim 100 answer or a switch of protocol would break its
// reading of answers). Case does not matter.
func ReservedHeader(name string) bool {
	for _, r := range []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Expect", "Upgrade"} {
		if strings.EqualFold(name, r) {
			return true
		}
	}
	return false
}

// IsToken says whether s is an HTTP token (a method or a header name): one or more of letters,
// digits and !#$%&'*+-.^_`|~.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validate reports what in the entry cannot be sent as written.
func (r Request) validate() error {
	switch {
	case r.Method != "" && !IsToken(r.Method):
		return fmt.Errorf("method %q: want an HTTP token, like GET or POST", r.Method)
	case strings.EqualFold(r.Method, "CONNECT"):
		return fmt.Errorf("method %q: want one that keeps the connection HTTP", r.Method)
	case !strings.HasPrefix(r.Path, "/") || strings.ContainsFunc(r.Path, func(c rune) bool { return c <= ' ' || c == 0x7f }):
		return fmt.Errorf("path %q: want a request-target starting with /, without spaces or control characters", r.Path)
	case r.Weight < 0 || int64(r.Weight) > maxWeight:
		return fmt.Errorf("weight %d: want 0 (1) to %d", r.Weight, maxWeight)
	}
	for _, h := range r.Headers {
		switch {
		case !IsToken(h[0]):
			return fmt.Errorf("header %q: want a name that is an HTTP token", h[0])
		case ReservedHeader(h[0]):
			return fmt.Errorf("header %q: the driver sets it", h[0])
		case strings.ContainsAny(h[1], "\r\n\x00"):
			return fmt.Errorf("header %s value %q: want one without CR, LF or NUL", h[0], h[1])
		}
	}
	return nil
}

// RequestCount is what one entry of Config.Requests got.
type RequestCount struct {
	Name string `json:"name"`
	OK   int64  `json:"ok"` // 200 answers
	// Errors are its answers other than 200 and its requests without an answer.
	Errors int64 `json:"errors"`
}

// picker chooses an entry by weight from a 64-bit random number: the number scaled to the total
// weight (the high word of their product, so without division or allocation) falls in one
// entry's span of the cumulative weights.
type picker struct {
	cum   []uint64 // cum[i]: the weights of entries 0..i
	total uint64
}

func newPicker(reqs []Request) picker {
	p := picker{cum: make([]uint64, len(reqs))}
	for i, r := range reqs {
		p.total += r.weight()
		p.cum[i] = p.total
	}
	return p
}

func (p *picker) pick(x uint64) int {
	if len(p.cum) == 1 {
		return 0
	}
	r, _ := bits.Mul64(x, p.total) // uniform in [0, total)
	lo, hi := 0, len(p.cum)-1
	for lo < hi { // the first entry whose cumulative weight is above r
		mid := int(uint(lo+hi) >> 1)
		if p.cum[mid] > r {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// splitmix64 is the next number of the sequence whose state is *s (SplitMix64): a virtual
// user's own deterministic random numbers, seeded from its index.
func splitmix64(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	return mix64(*s)
}

// slotRandom is the random number of open-loop slot n: the nth of SplitMix64's sequence from
// seed 0, so each slot sends the same entry in every run, whichever connection takes it.
func slotRandom(n int64) uint64 { return mix64(uint64(n+1) * 0x9e3779b97f4a7c15) }

// vuSeed is virtual user i's starting state: far from every other user's.
func vuSeed(i int) uint64 { return mix64(uint64(i+1) * 0xd1342543de82ef95) }

// mix64 is SplitMix64's finalizer: a well-spread 64-bit number from its input.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
