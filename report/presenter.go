package report

import (
	"io"

	"persistlab/lib/registry"
	"persistlab/results"
)

// Presenter is how one workload's results are shown: its tables, charts and the metrics a
// comparison rates. Workloads without one get the generic table of every metric's median.
type Presenter struct {
	// Tables prints the workload's own tables; the report adds the published numbers beside ours,
	// the bucket's use and cost, and failures.
	Tables func(w io.Writer, r *results.Results)
	Charts func(r *results.Results) ([]Chart, error)
	// Compare lists the metrics `compare` rates, in order.
	Compare []CompareMetric
	// Work is the unit the bucket's requests and cost are counted per.
	Work WorkUnit
	// Summarize derives what the workload's tables need beyond medians (seed 000's slopes).
	Summarize func(r *results.Results)
	// Differences says, after the seed's numbers beside ours, what still differs and why.
	Differences func(w io.Writer, r *results.Results)
	// Beside prints, after a comparison's table, what the presenter derives for A and B side by
	// side (seed 000's slopes).
	Beside func(w io.Writer, a, b *results.Results)
	// Answer fills the run's answer with the workload's question and findings (the seed's claims
	// judged), and caveats only it knows; report adds what every run says alike (a burst bucket
	// a run never drained among them). Without it, the backends are ranked by Compare's first.
	Answer func(r *results.Results, a *Answer)
	// Family names what the cells measure, where several workloads measure alike (the counter
	// and any app under the same HTTP load), so compare can set their runs side by side.
	Family string
}

// CompareMetric is a metric `compare` rates, and which way is better.
type CompareMetric struct {
	Name         string
	HigherBetter bool
}

// WorkUnit is what a workload's bucket use is counted per: one app request, one GiB moved.
type WorkUnit struct {
	Name  string                       // "app request", "GiB moved"
	Units func(c results.Cell) float64 // how many units a cell did
	// Tables show requests per Scale units (Label: "1,000 app requests") and cost per CostScale
	// units (CostLabel: "1M req").
	Scale     float64
	Label     string
	CostScale float64
	CostLabel string
	// BytesPerUnit is the bytes one unit of work stands for (a GiB moved: 1 GiB), 0 where a unit
	// has no size (an app request); with it, a run whose bucket moved far more than its work is
	// not priced per unit (supports).
	BytesPerUnit float64
}

// MaxExtrapolation bounds how far a price per unit of work may reach beyond what a run did: a
// run that did under 1/MaxExtrapolation of the price's unit while the bucket moved over
// MaxExtrapolation times the work's bytes (a 4 KiB write for which gcsfuse downloads and uploads
// a whole 1 GiB object) is priced per second, not per unit.
const MaxExtrapolation = 1000

// supports says whether a run that did units of work while the bucket moved bucketBytes can be
// priced per unit.
func (u WorkUnit) supports(units, bucketBytes float64) bool {
	if u.BytesPerUnit <= 0 {
		return true
	}
	tiny := units < max(u.CostScale, 1)/MaxExtrapolation
	return !tiny || bucketBytes <= MaxExtrapolation*units*u.BytesPerUnit
}

func (u WorkUnit) units(c results.Cell) float64 {
	if u.Units == nil {
		return 0
	}
	return u.Units(c)
}

var presenters = registry.New[Presenter]("presenter for workload")

// RegisterPresenter sets how a workload's results are shown; a second registration panics.
func RegisterPresenter(workload string, p Presenter) { presenters.Register(workload, p) }

// PresenterWorkloads lists the workloads with a presenter of their own, sorted.
func PresenterWorkloads() []string { return presenters.Names() }

// Comparable says whether runs of workloads a and b measure the same things: one workload, or
// two of one presenter family (the Go counter and an app under the same HTTP load).
func Comparable(a, b string) bool {
	pa, _ := presenters.Get(a)
	pb, _ := presenters.Get(b)
	return a == b || (pa.Family != "" && pa.Family == pb.Family)
}

// presenterOf is r's workload's presenter, or the generic one.
func presenterOf(r *results.Results) Presenter {
	p, ok := presenters.Get(r.WorkloadType())
	if !ok {
		return Presenter{Tables: writeGenericTable, Charts: genericCharts}
	}
	return p
}
