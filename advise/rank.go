package advise

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"persistlab/cost"
)

// Figures are what a candidate's runs measured, each with where it comes from.
type Figures struct {
	// AtRate and AtDouble are the steady open loop's medians at the user's rate and at twice it.
	AtRate   map[string]float64 `json:"at_rate,omitempty"`
	AtDouble map[string]float64 `json:"at_double,omitempty"`
	// Crash holds the crash runs' figures (CrashMetricNames), over every crash.
	Crash   map[string]float64 `json:"crash,omitempty"`
	Crashes int                `json:"crashes"`
	// Bill is the monthly bill, line by line; Priced is false where a line cannot be told (too few
	// bucket operations counted to price them).
	Bill   []cost.Line `json:"bill,omitempty"`
	Priced bool        `json:"priced"`
	// AtMostUSD is the part of the bill that is an upper bound, not a price: bucket operations too
	// few to count even over every steady run, billed at their counts' 95% upper bounds. A budget
	// the whole bill meets is met; one the rest of the bill already misses is missed; between, the
	// bill cannot tell.
	AtMostUSD float64 `json:"at_most_usd,omitempty"`
	// DoubleBill, DoublePriced and DoubleAtMostUSD are the bill at twice the rate, from the run
	// there (nil where none ran), as Bill, Priced and AtMostUSD are at the rate.
	DoubleBill      []cost.Line `json:"bill_at_double,omitempty"`
	DoublePriced    bool        `json:"priced_at_double"`
	DoubleAtMostUSD float64     `json:"at_most_usd_at_double,omitempty"`
	Evidence        []string    `json:"evidence,omitempty"` // results file and row of each figure
	// Notes are what the figures cannot support or what bounds them (a row bound by this machine).
	Notes []string `json:"notes,omitempty"`
}

// USD is the bill's total.
func (f Figures) USD() float64 {
	var t float64
	for _, l := range f.Bill {
		t += l.USDPerMonth
	}
	return t
}

// AtTwice is the figures as the runs at twice the rate give them, to judge the candidate there:
// its latency and bill there; its pace (where the app has one) halved, so that keeping up with
// twice the rate meets the requirement keeping up with the rate does; and its crash runs', which
// ran at the rate alone, with the acknowledged writes lost doubled (assumed: a crash loses the
// writes of the window since the last sync, which twice the rate fills twice as fast; how long
// before the crash the earliest was acknowledged, MetricLostWindow, is kept).
func (f Figures) AtTwice(pace string) Figures {
	at := make(map[string]float64, len(f.AtDouble))
	for k, v := range f.AtDouble {
		at[k] = v
	}
	if x, ok := at[pace]; ok && pace != "" {
		at[pace] = x / 2
	}
	crash := make(map[string]float64, len(f.Crash))
	for k, v := range f.Crash {
		crash[k] = v
	}
	for _, k := range []string{MetricLostAcked, "lost_acked_median"} {
		if x, ok := crash[k]; ok {
			crash[k] = 2 * x
		}
	}
	return Figures{AtRate: at, Crash: crash, Crashes: f.Crashes, Bill: f.DoubleBill, Priced: f.DoublePriced, AtMostUSD: f.DoubleAtMostUSD}
}

// Value is the candidate's figure for a requirement; ok is false where its runs have none.
func (f Figures) Value(r Requirement) (float64, bool) {
	var v float64
	var ok bool
	switch r.Where {
	case Steady:
		v, ok = f.AtRate[r.Metric]
	case Crash:
		v, ok = f.Crash[r.Metric]
		ok = ok && f.Crashes > 0
	case Bill:
		v, ok = f.USD(), f.Priced
	}
	return v, ok && !math.IsNaN(v)
}

// Shortfall is a requirement a candidate does not meet, and its figure.
type Shortfall struct {
	Requirement string  `json:"requirement"`
	Metric      string  `json:"metric"`
	Value       float64 `json:"value"`
	// Bound is "at least " or "at most " where Value is one end of a bill with a bound in it.
	Bound string `json:"bound,omitempty"`
	Text  string `json:"text"` // "p95_ms 130 ms (wants < 100ms)"
	// By is how far the figure is from the bound, as a share of the bound (0.3: 30% over); +Inf
	// where the bound is 0 (JSON: null).
	By float64 `json:"-"`
}

// MarshalJSON writes By as a number, or null where it is unbounded.
func (s Shortfall) MarshalJSON() ([]byte, error) {
	type plain Shortfall
	var by *float64
	if !math.IsInf(s.By, 0) && !math.IsNaN(s.By) {
		by = &s.By
	}
	return json.Marshal(struct {
		plain
		By *float64 `json:"by"`
	}{plain(s), by})
}

// Verdict is a candidate judged by every requirement.
type Verdict struct {
	Candidate Candidate   `json:"candidate"`
	Figures   Figures     `json:"figures"`
	Meets     bool        `json:"meets"`
	Fails     []Shortfall `json:"fails,omitempty"`
	// Unjudged are requirements the candidate's runs carry no figure for: it cannot be said to meet them.
	Unjudged []string `json:"unjudged,omitempty"`
	// Frontier: no other candidate is at least as good on p95, lost writes and cost, and better on one.
	Frontier bool `json:"frontier"`
}

// Judge judges one candidate's figures by the requirements.
func Judge(c Candidate, f Figures, reqs []Requirement) Verdict {
	v := Verdict{Candidate: c, Figures: f}
	for _, r := range reqs {
		x, ok := f.Value(r)
		bound := ""
		if ok && r.Where == Bill && f.AtMostUSD > 0 {
			// A bill somewhere between the rest and the whole: an order judged where both ends
			// agree, and missed by the end nearer the bound; an equality never told.
			low := x - f.AtMostUSD
			ordered := r.Op == "<" || r.Op == "<=" || r.Op == ">" || r.Op == ">="
			switch {
			case ordered && r.Holds(x) && r.Holds(low):
				continue
			case ordered && !r.Holds(x) && !r.Holds(low):
				if r.Op == "<" || r.Op == "<=" {
					x, bound = low, "at least "
				} else {
					bound = "at most "
				}
			default:
				v.Unjudged = append(v.Unjudged, r.Text)
				continue
			}
		}
		switch {
		case !ok:
			v.Unjudged = append(v.Unjudged, r.Text)
		case !r.Holds(x):
			v.Fails = append(v.Fails, Shortfall{Requirement: r.Text, Metric: r.Metric, Value: x, Bound: bound, By: shortBy(r, x), Text: shortfallText(r, bound, x, f.Crashes)})
		}
	}
	v.Meets = len(v.Fails) == 0 && len(v.Unjudged) == 0
	return v
}

// shortfallText says a missed requirement in words: what the figure was, and what was wanted.
func shortfallText(r Requirement, bound string, x float64, crashes int) string {
	switch r.Metric {
	case MetricLostAcked:
		return fmt.Sprintf("a crash lost %.0f acknowledged writes (of %d crashes, the worst; wants %s)", x, crashes, r.Text)
	case MetricLostWindow:
		return fmt.Sprintf("a crash lost a write acknowledged %s before it (wants %s)", fmtMs(x), r.Text)
	}
	return fmt.Sprintf("%s is %s%s (wants %s)", r.Metric, bound, formatValue(r.Metric, x), r.Text)
}

// figure is the shortfall's figure, short, for a table's cell: "130 ms", "192 lost", "$25.10".
func (s Shortfall) figure() string {
	switch s.Metric {
	case MetricLostAcked:
		return fmt.Sprintf("%.0f lost", s.Value)
	case MetricLostWindow:
		if s.Value >= 1000 {
			return fmt.Sprintf("lost one acked %.1f s before", s.Value/1000)
		}
		return "lost one acked " + fmtMs(s.Value) + " before"
	}
	return s.Bound + formatValue(s.Metric, s.Value)
}

// shortBy is how far x misses r's bound, relative to the bound.
func shortBy(r Requirement, x float64) float64 {
	if r.Value == 0 {
		if x == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(x-r.Value) / math.Abs(r.Value)
}

// Rank judges every runnable candidate (not excluded, not dominated) and orders them: those meeting every requirement first,
// cheapest first (then lowest p95); then the rest by how many requirements they fail, how far,
// and cost. Excluded and dominated candidates are left out (the caller lists them apart).
func Rank(cands []Candidate, figs map[string]Figures, reqs []Requirement, latency string) []Verdict {
	var out []Verdict
	for _, c := range cands {
		if !c.runnable() {
			continue
		}
		out = append(out, Judge(c, figs[c.Name], reqs))
	}
	markFrontier(out, latency)
	usd := func(v Verdict) float64 {
		if !v.Figures.Priced {
			return math.Inf(1)
		}
		return v.Figures.USD()
	}
	lat := func(v Verdict) float64 {
		if x, ok := v.Figures.AtRate[latency]; ok {
			return x
		}
		return math.Inf(1)
	}
	worst := func(v Verdict) float64 {
		w := 0.0
		for _, s := range v.Fails {
			w = max(w, s.By)
		}
		return w
	}
	// Against a bound of 0 every miss is infinitely far: at one price, the figures themselves order
	// them (a crash losing 1 acknowledged write before one losing 718).
	beyondZero := func(v Verdict) float64 {
		sum := 0.0
		for _, s := range v.Fails {
			if math.IsInf(s.By, 1) {
				sum += math.Abs(s.Value)
			}
		}
		return sum
	}
	slices.SortStableFunc(out, func(a, b Verdict) int {
		if a.Meets != b.Meets {
			if a.Meets {
				return -1
			}
			return 1
		}
		if !a.Meets {
			if c := cmp.Compare(len(a.Fails)+len(a.Unjudged), len(b.Fails)+len(b.Unjudged)); c != 0 {
				return c
			}
			if c := cmp.Compare(worst(a), worst(b)); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(usd(a), usd(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(beyondZero(a), beyondZero(b)); c != 0 {
			return c
		}
		return cmp.Compare(lat(a), lat(b))
	})
	return out
}

// markFrontier marks the verdicts no other dominates on latency at the rate, acknowledged writes
// lost and the bill (lower is better on each; a missing figure counts as worst).
func markFrontier(vs []Verdict, latency string) {
	point := func(v Verdict) [3]float64 {
		p := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
		if x, ok := v.Figures.AtRate[latency]; ok {
			p[0] = x
		}
		if x, ok := v.Figures.Crash[MetricLostAcked]; ok && v.Figures.Crashes > 0 {
			p[1] = x
		}
		if v.Figures.Priced {
			p[2] = v.Figures.USD()
		}
		return p
	}
	for i := range vs {
		pi := point(vs[i])
		vs[i].Frontier = true
		for j := range vs {
			if i == j {
				continue
			}
			pj := point(vs[j])
			if pj[0] <= pi[0] && pj[1] <= pi[1] && pj[2] <= pi[2] && pj != pi {
				vs[i].Frontier = false
				break
			}
		}
	}
}
